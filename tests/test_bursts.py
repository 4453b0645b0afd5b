"""protocol/bursts.py (which stderr lines are one burst) and its use: Store rows, the page's burst items, a call's
stderr. Times are the recorded `t`, given here, so nothing depends on machine speed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from factories import event, received, sent, stderr
from inspector.protocol import bursts, jsonrpc
from inspector.recording.files import RecordingWriter
from inspector.recording.store import Store
from inspector.web.stderr_view import BurstRow, call_stderr, timeline_items

SDK_TRACEBACK = [  # what an SDK server logs when a tool raises: a log line, a chained traceback
    "Tool 'fail' raised an unexpected exception",
    "Traceback (most recent call last):",
    '  File "/srv/tools.py", line 12, in fail',
    "    raise ValueError(f\"tool failed {reason}\")",
    "ValueError: tool failed on purpose",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/srv/server.py", line 80, in call_tool',
    "    raise ToolError(...) from exc",
    "mcp.ToolError: Error executing tool fail",
]


def heads(lines: list[tuple[float, str]], start_seq: int = 1) -> list[int]:
    """The burst head of each (t, text) stderr line fed in order."""
    tracker, out = bursts.Bursts(), []
    for offset, (t, text) in enumerate(lines):
        out.append(tracker.observe("stderr", "from_server", start_seq + offset, t, text))
    return out


def test_lines_close_in_time_are_one_burst_and_a_pause_starts_another():
    got = heads([(10.0, "a"), (10.2, "b"), (10.7, "c"), (11.3, "d"), (11.4, "e")])
    assert got == [1, 1, 1, 4, 4]


def test_a_whole_chained_traceback_with_its_log_line_is_one_burst():
    assert heads([(5.0, line) for line in SDK_TRACEBACK]) == [1] * len(SDK_TRACEBACK)


def test_a_second_traceback_starts_a_new_burst():
    first = ["Traceback (most recent call last):", "  File \"x\", line 1", "KeyError: 'a'"]
    got = heads([(5.0, line) for line in first + first])
    assert got == [1, 1, 1, 4, 4, 4]


def test_a_burst_is_cut_at_max_lines():
    got = heads([(1.0, "x")] * (bursts.MAX_LINES + 2))
    assert got[bursts.MAX_LINES - 1] == 1 and got[bursts.MAX_LINES] == bursts.MAX_LINES + 1


@pytest.mark.parametrize("kind, direction, ends", [
    ("message", "to_server", True), ("event", None, True),
    ("message", "from_server", False), ("invalid", "from_server", False)])
def test_what_sits_between_two_lines(kind, direction, ends):
    tracker = bursts.Bursts()
    assert tracker.observe("stderr", "from_server", 1, 1.0, "first") == 1
    assert tracker.observe(kind, direction, 2, 1.0, None) is None
    assert tracker.observe("stderr", "from_server", 3, 1.1, "second") == (3 if ends else 1)


def test_headline_and_exception_lines():
    assert bursts.headline(SDK_TRACEBACK + ["", "  "]) == "mcp.ToolError: Error executing tool fail"
    assert bursts.exception_lines(SDK_TRACEBACK) == ["ValueError: tool failed on purpose",
                                                     "mcp.ToolError: Error executing tool fail"]
    assert bursts.headline([]) == ""


# -- the Store and the page's items ------------------------------------------------------------------------------

@pytest.fixture
def store():
    writer = RecordingWriter.spool()
    yield Store(writer)
    writer.close()


def call_with_traceback(store: Store) -> dict:
    """A tools/call whose answer is recorded in the middle of the traceback the server wrote before it."""
    seqs = {"before": store.add(stderr("server: ready", t=1.0)).seq,
            "request": store.add(sent(jsonrpc.request(4, "tools/call", {"name": "fail"}), t=2.0)).seq}
    for text in SDK_TRACEBACK[:5]:
        store.add(stderr(text, t=2.01))
    seqs["response"] = store.add(received(jsonrpc.result_response(4, {"content": [], "isError": True}), t=2.02)).seq
    for text in SDK_TRACEBACK[5:]:
        store.add(stderr(text, t=2.03))
    seqs["next"] = store.add(sent(jsonrpc.request(5, "ping"), t=2.5)).seq
    seqs["after"] = store.add(stderr("pong, said the server", t=2.51)).seq
    return seqs


def test_store_rows_carry_their_burst_head(store):
    seqs = call_with_traceback(store)
    rows = store.rows()
    burst = [row.burst for row in rows if row.kind == "stderr"]
    first_line = seqs["request"] + 1
    assert burst == [seqs["before"]] + [first_line] * len(SDK_TRACEBACK) + [seqs["after"]]
    assert all(row.burst is None for row in rows if row.kind != "stderr")


def test_a_restart_between_lines_ends_the_burst(store):
    store.add(stderr("one", t=1.0))
    store.add(event("exit", {"code": 1}, t=1.0))
    assert store.add(stderr("two", t=1.0)).seq == store.rows()[-1].burst


def test_timeline_items_show_each_burst_once_whole_even_from_one_line(store):
    seqs = call_with_traceback(store)
    items = timeline_items(store, store.rows())
    kinds = [("burst", item.head) if isinstance(item, BurstRow) else item.seq for item in items]
    first_line = seqs["request"] + 1
    assert kinds == [("burst", seqs["before"]), seqs["request"], ("burst", first_line), seqs["response"],
                     seqs["next"], ("burst", seqs["after"])]
    burst = items[2]
    assert [line.text for line in burst.lines] == SDK_TRACEBACK
    assert burst.headline == "mcp.ToolError: Error executing tool fail"
    assert burst.causes == ["ValueError: tool failed on purpose"]
    # A page that holds only the last line of the burst (a search hit, a page boundary) still shows all of it.
    last_line = store.row(seqs["next"] - 1)
    (only,) = timeline_items(store, [last_line])
    assert isinstance(only, BurstRow) and only.head == first_line and len(only.lines) == len(SDK_TRACEBACK)


def test_a_calls_stderr_includes_the_lines_recorded_after_its_answer(store):
    seqs = call_with_traceback(store)
    call = SimpleNamespace(id=1, state="result", request_seq=seqs["request"], response_seq=seqs["response"])
    found = call_stderr(store, call)
    assert found.count == len(SDK_TRACEBACK) and found.heads == [seqs["request"] + 1]
    assert found.headline == "mcp.ToolError: Error executing tool fail"
    assert "server: ready" not in [line.text for line in found.lines]


def test_a_traceback_recorded_just_after_the_answer_counts(store):
    request = store.add(sent(jsonrpc.request(4, "tools/call", {"name": "fail"}), t=2.0)).seq
    response = store.add(received(jsonrpc.result_response(4, {"content": []}), t=2.01)).seq
    for text in SDK_TRACEBACK:
        store.add(stderr(text, t=2.02))
    call = SimpleNamespace(id=2, state="result", request_seq=request, response_seq=response)
    assert call_stderr(store, call).count == len(SDK_TRACEBACK)
    # Once the answer is older than the gap, a new burst is someone else's.
    late = SimpleNamespace(id=3, state="result", request_seq=request, response_seq=response)
    store2 = Store(RecordingWriter.spool())
    r = store2.add(sent(jsonrpc.request(4, "tools/call", {"name": "x"}), t=2.0)).seq
    a = store2.add(received(jsonrpc.result_response(4, {"content": []}), t=2.01)).seq
    store2.add(stderr("much later", t=2.01 + bursts.GAP_SECONDS + 1))
    late.request_seq, late.response_seq = r, a
    assert call_stderr(store2, late) is None
    store2.writer.close()


def test_a_quiet_call_has_no_stderr(store):
    seqs = call_with_traceback(store)
    request = store.add(sent(jsonrpc.request(6, "tools/call", {"name": "quiet"}), t=5.0)).seq
    response = store.add(received(jsonrpc.result_response(6, {"content": []}), t=5.1)).seq
    store.add(stderr("a line long after", t=9.0))
    call = SimpleNamespace(id=4, state="result", request_seq=request, response_seq=response)
    assert call_stderr(store, call) is None
    assert call_stderr(store, SimpleNamespace(id=5, state="pending", request_seq=seqs["request"],
                                              response_seq=None)) is None


def test_a_finished_call_is_shown_again_while_the_burst_it_ended_in_goes_on():
    from inspector.session.calls import StderrTails

    shown = []
    tails = StderrTails(shown.append)
    call = SimpleNamespace(id=1)
    tails.line("a line before any call ended")
    assert shown == []
    tails.ended(call)
    tails.line("File ...")
    tails.line("ValueError: boom")
    assert shown == [call, call], "each late line of its traceback shows the result again (with the new count)"
    for _ in range(bursts.MAX_LINES):
        tails.line("chatter")
    assert len(shown) == bursts.MAX_LINES, "a server that never pauses is not followed forever"


def test_a_calls_stderr_rendered_by_several_threads_at_once_counts_each_line_once():
    """A call's card is rendered by its long poll and by each live socket at the same time: one scan at a time."""
    import sys
    import threading

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads inside the scan, where two scans would interleave
    try:
        for trial in range(200):
            store = Store(RecordingWriter.spool())
            request = store.add(sent(jsonrpc.request(4, "tools/call", {"name": "x"}), t=2.0)).seq
            answer = store.add(received(jsonrpc.result_response(4, {"content": []}), t=2.01)).seq
            for text in SDK_TRACEBACK:
                store.add(stderr(text, t=2.02))
            call = SimpleNamespace(id=1, state="result", request_seq=request, response_seq=answer)
            renders = [threading.Thread(target=call_stderr, args=(store, call)) for _ in range(4)]
            for render in renders:
                render.start()
            for render in renders:
                render.join()
            found = call_stderr(store, call)
            store.writer.close()
            assert (found.count, len(found.lines)) == (len(SDK_TRACEBACK),) * 2, f"trial {trial}"
    finally:
        sys.setswitchinterval(interval)
