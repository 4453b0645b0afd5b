"""`mcp-inspect view FILE`: a recording in the page, read-only, starting nothing."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import PYTHON, ROOT, fixture_command, read_records, records_in, wait_for
from factories import write_deep_recording

ROW_ID = re.compile(r'id="r-(\d+)"')


def record_a_session(tmp_path, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "stderr"))
    wait_for(lambda: any(r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {})
                         for r in records_in(inspector.record)), 15, message="tools listed")
    inspector.post("/tools/echo/call", {"arguments": '{"text": "recorded"}'})
    wait_for(lambda: "recorded" in inspector.record.read_text(), 10, message="call answered")
    inspector.stop()  # the tests compare the view with the file as it is once the inspector has ended
    return inspector.record


def first_frame_rows(view) -> tuple[list[int], str]:
    ws = view.ws()
    frame = ws.recv()
    ws.close()
    return [int(s) for s in ROW_ID.findall(frame)], frame


def open_view(inspector_factory, path):
    """`mcp-inspect view path`: the process, its page, and the rows and text of its first websocket frame."""
    view = inspector_factory([], view=path)
    _, _, body = view.request("GET", "/")
    seqs, frame = first_frame_rows(view)
    return view, body.decode(), seqs, frame


def test_view_shows_the_recorded_timeline_and_tools_read_only(tmp_path, inspector_factory):
    path = record_a_session(tmp_path, inspector_factory)
    view = inspector_factory([], view=path)
    status, _, body = view.request("GET", "/")
    page = body.decode()
    assert status == 200
    assert "read-only" in page and path.name in page
    assert "echo" in page, "the tool list comes from the recorded tools/list"
    assert "hx-post=\"/server/start\"" not in page and "hx-post=\"/server/stop\"" not in page
    seqs, frame = first_frame_rows(view)
    assert seqs == [r["seq"] for r in read_records(path)[1:]]
    assert "recorded" in frame
    status, _, body = view.request("GET", "/tools/echo")
    assert status == 200 and "read-only" in body.decode() and "Call</button>" not in body.decode()
    for action in ("/server/start", "/server/stop", "/tools/echo/call"):
        status, _, _ = view.post(action, {"arguments": "{}"})
        assert status == 403
    # Expanding a row reads it from the recording.
    response_seq = next(r["seq"] for r in read_records(path) if r.get("kind") == "message" and r["dir"] == "from_server"
                        and "recorded" in json.dumps(r))
    status, _, body = view.request("GET", f"/records/{response_seq}.json")
    assert "recorded" in body.decode()


def test_view_never_runs_the_recorded_command(tmp_path, inspector_factory):
    sentinel = tmp_path / "SENTINEL"
    path = tmp_path / "evil.jsonl"
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-11-30T00:00:00Z",
            "inspector": "0.1.0", "target": {"transport": "stdio", "command": ["touch", str(sentinel)], "cwd": "/"}}
    call = {"seq": 1, "t": 1.0, "kind": "message", "dir": "to_server",
            "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}}
    path.write_text(json.dumps(head) + "\n" + json.dumps(call) + "\n")
    view = inspector_factory([], view=path)
    view.request("GET", "/")
    view.post("/server/start")
    seqs, _ = first_frame_rows(view)
    assert seqs == [1]
    assert not sentinel.exists()


def test_corrupt_recording_opens_with_what_is_readable(tmp_path, inspector_factory):
    path = tmp_path / "torn.jsonl"
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "target": {"command": ["s"]}}
    lines = [json.dumps(head), json.dumps({"seq": 1, "t": 1.0, "kind": "stderr", "text": "one"}), "{not json",
             json.dumps({"seq": "x", "t": 1.0, "kind": "stderr"}),
             json.dumps({"seq": 2, "t": 2.0, "kind": "stderr", "text": "two"})]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"seq":3,"t":3.0,"kind":"std')
    view, page, seqs, _ = open_view(inspector_factory, path)
    assert "3 lines of this recording could not be read" in page
    assert "line 3: not JSON" in page and "cut off" in page
    assert seqs == [1, 2]
    assert "cut off" in view.stderr_text()


def test_newer_format_and_missing_file_are_clear_errors(tmp_path):
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 99}) + "\n")
    for target, message in ((newer, "format version 99"), (tmp_path / "missing.jsonl", "no such file")):
        result = subprocess.run([PYTHON, "-m", "inspector.cli", "view", "--no-open", "--port", "0", str(target)],
                                capture_output=True, text=True, timeout=30, env={"PYTHONPATH": str(ROOT)},
                                cwd=tmp_path)
        assert result.returncode == 2
        assert message in result.stderr and "Traceback" not in result.stderr
        assert result.stdout == ""


def test_a_large_recording_opens_with_the_newest_rows(tmp_path, inspector_factory):
    path = tmp_path / "big.jsonl"
    count = 100_000
    with open(path, "w") as handle:
        handle.write(json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1}) + "\n")
        for seq in range(1, count + 1):
            handle.write(json.dumps({"seq": seq, "t": 1.0 + seq / 1000, "kind": "message", "dir": "from_server",
                                     "msg": {"jsonrpc": "2.0", "method": "notifications/message",
                                             "params": {"level": "info", "data": f"n{seq}"}}}) + "\n")
    view = inspector_factory([], view=path)
    seqs, _ = first_frame_rows(view)
    assert seqs == list(range(count - 999, count + 1))
    status, _, body = view.request("GET", "/timeline/rows?before=50&q=n7")
    assert [int(s) for s in ROW_ID.findall(body.decode())] == [7]


def test_a_too_deeply_nested_line_is_a_reported_line_not_a_traceback(tmp_path, inspector_factory):
    view, page, seqs, frame = open_view(inspector_factory, write_deep_recording(tmp_path / "deep.jsonl"))
    assert "2 lines of this recording could not be read" in page
    assert "line 3: not read: nested more than" in page and "line 4: not read: nested more than" in page
    assert seqs == [1, 3] and "after the deep lines" in frame
    assert view.stop() == 0
    stderr = view.stderr_text()
    assert "line 3: not read: nested more than" in stderr and "Traceback" not in stderr
