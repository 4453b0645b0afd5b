"""`mcp-inspect view FILE`: a recording in the page, read-only, starting nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tracemalloc

from conftest import (
    PYTHON, ROOT, _readline_with_timeout, build_in_process, fixture_command, read_records, records_in, wait_for,
)
from factories import write_deep_recording
from test_start_imports import FLASK_WATCH

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
    records = read_records(path)[1:]
    # A stderr burst is one row, and a server message recorded between two of its lines follows that row: stderr
    # lines as a set, every other record in seq order.
    stderr = {r["seq"] for r in records if r["kind"] == "stderr"}
    assert sorted(seqs) == [r["seq"] for r in records]
    assert [s for s in seqs if s not in stderr] == [r["seq"] for r in records if r["seq"] not in stderr]
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
    assert view.request("GET", "/")[0] == 200
    # Every action the page has is refused, whatever it carries; the recorded command is never run.
    for action, form in (("/server/start", {}), ("/server/restart", {}), ("/server/stop", {}),
                         ("/tools/x/call", {"arguments": "{}"}), ("/tool/call?name=x", {"arguments": "{}"}),
                         ("/raw", {"line": json.dumps(call["msg"])}), ("/recordings/replay", {})):
        status, _, body = view.post(action, form)
        assert status == 403 and b"read-only" in body, (action, status, body)
    seqs, _ = first_frame_rows(view)
    assert seqs == [1]
    assert not sentinel.exists()
    assert view.stop() == 0
    assert not sentinel.exists() and records_in(path)[1:] == [call]  # and nothing was added to the file


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
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it would wait for a writer forever: refused before it is opened
    for target, message in ((newer, "format version 99"), (tmp_path / "missing.jsonl", "no such file"),
                            (fifo, "no such file")):
        result = subprocess.run([PYTHON, "-m", "inspector.cli", "view", "--no-open", "--port", "0", str(target)],
                                capture_output=True, text=True, timeout=90, env={"PYTHONPATH": str(ROOT)},
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


# Security row 8, on the loader `view` uses (RecordingWriter.open_existing → Store.load_existing → the one
# RecordingReader), at the real 64 MiB cap. The big files are sparse (a hole reads as zero bytes), so making them
# costs nothing; reading them is what is measured. The bound is the cap plus its slack, well under the file size:
# a loader that holds a whole line (the old one held 750 MB for a 300 MB file) cannot stay under it.
HEAD_LINE = (b'{"kind":"header","format":"mcp-inspect-recording","version":1,"created":"2026-11-30T00:00:00Z",'
             b'"inspector":"0.1.0","protocol":"auto","target":{"transport":"stdio","command":["srv"],"cwd":"/"}}\n')
MiB = 1 << 20
VIEW_MEMORY_BOUND = 160 * MiB


def stderr_line(seq: int, text: str) -> bytes:
    return json.dumps({"seq": seq, "t": float(seq), "kind": "stderr", "text": text}).encode() + b"\n"


def write_sparse(path, parts: list[bytes | int]):
    """bytes are written, an int leaves a hole of that many zero bytes (no newline in it)."""
    with open(path, "wb") as handle:
        for part in parts:
            if isinstance(part, int):
                handle.seek(part, 1)
            else:
                handle.write(part)
        handle.truncate()
    return path


def view_in_process_measured(tmp_path, path):
    """Build the `view` page for path in this process; return it and the peak of traced memory while loading."""
    tracemalloc.start()
    try:
        view = build_in_process(tmp_path, [], view=path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return view, peak


def test_view_loads_a_line_over_64_mib_in_bounded_memory_and_reads_on(tmp_path):
    over = 65 * MiB
    path = write_sparse(tmp_path / "bigline.jsonl", [
        HEAD_LINE, stderr_line(1, "before the big line"),
        b'{"seq":2,"t":2.0,"kind":"stderr","text":"', over, b'"}\n',
        stderr_line(3, "after the big line")])
    view, peak = view_in_process_measured(tmp_path, path)
    try:
        assert peak < VIEW_MEMORY_BOUND, f"{peak / MiB:.0f} MiB traced while loading"
        assert [row.seq for row in view.services.store.rows()] == [1, 3]
        status, _, body = view.request("GET", "/")
        assert status == 200
        assert f"line 3: longer than {64 * MiB} bytes, skipped" in body.decode()
        status, _, body = view.request("GET", "/timeline/rows?before=100&q=after+the+big")
        assert status == 200 and re.findall(r'id="r-(\d+)"', body.decode()) == ["3"]
    finally:
        view.stop()


def test_view_loads_300_mb_without_a_newline_in_bounded_memory(tmp_path):
    path = write_sparse(tmp_path / "hugenonl.jsonl",
                        [HEAD_LINE, stderr_line(1, "the one good line"), 300 * 1000 * 1000])
    view, peak = view_in_process_measured(tmp_path, path)
    try:
        assert peak < VIEW_MEMORY_BOUND, f"{peak / MiB:.0f} MiB traced while loading"
        assert [row.seq for row in view.services.store.rows()] == [1]
        status, _, body = view.request("GET", "/")
        assert status == 200 and f"line 3: longer than {64 * MiB} bytes, skipped" in body.decode()
    finally:
        view.stop()


# test_start_imports' watch on Flask, turned to the services' module (the checker's schemas come with it).
SERVICES_WATCH = FLASK_WATCH.replace('name == "flask"', 'name == "inspector.inspector"').replace(
    "importing flask", "importing the services")


def test_view_prints_the_url_line_before_it_imports_the_services(tmp_path):
    """As in the run mode: once the recording is indexed and the port bound, the URL line; the services and the
    page's libraries after it, while the listening socket holds the browser's first request."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SERVICES_WATCH)
    path = tmp_path / "one.jsonl"
    path.write_bytes(HEAD_LINE + stderr_line(1, "hello"))
    proc = subprocess.Popen([PYTHON, "-m", "inspector.cli", "view", "--no-open", "--port", "0", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])})
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+\n", _readline_with_timeout(proc, 60))
        assert _readline_with_timeout(proc, 60) == "importing the services\n"
    finally:
        proc.terminate()
        proc.wait(60)
