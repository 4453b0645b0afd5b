"""inspector.store: seq numbering, record-first writes, filters and search over the whole session, cursors."""

from __future__ import annotations

import json
import threading
import time

import pytest

from factories import event, invalid, received, sent, stderr, write_deep_recording
from inspector.protocol import jsonrpc
from inspector.recording import format as limits
from inspector.recording.files import RecordingWriter, read_recording
from inspector.recording.store import Filters, Store


@pytest.fixture
def store():
    writer = RecordingWriter.spool()
    yield Store(writer)
    writer.close()


def recorded_seqs(store: Store) -> list[int]:
    return [json.loads(line)["seq"] for _, line in store.writer.read_all_lines()]


def fill(store: Store) -> dict[str, int]:
    """A small session with one of everything; returns seq by name."""
    seqs = {}
    for name, record in [
        ("spawn", event("spawn", {"pid": 42})),
        ("init", sent(jsonrpc.request(1, "initialize", {"clientInfo": {"name": "mcp-inspect"}}), t=10.0)),
        ("stderr", stderr("Démarrage du serveur: PRÊT")),
        ("init_ok", received(jsonrpc.result_response(1, {"serverInfo": {"name": "demo"}}), t=10.1)),
        ("list", sent(jsonrpc.request(2, "tools/list"), t=11.0)),
        ("log", received(jsonrpc.notification("notifications/message", {"data": "Zürich"}))),
        ("list_ok", received(jsonrpc.result_response(2, {"tools": [{"name": "ÉCOLE"}]}), t=11.5)),
        ("junk", invalid("Hello", "not JSON")),
        ("call", sent(jsonrpc.request(3, "tools/call", {"name": "echo"}), t=12.0)),
        ("call_err", received(jsonrpc.error_response(3, -32602, "bad arguments"), t=12.2)),
        ("stderr2", stderr("bye")),
    ]:
        seqs[name] = store.add(record).seq
    return seqs


def seqs_of(rows) -> list[int]:
    return [row.seq for row in rows]


# ---------------------------------------------------------------------------------------------- numbering

def test_seq_and_time_are_assigned(store):
    before = time.time()
    record = store.add(stderr("x"))
    assert record.seq == 1 and before <= record.t <= time.time()
    assert store.add(stderr("y", t=5.0)).t == 5.0  # a given time is kept
    assert store.last_seq == 2 and len(store) == 2


def test_concurrent_adds_get_unique_increasing_seqs_in_file_order(store):
    threads, per_thread = 8, 250
    got: list[list[int]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def worker(n: int) -> None:
        start.wait()
        for i in range(per_thread):
            kind = i % 3
            if kind == 0:
                record = stderr(f"t{n} line {i}")
            elif kind == 1:
                record = sent(jsonrpc.request(n * 10000 + i, "ping"))
            else:
                record = received(jsonrpc.result_response(n * 10000 + i - 1, {"n": "é" * (i % 50)}))
            got[n].append(store.add(record).seq)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    total = threads * per_thread
    everything = [seq for seqs in got for seq in seqs]
    assert sorted(everything) == list(range(1, total + 1))
    for seqs in got:
        assert seqs == sorted(seqs)  # each thread saw its own records numbered in order
    assert recorded_seqs(store) == list(range(1, total + 1))  # the file is in seq order, one line each
    rows, cursor = store.since(0, Filters(), total + 10)
    assert seqs_of(rows) == list(range(1, total + 1)) and cursor == total


def test_records_read_back_from_the_file(store):
    seqs = fill(store)
    record = store.record(seqs["list_ok"])
    assert record.msg == jsonrpc.result_response(2, {"tools": [{"name": "ÉCOLE"}]})
    assert json.loads(store.raw_line(seqs["stderr"]))["text"] == "Démarrage du serveur: PRÊT"
    assert store.record(999) is None and store.raw_line(999) is None and store.row(999) is None


def test_store_on_a_real_recording_file(tmp_path):
    writer = RecordingWriter.create(tmp_path / "a.jsonl")
    real = Store(writer)
    try:
        seqs = fill(real)
        assert read_recording(tmp_path / "a.jsonl").records[-1].seq == seqs["stderr2"]
        assert real.record(seqs["call"]).msg["method"] == "tools/call"  # row expansion reads the file back
        assert seqs_of(real.newest(Filters(q="echo"), 10)) == [seqs["call"]]
    finally:
        writer.close()


def test_lone_surrogate_from_a_server_is_stored(store):
    # A server line with the JSON escape "\ud800" decodes fine; storing it must not raise (in the inspector it
    # is the stdout reader thread that calls add, and an exception there ends all reading from the server).
    decoded = jsonrpc.decode_line(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\\ud800"}}')
    record = store.add(received(decoded.msg))
    assert store.record(record.seq).msg == decoded.msg
    assert store.add(stderr("next")).seq == record.seq + 1


def test_closed_store_takes_no_more_records(store):
    store.add(stderr("x"))
    store.close()
    late = store.add(stderr("after"))
    assert late.seq == 0 and store.last_seq == 1 and recorded_seqs(store) == [1]


# ----------------------------------------------------------------------------------------------- pairing

def test_request_row_gets_pair_seq_when_the_response_arrives(store):
    request = store.add(sent(jsonrpc.request(0, "tools/list"), t=100.0))
    assert store.row(request.seq).pair_seq is None
    response = store.add(received(jsonrpc.result_response(0, {}), t=100.125))
    request_row, response_row = store.row(request.seq), store.row(response.seq)
    assert request_row.pair_seq == response.seq
    assert response_row.pair_seq == request.seq
    assert response_row.method == "tools/list" and response_row.kind == "response"
    assert response_row.latency_ms == pytest.approx(125.0)
    assert request_row.id_text == "0" and not response_row.unmatched


def test_late_and_unmatched_rows(store):
    store.add(sent(jsonrpc.request(7, "tools/call"), t=1.0))
    store.add(event("timeout", {"id": 7, "method": "tools/call", "after_s": 0.5}))
    late = store.add(received(jsonrpc.result_response(7, {}), t=3.0))
    stray = store.add(received(jsonrpc.result_response("7", {})))
    assert store.row(late.seq).late and store.row(late.seq).pair_seq == 1
    assert store.row(stray.seq).unmatched and store.row(stray.seq).pair_seq is None
    assert store.row(stray.seq).id_text == '"7"'


# ----------------------------------------------------------------------------------------------- filters

@pytest.mark.parametrize("filters, names", [
    (Filters(), None),
    (Filters(dir="to_server"), ["init", "list", "call"]),
    (Filters(dir="from_server"), ["stderr", "init_ok", "log", "list_ok", "junk", "call_err", "stderr2"]),
    (Filters(dir="from_server", stderr=False), ["init_ok", "log", "list_ok", "junk", "call_err"]),
    (Filters(stderr=False), ["spawn", "init", "init_ok", "list", "log", "list_ok", "junk", "call", "call_err"]),
    (Filters(kind="request"), ["init", "list", "call"]),
    (Filters(kind="response"), ["init_ok", "list_ok"]),
    (Filters(kind="error"), ["call_err"]),
    (Filters(kind="notification"), ["log"]),
    (Filters(kind="invalid"), ["junk"]),
    (Filters(kind="event"), ["spawn"]),
    (Filters(kind="stderr"), ["stderr", "stderr2"]),
    (Filters(method="tools/"), ["list", "list_ok", "call", "call_err"]),  # responses carry their request's method
    (Filters(method="TOOLS/CALL"), ["call", "call_err"]),
    (Filters(method="notifications"), ["log"]),
    (Filters(kind="response", method="initialize"), ["init_ok"]),
    (Filters(q="zürich"), ["log"]),
    (Filters(q="prêt"), ["stderr"]),
    (Filters(q="BAD ARGUMENTS"), ["call_err"]),
    (Filters(q="hello"), ["junk"]),
    (Filters(q="mcp-inspect"), ["init"]),
    (Filters(q="demo", dir="to_server"), []),
    (Filters(q="nothing like this"), []),
], ids=lambda value: repr(value) if isinstance(value, Filters) else None)
def test_filters(store, filters, names):
    seqs = fill(store)
    expected = sorted(seqs.values()) if names is None else [seqs[name] for name in names]
    assert seqs_of(store.newest(filters, 100)) == expected
    rows, cursor = store.since(0, filters, 100)
    assert seqs_of(rows) == expected and cursor == store.last_seq


@pytest.mark.parametrize("q, name", [("ÉCOLE", "list_ok"), ("école", "list_ok"), ("ZÜRICH", "log"),
                                     ("démarrage du serveur: prêt", "stderr")])
def test_search_is_case_insensitive_beyond_ascii(store, q, name):
    seqs = fill(store)
    assert seqs_of(store.newest(Filters(q=q), 100)) == [seqs[name]]


def test_search_covers_the_whole_session_not_a_page(store):
    needle = store.add(stderr("needle-ü"))
    for i in range(300):
        store.add(stderr(f"hay {i}"))
    assert seqs_of(store.newest(Filters(q="NEEDLE-Ü"), 5)) == [needle.seq]
    assert seqs_of(store.newest(Filters(q="hay"), 3)) == [299, 300, 301]


@pytest.mark.parametrize("data, expected", [
    ({}, Filters()),
    ({"dir": "to_server", "kind": "request", "method": "tools/", "q": "x", "stderr": "on"},
     Filters(dir="to_server", kind="request", method="tools/", q="x")),
    ({"dir": "sideways", "kind": "bogus"}, Filters()),
    ({"filtered": True}, Filters(stderr=False)),  # a filter form without the checkbox ticked
    ({"filtered": True, "stderr": "on"}, Filters()),
    ({"stderr": "off"}, Filters(stderr=False)),
    ({"method": "m" * 1000, "q": "q" * 1000}, Filters(method="m" * 200, q="q" * 500)),
])
def test_filters_from_mapping(data, expected):
    assert Filters.from_mapping(data) == expected


# ------------------------------------------------------------------------------------------------ paging

def test_newest_with_before(store):
    for i in range(10):
        store.add(stderr(f"line {i}"))
    assert seqs_of(store.newest(Filters(), 3)) == [8, 9, 10]
    assert seqs_of(store.newest(Filters(), 3, before=5)) == [2, 3, 4]
    assert seqs_of(store.newest(Filters(), 3, before=3)) == [1, 2]
    assert store.newest(Filters(), 3, before=1) == []
    assert seqs_of(store.newest(Filters(), 100, before=11)) == list(range(1, 11))
    assert seqs_of(store.newest(Filters(q="line 1"), 5, before=10)) == [2]


def test_since_cursor_pages_without_gaps_or_duplicates(store):
    for i in range(1, 31):
        store.add(stderr(f"line {i}") if i % 3 else sent(jsonrpc.request(i, "ping")))
    wanted = [seq for seq in range(1, 31) if seq % 3 == 0]
    for filters, expected in ((Filters(), list(range(1, 31))), (Filters(kind="request"), wanted)):
        got, cursor, calls = [], 0, 0
        while True:
            rows, cursor = store.since(cursor, filters, 4)
            calls += 1
            if not rows:
                break
            assert len(rows) <= 4
            got += seqs_of(rows)
        assert got == expected
        assert cursor == 30 and calls < 20
    rows, cursor = store.since(30, Filters(), 10)
    assert rows == [] and cursor == 30
    rows, cursor = store.since(4, Filters(), 2)
    assert seqs_of(rows) == [5, 6] and cursor == 6


def test_wait_wakes_on_a_new_row(store):
    store.add(stderr("x"))
    woke = threading.Event()
    seen, signals = store.last_seq, store.signal_seq  # read here: the thread may start after "y" is added

    def waiter() -> None:
        store.wait(seen, signals, 60.0)
        woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    store.add(stderr("y"))
    assert woke.wait(6.0)  # ten times below the wait's own timeout: it was woken, not timed out
    thread.join()
    started = time.monotonic()
    store.wait(0, 0, 5.0)  # already newer: returns at once
    assert time.monotonic() - started < 0.5


# ------------------------------------------------------------------------------------------------ signals

def test_signals_since_dedupes_in_order(store):
    for name in ("server", "tools", "server", "call:1", "tools"):
        store.signal(name)
    assert store.signals_since(0) == (["server", "tools", "call:1"], 5)
    assert store.signals_since(2) == (["server", "call:1", "tools"], 5)
    assert store.signals_since(5) == ([], 5)
    assert store.signal_seq == 5


def test_signals_since_overflow_gives_none(store):
    for i in range(2001):
        store.signal(f"call:{i % 7}")
    names, newest = store.signals_since(0)
    assert names is None and newest == 2001  # signal 1 was dropped: the caller must re-render everything
    names, newest = store.signals_since(1)
    assert sorted(names) == sorted(f"call:{i}" for i in range(7)) and newest == 2001
    assert store.signals_since(2001) == ([], 2001)


def test_signals_since_exactly_full_is_not_overflow(store):
    for _ in range(2000):
        store.signal("server")
    assert store.signals_since(0) == (["server"], 2000)


# ------------------------------------------------------------------------------------ one reader for view

HEAD_LINE = json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1,
                        "target": {"command": ["s"]}}).encode() + b"\n"


def damaged(with_header: bool = True) -> bytes:
    """One of every damage a reader skips: the same bytes go to read_recording and to the view's Store."""
    def line(seq, text):
        return stderr(text, seq=seq, t=float(seq)).to_line()
    return ((HEAD_LINE if with_header else b"")
            + line(1, "one")
            + b"{not json\n"
            + b'{"seq":2,"t":2.0,"kind":"stderr","text":"\xff"}\n'
            + line(1, "seq again")                                  # does not increase
            + line(2, "x" * 3000)                                   # longer than the cap below
            + line(3, "three")
            + b'{"seq":"x","t":1.0,"kind":"stderr"}\n'
            + line(4, "four")
            + b'{"seq":5,"t":5.0,"kind":"std')                      # cut off


def view_of(path):
    writer = RecordingWriter.open_existing(path)
    store = Store(writer)
    try:
        head, problems = store.load_existing()
        return head, problems, [store.record(row.seq) for row in store.rows()], store
    finally:
        writer.close()


def test_view_skips_too_deeply_nested_lines_like_read_recording(tmp_path):
    path = write_deep_recording(tmp_path / "deep.jsonl")
    head, problems, records, _ = view_of(path)  # must not raise RecursionError
    loaded = read_recording(path)
    assert [r.seq for r in records] == [1, 3] and records == loaded.records
    assert problems == loaded.problems and len(problems) == 2 and "nested more than" in problems[0]


@pytest.mark.parametrize("with_header", [True, False])
def test_view_and_read_recording_read_a_damaged_file_the_same(tmp_path, monkeypatch, with_header):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 600)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(damaged(with_header))
    loaded = read_recording(path)
    head, problems, records, _ = view_of(path)
    assert head == loaded.header and (head is not None) == with_header
    assert records == loaded.records and [r.seq for r in records] == [1, 3, 4]
    assert problems == loaded.problems
    n = 1 if with_header else 0  # line numbers move up without the header line
    assert problems == ([] if with_header else
                        ["no header line: not an mcp-inspect recording, or its first line is damaged"]) + [
        f"line {n + 2}: not JSON (Expecting property name enclosed in double quotes), skipped",
        f"line {n + 3}: not UTF-8, skipped",
        f"line {n + 4}: seq 1 does not increase, skipped",
        f"line {n + 5}: longer than 600 bytes, skipped",
        f"line {n + 7}: seq must be an integer, skipped",
        f"line {n + 9}: cut off (no newline at the end of the file), skipped",
    ]


def test_view_of_a_huge_line_without_newline_skips_it_and_search_still_works(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 600)
    monkeypatch.setattr(limits, "BLOCK_BYTES", 256)  # many blocks: the skip crosses block borders
    path = tmp_path / "huge.jsonl"
    path.write_bytes(HEAD_LINE + stderr("needle one", seq=1, t=1.0).to_line() + b"y" * 10_000 + b"\n"
                     + stderr("needle two", seq=2, t=2.0).to_line() + b"z" * 5000)
    loaded = read_recording(path)
    head, problems, records, store = view_of(path)
    assert problems == loaded.problems == ["line 3: longer than 600 bytes, skipped",
                                           "line 5: longer than 600 bytes, skipped"]
    assert [r.text for r in records] == [r.text for r in loaded.records] == ["needle one", "needle two"]
    store.writer = RecordingWriter.open_existing(path)
    try:
        assert seqs_of(store.newest(Filters(q="NEEDLE"), 10)) == [1, 2]
        assert [line for _, line in store.writer.read_all_lines()][1:] == [
            stderr("needle one", seq=1, t=1.0).to_line()[:-1], stderr("needle two", seq=2, t=2.0).to_line()[:-1]]
    finally:
        store.writer.close()
