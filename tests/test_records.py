"""inspector.records: the Record's JSON form and request/response pairing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.protocol import jsonrpc
from inspector.protocol.records import (
    EVENT, FROM_SERVER, INVALID, MESSAGE, STDERR, TO_SERVER, Pairer, Record, RecordError, describe_event,
    from_dict, message_kind, record_server_lines,
)

ROUND_TRIP = [
    Record(MESSAGE, seq=1, t=1764497523.121, dir=TO_SERVER, msg=jsonrpc.request(1, "initialize", {"a": [1, None]})),
    Record(MESSAGE, seq=2, t=1764497523.5, dir=TO_SERVER, msg=jsonrpc.request(2, "tools/call", {}), origin="user"),
    Record(MESSAGE, seq=3, t=1764497524.0, dir=FROM_SERVER, msg=jsonrpc.result_response(1, None)),
    Record(MESSAGE, seq=4, t=1.0, dir=FROM_SERVER, msg=[jsonrpc.notification("n")]),
    Record(STDERR, seq=5, t=2.25, text="INFO ready \x1b[31mred\x1b[0m ünïcode"),
    Record(INVALID, seq=6, t=3.5, dir=FROM_SERVER, raw="Hello \ufffd", error="not JSON (Expecting value)"),
    Record(EVENT, seq=7, t=4.0, event="spawn", detail={"pid": 4242}),
    Record(EVENT, seq=8, t=5.0, event="session-end", detail={}),
    Record(EVENT, seq=9, t=6.0, event="exit", detail={"code": None, "signal": "SIGSEGV", "stderr_tail": ["a", "b"]}),
]


@pytest.mark.parametrize("record", ROUND_TRIP, ids=lambda r: f"{r.kind}-{r.seq}")
def test_round_trip(record):
    data = record.to_dict()
    assert from_dict(data) == record
    line = record.to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert from_dict(json.loads(line)) == record


@pytest.mark.parametrize("record, keys", [
    (ROUND_TRIP[0], {"seq", "t", "kind", "dir", "msg"}),
    (ROUND_TRIP[1], {"seq", "t", "kind", "dir", "msg", "origin"}),
    (ROUND_TRIP[4], {"seq", "t", "kind", "text"}),
    (ROUND_TRIP[5], {"seq", "t", "kind", "dir", "raw", "error"}),
    (ROUND_TRIP[6], {"seq", "t", "kind", "event", "detail"}),
])
def test_to_dict_has_only_the_fields_of_its_kind(record, keys):
    assert set(record.to_dict()) == keys


def test_to_line_is_utf8_literal():
    line = Record(STDERR, seq=1, t=1.0, text="Zürich 零").to_line()
    assert "Zürich 零".encode() in line and b"\\u" not in line


def test_to_line_lone_surrogate():
    # What json.loads makes of a server's "\ud800" escape: recording it must not raise (it would kill the
    # stdout reader thread), and it must read back as the same value.
    msg = jsonrpc.decode_line(b'{"jsonrpc":"2.0","method":"n","params":{"s":"\\udcff"}}').msg
    record = Record(MESSAGE, seq=1, t=1.0, dir=FROM_SERVER, msg=msg)
    line = record.to_line()
    line.decode("utf-8")
    assert from_dict(json.loads(line)) == record


BAD_SHAPES = [
    ([], "JSON object"),
    ("x", "JSON object"),
    ({"kind": "message", "seq": "x", "t": 1.0, "dir": TO_SERVER, "msg": {}}, "seq"),
    ({"kind": "message", "seq": True, "t": 1.0, "dir": TO_SERVER, "msg": {}}, "seq"),
    ({"kind": "message", "seq": 1.5, "t": 1.0, "dir": TO_SERVER, "msg": {}}, "seq"),
    ({"kind": "message", "t": 1.0, "dir": TO_SERVER, "msg": {}}, "seq"),
    ({"kind": "message", "seq": 1, "t": "now", "dir": TO_SERVER, "msg": {}}, "t must"),
    ({"kind": "message", "seq": 1, "t": False, "dir": TO_SERVER, "msg": {}}, "t must"),
    ({"kind": "message", "seq": 1, "t": 1.0, "msg": {}}, "dir"),
    ({"kind": "message", "seq": 1, "t": 1.0, "dir": "sideways", "msg": {}}, "dir"),
    ({"kind": "invalid", "seq": 1, "t": 1.0, "raw": "x", "error": "y"}, "dir"),
    ({"kind": "bogus", "seq": 1, "t": 1.0}, "kind"),
    ({"seq": 1, "t": 1.0, "text": "x"}, "kind"),
    ({"kind": "header", "format": "mcp-inspect-recording"}, "kind"),
    ({"kind": "event", "seq": 1, "t": 1.0, "detail": {}}, "event"),
    ({"kind": "event", "seq": 1, "t": 1.0, "event": 5, "detail": {}}, "event"),
    ({"kind": "event", "seq": 1, "t": 1.0, "event": "spawn", "detail": [1]}, "event"),
]


@pytest.mark.parametrize("obj, words", BAD_SHAPES, ids=[str(i) for i in range(len(BAD_SHAPES))])
def test_from_dict_rejects_wrong_shapes(obj, words):
    with pytest.raises(RecordError, match=words):
        from_dict(obj)


@pytest.mark.parametrize("t", [10 ** 400, -(10 ** 400)], ids=["1e400", "-1e400"])
def test_from_dict_huge_time_is_a_record_error(t):
    # json.loads accepts integers of any size; float() of one raises OverflowError, which the recording reader
    # does not catch, so one hostile line would make a whole recording unreadable.
    with pytest.raises(RecordError):
        from_dict({"kind": "stderr", "seq": 1, "t": t, "text": "x"})


def test_from_dict_drops_wrongly_typed_optional_fields():
    record = from_dict({"kind": "stderr", "seq": 1, "t": 1, "text": 5, "origin": ["x"]})
    assert record.text is None and record.origin is None and record.t == 1.0
    record = from_dict({"kind": "stderr", "seq": 1, "t": 1, "text": "x", "detail": {"a": 1}})
    assert record.detail == {}


@pytest.mark.parametrize("record, kind", [
    (ROUND_TRIP[0], "request"), (ROUND_TRIP[2], "response"), (ROUND_TRIP[3], "batch"), (ROUND_TRIP[4], "stderr"),
    (ROUND_TRIP[5], "invalid"), (ROUND_TRIP[6], "event"),
    (Record(MESSAGE, dir=FROM_SERVER, msg=jsonrpc.error_response(1, -1, "x")), "error"),
    (Record(MESSAGE, dir=FROM_SERVER, msg=jsonrpc.notification("n")), "notification"),
])
def test_message_kind(record, kind):
    assert message_kind(record) == kind


# ------------------------------------------------------------------------------------------- property

JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
TIMES = st.floats(min_value=0, max_value=4e9, allow_nan=False).map(lambda x: round(x, 6))
SEQS = st.integers(min_value=0, max_value=2**53)
DIRS = st.sampled_from([TO_SERVER, FROM_SERVER])

RECORDS = st.one_of(
    st.builds(Record, kind=st.just(MESSAGE), seq=SEQS, t=TIMES, dir=DIRS, msg=JSON_VALUES,
              origin=st.none() | st.just("user")),
    st.builds(Record, kind=st.just(STDERR), seq=SEQS, t=TIMES, text=st.text()),
    st.builds(Record, kind=st.just(INVALID), seq=SEQS, t=TIMES, dir=DIRS, raw=st.text(), error=st.text()),
    st.builds(Record, kind=st.just(EVENT), seq=SEQS, t=TIMES, event=st.text(min_size=1),
              detail=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)),
)


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_any_record_round_trips_through_a_line(record):
    line = record.to_line()
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert from_dict(json.loads(line.decode("utf-8"))) == record


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({"kind": st.sampled_from([MESSAGE, STDERR, INVALID, EVENT]), "seq": SEQS, "t": TIMES},
                             optional={"dir": DIRS | JSON_LEAVES, "msg": JSON_VALUES, "text": JSON_LEAVES,
                                       "raw": JSON_LEAVES, "error": JSON_LEAVES, "event": st.text() | JSON_LEAVES,
                                       "detail": JSON_VALUES, "origin": JSON_LEAVES, "extra": JSON_VALUES}))
def test_any_dict_is_refused_or_normalised_stably(obj):
    """from_dict on any JSON object raises RecordError or gives a Record whose line reads back the same."""
    try:
        record = from_dict(obj)
    except RecordError:
        return
    again = from_dict(json.loads(record.to_line()))
    assert again.to_dict() == record.to_dict()


# --------------------------------------------------------------------------------------------- pairing

class Feed:
    """Feeds records with increasing seq to a Pairer."""

    def __init__(self) -> None:
        self.pairer = Pairer()
        self.seq = 0

    def __call__(self, direction: str | None, msg=None, t: float = 0.0, *, kind: str = MESSAGE, **fields):
        self.seq += 1
        record = Record(kind, seq=self.seq, t=t, dir=direction, msg=msg, **fields)
        return self.pairer.observe(record)


def test_request_response_pairing_with_latency():
    feed = Feed()
    first = feed(TO_SERVER, jsonrpc.request(1, "tools/list"), t=100.0)
    assert first.method == "tools/list" and first.pair_seq is None and not first.unmatched
    answer = feed(FROM_SERVER, jsonrpc.result_response(1, {"tools": []}), t=100.25)
    assert answer.pair_seq == 1
    assert answer.method == "tools/list"
    assert answer.latency_ms == pytest.approx(250.0)
    assert not answer.late and not answer.unmatched


def test_each_direction_has_its_own_id_space():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(1, "tools/call"), t=1.0)                 # seq 1: ours, id 1
    feed(FROM_SERVER, jsonrpc.request(1, "sampling/createMessage"), t=1.1)   # seq 2: the server's, id 1
    ours_answered = feed(TO_SERVER, jsonrpc.result_response(1, {"x": 1}), t=1.2)  # we answer the server
    assert (ours_answered.pair_seq, ours_answered.method) == (2, "sampling/createMessage")
    theirs = feed(FROM_SERVER, jsonrpc.result_response(1, {}), t=1.5)      # the server answers us
    assert (theirs.pair_seq, theirs.method) == (1, "tools/call")
    assert theirs.latency_ms == pytest.approx(500.0)


def test_server_answers_first_when_both_are_open():
    feed = Feed()
    feed(FROM_SERVER, jsonrpc.request(1, "roots/list"))
    feed(TO_SERVER, jsonrpc.request(1, "ping"))
    assert feed(FROM_SERVER, jsonrpc.result_response(1, {})).pair_seq == 2
    assert feed(TO_SERVER, jsonrpc.result_response(1, {"roots": []})).pair_seq == 1


def test_error_response_pairs():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(9, "nope"), t=5.0)
    pairing = feed(FROM_SERVER, jsonrpc.error_response(9, -32601, "Method not found"), t=5.01)
    assert pairing.pair_seq == 1 and pairing.method == "nope" and not pairing.unmatched


@pytest.mark.parametrize("request_id, response_id, pairs", [
    (0, 0, True), ("0", "0", True), ("", "", True), ("abc", "abc", True),
    (1, "1", False), ("1", 1, False), (1, True, False), (0, False, False), (0, None, False), (None, None, False),
])
def test_ids_pair_by_value_and_type(request_id, response_id, pairs):
    feed = Feed()
    feed(TO_SERVER, {"jsonrpc": "2.0", "id": request_id, "method": "m"})
    pairing = feed(FROM_SERVER, {"jsonrpc": "2.0", "id": response_id, "result": {}})
    assert (pairing.pair_seq == 1) is pairs
    assert pairing.unmatched is not pairs


def test_unmatched_and_duplicate_responses():
    feed = Feed()
    assert feed(FROM_SERVER, jsonrpc.result_response(99, {})).unmatched
    feed(TO_SERVER, jsonrpc.request(1, "ping"))
    assert feed(FROM_SERVER, jsonrpc.result_response(1, {})).pair_seq == 2
    again = feed(FROM_SERVER, jsonrpc.result_response(1, {}))
    assert again.unmatched and again.pair_seq is None


def test_response_in_the_same_direction_as_the_request_does_not_pair():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(1, "ping"))
    assert feed(TO_SERVER, jsonrpc.result_response(1, {})).unmatched


def test_late_response_after_timeout_is_flagged():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(5, "tools/call"), t=10.0)
    feed(TO_SERVER, jsonrpc.request(6, "ping"), t=10.0)
    assert feed(None, kind=EVENT, event="timeout", detail={"id": 5, "method": "tools/call"}).pair_seq is None
    late = feed(FROM_SERVER, jsonrpc.result_response(5, {"content": []}), t=12.0)
    assert late.late and late.pair_seq == 1 and late.latency_ms == pytest.approx(2000.0)
    on_time = feed(FROM_SERVER, jsonrpc.result_response(6, {}), t=12.0)
    assert not on_time.late and on_time.pair_seq == 2


def test_timeout_for_an_unknown_or_string_id_flags_nothing():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(5, "tools/call"))
    feed(None, kind=EVENT, event="timeout", detail={"id": "5"})
    feed(None, kind=EVENT, event="timeout", detail={})
    assert not feed(FROM_SERVER, jsonrpc.result_response(5, {})).late


def test_notifications_and_other_records_do_not_pair():
    feed = Feed()
    assert feed(FROM_SERVER, jsonrpc.notification("notifications/message")).method == "notifications/message"
    assert feed(None, kind=STDERR, text="x").pair_seq is None
    assert feed(FROM_SERVER, kind=INVALID, raw="x", error="y").pair_seq is None
    assert feed(FROM_SERVER, [jsonrpc.result_response(1, {})]).unmatched is False  # a batch: not paired


def test_forget_drops_open_requests():
    feed = Feed()
    feed(TO_SERVER, jsonrpc.request(1, "tools/call"))
    feed.pairer.forget()
    assert feed(FROM_SERVER, jsonrpc.result_response(1, {})).unmatched


@pytest.mark.parametrize("event, detail, text", [
    ("spawn", {"pid": 7}, "server started, pid 7"),
    ("handshake", {"serverInfo": {"name": "s", "version": "1"}, "protocolVersion": "2025-11-25", "era": "legacy"},
     "handshake done: s 1, protocol 2025-11-25 (legacy era)"),
    ("exit", {"signal": 9}, "server exited with signal 9"),
    ("exit", {"reason": "closed"}, "disconnected: closed"),
    ("restart", {"reason": "file changed", "paths": ["/x/server.py"]},
     "restarting the server (file changed: server.py)"),
    ("warning", {"rule": "batch", "seq": 4, "text": "t"}, "⚠ batch on #4: t"),
    ("something-new", {"a": 1}, 'something-new {"a": 1}'),  # unknown events are shown, not hidden
])
def test_describe_event_is_one_table_of_the_known_events(event, detail, text):
    assert describe_event(event, detail) == text


class BatchSink:
    """Keeps what `record_server_lines` hands over: the records of each read."""

    def __init__(self) -> None:
        self.batches: list[list[Record]] = []

    def add_batch(self, records: list[Record]) -> list[Record]:
        self.batches.append(records)
        return records


@pytest.mark.parametrize("odd", ["a\u2028b", "a\x7fb", "a\x9bb"])
def test_the_lines_of_one_read_keep_their_bytes_unless_that_line_needs_escaping(odd):
    """The lines of a read are checked at once for what the recording must escape; one line holding it (raw U+2028,
    DEL, a C1 control) is encoded with it escaped, while the read's other lines are still written as they came."""
    clean = [b'{"jsonrpc": "2.0", "method": "n", "params": {"i": %d}}' % i for i in range(4)]
    line = json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"s": odd}}, ensure_ascii=False).encode()
    sink = BatchSink()
    decoded = record_server_lines(sink, clean[:2] + [line] + clean[2:])
    assert [d.kind for d, _ in decoded] == ["notification"] * 5
    assert [r.wire for r in sink.batches[0]] == clean[:2] + [None] + clean[2:]
    assert json.loads(sink.batches[0][2].to_line())["msg"]["params"]["s"] == odd
    record_server_lines(sink, clean)
    assert [r.wire for r in sink.batches[1]] == clean
