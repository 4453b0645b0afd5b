"""reports/summary.py: what both reports say about a recording, from plain record dicts (pure, no I/O)."""

from __future__ import annotations

from inspector.recording.reports import summary

HEADER = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-11-30T10:00:00.000Z",
          "inspector": "0.1.0",
          "target": {"transport": "stdio", "command": ["python", "s.py", "--token", "[REDACTED]"]},
          "env": {"API_KEY": "[REDACTED]"}}


def message(seq, t, direction, msg):
    return {"seq": seq, "t": t, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **msg}}


def event(seq, t, name, detail):
    return {"seq": seq, "t": t, "kind": "event", "event": name, "detail": detail}


SESSION = [
    event(1, 10.0, "handshake", {"era": "legacy", "protocolVersion": "2025-11-25",
                                 "serverInfo": {"name": "s", "version": "2"}, "capabilities": {"tools": {}}}),
    message(2, 11.0, "to_server", {"id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}}}),
    {"seq": 3, "t": 11.1, "kind": "stderr", "text": "adding"},
    message(4, 11.25, "from_server", {"id": 1, "result": {"content": [], "isError": True}}),
    message(5, 12.0, "to_server", {"id": 2, "method": "tools/call", "params": {"name": "gone"}}),
    event(6, 12.5, "restart", {"reason": "file change", "paths": ["/srv/s.py"]}),
    event(7, 12.6, "exit", {"code": 0, "signal": None}),
    event(8, 13.0, "diff", {"reason": "restart", "summary": "tools: +1", "sections": {"tools": {"added": ["mul"]}}}),
    message(9, 13.5, "from_server", {"id": 7, "result": {}}),
    event(10, 13.6, "warning", {"rule": "unmatched-response", "seq": 9, "text": "recorded by the page"}),
]


def test_the_timeline_index_pairs_both_ways_with_latency():
    rows = summary.index(summary.as_records(SESSION)).rows
    assert [row["kind"] for row in rows] == ["event", "request", "stderr", "response", "request", "event", "event",
                                             "event", "response", "event"]
    assert rows[1]["pair"] == 4 and rows[3]["pair"] == 2 and rows[3]["ms"] == 250.0
    assert rows[3]["method"] == "tools/call" and rows[8]["unmatched"] and rows[4]["pair"] is None
    assert rows[5]["text"] == "restarting the server (file change: s.py)"


def test_calls_carry_their_answer_state_duration_and_the_stderr_written_meanwhile():
    calls = summary.index(summary.as_records(SESSION)).calls
    assert [(c.tool, c.state, c.outcome, c.latency_ms, c.seqs) for c in calls] == [
        ("add", "tool-error", "isError", 250.0, (2, 4)), ("gone", "pending", "no answer", None, (5,))]
    assert calls[0].params["arguments"] == {"a": 1} and [r.text for r in calls[0].stderr] == ["adding"]
    assert calls[0].answer["result"]["isError"] is True and calls[0].failed


def test_restarts_keep_what_followed_them_and_problems_are_listed_once():
    records = summary.as_records(SESSION)
    (restart,) = summary.restarts(records)
    assert restart["seq"] == 6 and [d["seq"] for d in restart["diffs"]] == [8]
    assert restart["events"] == [{"seq": 7, "text": "server exited with code 0"}]
    found = summary.problems(records)
    # the page's recorded warning and the checker's own finding on the same row are one problem
    assert [(p.rule, p.seq) for p in found] == [("unmatched-response", 9)]
    assert found[0].text == "recorded by the page" and found[0].fix
    # a line the reader skipped comes first, on no row
    assert summary.problems(records, ["line 3: not JSON"])[0] == summary.Problem(None, "unreadable-line",
                                                                                 "line 3: not JSON")


def test_the_summary_names_server_era_transport_command_and_times():
    info = summary.summarize(HEADER, summary.as_records(SESSION))
    assert (info.server, info.version, info.era, info.transport) == ("s", "2", "legacy", "stdio")
    assert info.command == ["python", "s.py", "--token", "[REDACTED]"] and info.env == ["API_KEY"]
    assert (info.first_t, info.last_t, info.records, info.restarts) == (10.0, 13.6, 10, 1)
    assert info.counts["request"] == 2 and info.recorded_by == "0.1.0" and round(info.duration_s, 6) == 3.6
