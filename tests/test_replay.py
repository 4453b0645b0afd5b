"""`mcp-inspect replay`: a recording made by the inspector replays the same against the same server, differently
(with a precise diff) against a changed one; server requests get their recorded answers; nothing runs by accident."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, fixture_command, records_in, start_inspector, wait_for
from factories import event, message, write_deep_recording
from inspector.recording.replay import ABSENT, DEFAULT_IGNORES, Difference, compare, plan

PY = sys.executable
ECHO_LINE = '            return {"content": [{"type": "text", "text": json.dumps(args)}]}\n'


def mcp(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def server_copy(folder: Path, edit=None) -> Path:
    """A copy of the raw fixture server in its own folder, optionally edited."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / "raw_server.py").read_text()
    path = folder / "server.py"
    path.write_text(edit(text) if edit else text)
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """(recording, server script): a session recorded by the real inspector, with a tool call made from the page."""
    base = tmp_path_factory.mktemp("recorded")
    server = server_copy(base / "srv")
    inspector = start_inspector(base, [PY, str(server)])
    try:
        wait_for(lambda: inspector.post("/tools/echo/call", {"arguments": '{"text":"x"}'})[0] == 200, 20,
                 message="the echo tool listed")
        wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and
                             "content" in (r["msg"].get("result") or {}) for r in records_in(inspector.record)),
                 20, message="the call's result")
    finally:
        inspector.stop()
    return inspector.record, server


def test_round_trip_against_the_same_server_is_all_same(recorded, tmp_path):
    recording, server = recorded
    result = mcp(["replay", str(recording), "--", PY, str(server)], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = [line.split() for line in result.stdout.splitlines()[1:-1]]
    assert [(s[1], s[-1]) for s in steps] == [("initialize", "same"), ("tools/list", "same"), ("tools/call", "same")]
    assert result.stdout.splitlines()[-1] == "replay: 3 steps: 3 same, 0 different, 0 missing, 0 extra"


def test_a_changed_result_exits_1_and_names_the_step_and_the_difference(recorded, tmp_path):
    recording, _ = recorded
    changed = server_copy(tmp_path / "v2", lambda t: t.replace("json.dumps(args)", 'json.dumps(args) + "!"'))
    result = mcp(["replay", str(recording), "--", PY, str(changed)], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "   3  tools/call echo" in result.stdout and "different" in result.stdout
    assert '$.result.content[0].text: "{\\"text\\": \\"x\\"}" → "{\\"text\\": \\"x\\"}!"' in result.stdout
    assert result.stdout.splitlines()[-1] == "replay: 3 steps: 2 same, 1 different, 0 missing, 0 extra"
    ignored = mcp(["replay", str(recording), "--ignore", "$.result.content[*].text", "--", PY, str(changed)], tmp_path)
    assert ignored.returncode == 0, ignored.stdout  # an intended difference, hidden by a rule


def test_a_removed_tool_is_one_difference_with_a_path_usable_as_a_rule(recorded, tmp_path):
    recording, _ = recorded
    fewer = server_copy(tmp_path / "v3", lambda t: re.sub(r'    \{\n        "name": "add".*?\n    \},\n', "", t,
                                                          flags=re.S))
    result = mcp(["replay", str(recording), "--json", "--", PY, str(fewer)], tmp_path)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [s["status"] for s in report["steps"]] == ["same", "different", "same"]
    step = report["steps"][1]
    assert (step["index"], step["method"]) == (2, "tools/list")
    [difference] = step["diff"]
    assert difference["path"] == '$.result.tools[?(@.name=="add")]' and difference["absent"] == "actual"
    assert difference["recorded"]["description"] == "Add two integers."
    rule = mcp(["replay", str(recording), "--ignore", difference["path"], "--", PY, str(fewer)], tmp_path)
    assert rule.returncode == 0, rule.stdout


def test_json_report_schema(recorded, tmp_path):
    recording, server = recorded
    result = mcp(["replay", str(recording), "--json", "--", PY, str(server)], tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"steps", "summary"}
    for index, step in enumerate(report["steps"], 1):
        assert {"index", "method", "status", "diff"} <= set(step) and step["index"] == index
        assert step["status"] in ("same", "different", "missing", "extra") and step["diff"] == []
    summary = report["summary"]
    assert (summary["steps"], summary["same"], summary["different"], summary["missing"], summary["extra"]) == \
        (3, 3, 0, 0, 0)


def test_a_server_that_dies_makes_steps_missing_quickly(recorded, tmp_path):
    recording, _ = recorded
    dying = server_copy(tmp_path / "v4", lambda t: t.replace(ECHO_LINE, "            raise SystemExit(3)\n"))
    result = mcp(["replay", str(recording), "--json", "--", PY, str(dying)], tmp_path, timeout=15)
    assert result.returncode == 1, result.stderr
    step = json.loads(result.stdout)["steps"][2]
    assert step["status"] == "missing" and "exited with code 3" in step["note"]
    assert step["diff"][0]["absent"] == "actual"


# -- server requests answered from the recording -------------------------------------------------------------------

def write_recording(path: Path, command: list[str], messages: list[tuple[str, dict]], **header) -> Path:
    """A hand-written recording: a header, a spawn event, then (dir, msg) records."""
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-01-01T00:00:00.000Z",
            "inspector": "0.1.0", "target": {"transport": "stdio", "command": command, "cwd": str(path.parent)},
            "protocol": "auto", "env": {}, **header}
    lines = [head, {"seq": 1, "t": 1.0, "kind": "event", "event": "spawn", "detail": {"pid": 1}}]
    for seq, (direction, msg) in enumerate(messages, 2):
        lines.append({"seq": seq, "t": float(seq), "kind": "message", "dir": direction, "msg": msg})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}, "sampling": {}, "elicitation": {}},
                   "clientInfo": {"name": "hand", "version": "0"}}}
ANSWERS = {"roots": {"roots": [{"uri": "file:///work", "name": "work"}]},
           "sampling": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
           "elicitation": {"action": "accept", "content": {"name": "Ada"}}}


def asking_session(answers: dict) -> list[tuple[str, dict]]:
    """The traffic of one `ask` call: the server asks three things, the recorded client answers them."""
    asked = [("from_server", {"jsonrpc": "2.0", "id": "ask-1", "method": "roots/list", "params": {}}),
             ("to_server", {"jsonrpc": "2.0", "id": "ask-1", "result": answers["roots"]})]
    asked += [("from_server", {"jsonrpc": "2.0", "id": "ask-2", "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 10}}),
              ("to_server", {"jsonrpc": "2.0", "id": "ask-2", "result": answers["sampling"]})]
    asked += [("from_server", {"jsonrpc": "2.0", "id": "ask-3", "method": "elicitation/create", "params": {
        "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
              ("to_server", {"jsonrpc": "2.0", "id": "ask-3", "result": answers["elicitation"]})]
    text = json.dumps(answers, sort_keys=True)
    return [("to_server", INIT),
            ("from_server", {"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "asking-server", "version": "0.0.1"}}}),
            ("to_server", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ("to_server", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "ask", "arguments": {}}}),
            *asked,
            ("from_server", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}]}})]


def test_server_requests_get_the_recorded_answers(tmp_path):
    recording = write_recording(tmp_path / "asking.jsonl", fixture_command("asking_server"), asking_session(ANSWERS))
    result = mcp(["replay", str(recording), "--json", "--", *fixture_command("asking_server")], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = json.loads(result.stdout)["steps"]
    assert [(s["method"], s["direction"], s["status"]) for s in steps] == [
        ("initialize", "to_server", "same"), ("tools/call", "to_server", "same"),
        ("roots/list", "from_server", "same"), ("sampling/createMessage", "from_server", "same"),
        ("elicitation/create", "from_server", "same")]


def test_a_server_that_stops_asking_is_reported(tmp_path):
    session = asking_session(ANSWERS)
    recording = write_recording(tmp_path / "asking.jsonl", fixture_command("asking_server"), session)
    quiet = tmp_path / "quiet.py"  # answers the call without asking anything
    quiet.write_text((FIXTURES / "asking_server.py").read_text().replace(
        "answers = {key: ask(n, m, p) for n, (key, m, p) in enumerate(QUESTIONS, 1)}",
        f"answers = {json.dumps(ANSWERS)}"))
    result = mcp(["replay", str(recording), "--", PY, str(quiet)], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "roots/list (asked by the server)" in result.stdout and "missing" in result.stdout


def test_protocol_option_replaces_the_recorded_version(tmp_path):
    messages = [("to_server", INIT), ("from_server", {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "fake-ok", "version": "0.0.0"}}})]
    recording = write_recording(tmp_path / "fake.jsonl", fixture_command("fake_server", "ok"), messages)
    server = fixture_command("fake_server", "ok")
    assert mcp(["replay", str(recording), "--", *server], tmp_path).returncode == 0
    result = mcp(["replay", str(recording), "--protocol", "2025-03-26", "--", *server], tmp_path)
    assert result.returncode == 1
    assert '$.result.protocolVersion: "2025-11-25" → "2025-03-26"' in result.stdout


# -- nothing runs without consent; bad files -----------------------------------------------------------------------

def test_the_recorded_command_runs_only_with_consent_and_is_shown_first(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    recording = write_recording(tmp_path / "touch.jsonl", ["touch", str(sentinel)], asking_session(ANSWERS))
    refused = mcp(["replay", str(recording)], tmp_path)
    assert refused.returncode == 2 and "--run-recorded-command" in refused.stderr
    assert f"touch {sentinel}" in refused.stderr and not sentinel.exists()
    exported = mcp(["export", str(recording), "-o", str(tmp_path / "out.jsonl")], tmp_path)
    assert exported.returncode == 0 and not sentinel.exists()
    consented = mcp(["replay", str(recording), "--run-recorded-command", "--timeout", "2"], tmp_path)
    assert f"mcp-inspect: running the recorded command: touch {sentinel}" in consented.stderr
    assert sentinel.exists() and consented.returncode == 2  # touch is no MCP server: the replay could not run


@pytest.mark.parametrize("content, words", [
    ("not json at all\n", "no header"),
    ('{"kind":"header","format":"other"}\n', "not an mcp-inspect recording"),
    ('{"kind":"header","format":"mcp-inspect-recording","version":99}\n', "version 99"),
    ('{"kind":"header","format":"mcp-inspect-recording","version":1}\n{"seq":1,"t":1,"kind":"message","dir":"to_server"'
     ',"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}\n{bad\n{"seq":3,"t":1,"kind":"event","event":"x","detail":{}}\n',
     "damaged"),
    ('{"kind":"header","format":"mcp-inspect-recording","version":1}\n', "no client→server traffic"),
])
def test_a_file_that_cannot_be_replayed_exits_2(tmp_path, content, words):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    result = mcp(["replay", str(path), "--", "does-not-matter"], tmp_path)
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_bad_ignore_rule_and_missing_file_exit_2(tmp_path):
    result = mcp(["replay", str(tmp_path / "none.jsonl"), "--ignore", "$..[", "--", "x"], tmp_path)
    assert result.returncode == 2 and "not a JSONPath" in result.stderr
    result = mcp(["replay", str(tmp_path / "none.jsonl"), "--", "x"], tmp_path)
    assert result.returncode == 2 and "cannot open" in result.stderr


def test_help_lists_the_default_ignore_rules(tmp_path):
    result = mcp(["replay", "--help"], tmp_path)
    assert result.returncode == 0
    for path, _ in DEFAULT_IGNORES:
        assert path in result.stdout


# -- compare and plan (pure) ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("recorded, actual, rules, expected", [
    ({"a": 1}, {"a": 1}, [], []),
    ({"a": 1}, {"a": 1.0}, [], []),
    ({"a": 1}, {"a": True}, [], [Difference("$.a", 1, True)]),
    ({"a": None}, {}, [], [Difference("$.a", None, ABSENT)]),
    ({}, {"b": [1]}, [], [Difference("$.b", ABSENT, [1])]),
    ([1, 2], [1], [], [Difference("$[1]", 2, ABSENT)]),
    ({"x y": {"io.mcp/v": 1}}, {"x y": {"io.mcp/v": 2}}, [], [Difference('$["x y"]["io.mcp/v"]', 1, 2)]),
    ({"t": [{"name": "a", "v": 1}, {"name": "b"}]}, {"t": [{"name": "b"}, {"name": "a", "v": 2}]}, [],
     [Difference('$.t[?(@.name=="a")].v', 1, 2)]),
    ({"r": {"_meta": {"timestamp": 1}, "k": 1}}, {"r": {"_meta": {"timestamp": 2}, "k": 1}}, ["$..timestamp"], []),
    ({"r": {"c": [{"text": "a", "type": "t"}]}}, {"r": {"c": [{"text": "b", "type": "t"}]}},
     ["$.r.c[*].text"], []),
    ({"id": 1, "jsonrpc": "2.0", "result": {"taskId": "x"}}, {"id": 9, "result": {"taskId": "y"}},
     [p for p, _ in DEFAULT_IGNORES], []),
    ({"id": 1}, {"id": 9}, [], [Difference("$.id", 1, 9)]),
])
def test_compare(recorded, actual, rules, expected):
    assert compare(recorded, actual, rules) == expected


def test_every_reported_path_works_as_an_ignore_rule():
    recorded = {"result": {"tools": [{"name": "a", "d": "x"}], "odd key": {"io.x/y": [1, {"z": 1}]}}}
    actual = {"result": {"tools": [{"name": "a", "d": "y"}], "odd key": {"io.x/y": [2, {"z": 2}]}}}
    diff = compare(recorded, actual)
    assert len(diff) == 3
    assert compare(recorded, actual, [d.path for d in diff]) == []


def test_plan_waits_where_the_recording_saw_answers_and_splits_at_restarts():
    records = [
        event("spawn", {"pid": 1}, seq=1),
        message("to_server", {"jsonrpc": "2.0", "id": 1, "method": "initialize"}, seq=2, t=2.0),
        message("from_server", {"jsonrpc": "2.0", "id": 1, "result": {}}, seq=3, t=3.0),
        message("to_server", {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}, seq=4, t=4.0),
        message("from_server", {"jsonrpc": "2.0", "id": "s", "method": "roots/list"}, seq=5, t=5.0),
        message("to_server", {"jsonrpc": "2.0", "id": "s", "result": {"roots": []}}, seq=6, t=6.0),
        message("to_server", {"jsonrpc": "2.0", "id": 3, "method": "slow"}, seq=7, t=7.0),  # never answered
        event("exit", {"code": 0}, seq=8),
        event("spawn", {"pid": 2}, seq=9),
        message("to_server", {"jsonrpc": "2.0", "id": 4, "method": "initialize"}, seq=10, t=10.0),
        message("from_server", {"jsonrpc": "2.0", "id": 4, "result": {}}, seq=11, t=11.0),
    ]
    first, second = plan(records)
    assert [(kind, r.seq) for kind, r in first.actions] == [("send", 2), ("wait", 2), ("send", 4), ("send", 7)]
    assert [(a.seq, a.reply) for a in first.asks] == [(5, {"jsonrpc": "2.0", "id": "s", "result": {"roots": []}})]
    assert set(first.responses) == {2}
    assert [(kind, r.seq) for kind, r in second.actions] == [("send", 10), ("wait", 10)]


# -- what is re-sent, and how ----------------------------------------------------------------------------------------

RAW_INIT_RESULT = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "raw-server", "version": "0.0.1"}}


def test_a_recorded_restart_replays_in_a_fresh_process(tmp_path):
    recording = write_recording(tmp_path / "restart.jsonl", fixture_command("raw_server"), [
        ("to_server", {**INIT, "id": 1}), ("from_server", {"jsonrpc": "2.0", "id": 1, "result": RAW_INIT_RESULT})])
    text = recording.read_text().splitlines()
    more = [{"seq": 10, "t": 10.0, "kind": "event", "event": "exit", "detail": {"code": 0}},
            {"seq": 11, "t": 11.0, "kind": "event", "event": "spawn", "detail": {"pid": 2}},
            {"seq": 12, "t": 12.0, "kind": "message", "dir": "to_server", "msg": {**INIT, "id": 7}},
            {"seq": 13, "t": 13.0, "kind": "message", "dir": "from_server",
             "msg": {"jsonrpc": "2.0", "id": 7, "result": RAW_INIT_RESULT}}]
    recording.write_text("\n".join(text + [json.dumps(x) for x in more]) + "\n")
    out = tmp_path / "run.jsonl"
    result = mcp(["replay", str(recording), "--record", str(out), "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    events = [r.get("event") for r in records_in(out) if r.get("kind") == "event"]
    assert events.count("spawn") == 2 and events[-1] == "session-end"


def test_hand_made_lines_go_out_verbatim_and_cancellations_follow_the_new_ids(tmp_path):
    log = tmp_path / "stdin.log"
    recording = write_recording(tmp_path / "raw.jsonl", fixture_command("fake_server", "hang"), [
        ("to_server", INIT), ("from_server", {"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "fake-hang", "version": "0.0.0"}}}),
        ("to_server", {"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {"name": "echo"}}),
        ("to_server", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 40}}),
    ])
    lines = recording.read_text().splitlines()
    lines += [json.dumps({"seq": 20, "t": 20.0, "kind": "invalid", "dir": "to_server", "raw": "{oops not json",
                          "error": "not JSON"}),
              json.dumps({"seq": 21, "t": 21.0, "kind": "message", "dir": "to_server", "origin": "user",
                          "msg": {"jsonrpc": "2.0", "id": "mine", "method": "ping"}}),
              json.dumps({"seq": 22, "t": 22.0, "kind": "message", "dir": "from_server",
                          "msg": {"jsonrpc": "2.0", "id": "mine", "result": {}}})]
    recording.write_text("\n".join(lines) + "\n")
    result = subprocess.run([PY, "-m", "inspector.cli", "replay", str(recording), "--json", "--",
                             *fixture_command("fake_server", "hang")], cwd=tmp_path, capture_output=True, text=True,
                            timeout=30, env={**os.environ, "PYTHONPATH": str(ROOT), "FAKE_LOG": str(log)})
    assert result.returncode == 0, result.stdout + result.stderr
    sent = log.read_text().splitlines()
    assert "{oops not json" in sent
    received = [json.loads(line) for line in sent if line.startswith("{\"")]
    call = next(m for m in received if m.get("method") == "tools/call")
    cancel = next(m for m in received if m.get("method") == "notifications/cancelled")
    assert call["id"] != 40 and cancel["params"]["requestId"] == call["id"]
    assert {"jsonrpc": "2.0", "id": "mine", "method": "ping"} in received
    statuses = {(s["method"], s["status"]) for s in json.loads(result.stdout)["steps"]}
    assert statuses == {("initialize", "same"), ("tools/call", "same"), ("ping", "same")}


def test_the_replayer_runs_in_process_with_progress_and_its_own_sink(recorded):
    from inspector.recording.files import Sink
    from inspector.recording.files import RecordingWriter, read_recording
    from inspector.recording.replay import Replayer

    recording, server = recorded
    seen = []
    sink = Sink(RecordingWriter.spool())
    report = Replayer(read_recording(recording), [PY, str(server)], store=sink, on_step=seen.append).run()
    assert report.ok and [s.method for s in seen] == ["initialize", "tools/list", "tools/call"]
    lines = [json.loads(line) for _, line in sink.writer.read_all_lines()]
    assert [r["seq"] for r in lines] == list(range(1, len(lines) + 1))  # the caller's store gets the traffic
    assert lines[0]["event"] == "spawn" and sum(r.get("dir") == "to_server" for r in lines) == 4
    sink.writer.close()


def test_a_too_deeply_nested_line_makes_the_file_damaged_not_a_traceback(tmp_path):
    result = mcp(["replay", str(write_deep_recording(tmp_path / "deep.jsonl")), "--", "does-not-matter"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "is damaged" in result.stderr and "line 3: not read: nested more than" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
