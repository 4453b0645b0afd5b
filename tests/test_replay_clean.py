"""Replay is clean against an unchanged server (issue 15, item 2): files an editor touched, exit codes that mean
what README says, the page's own long-lived streams, and requests the server makes over an HTTP GET stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    ROOT, fixture_command, needs_everything, records_in, start_everything, start_inspector, stop_process_group, wait_for,
)

PY = sys.executable


def mcp(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def page_recording(base: Path, server_argv: list[str], *options: str, first=None) -> Path:
    """A page session recorded by the real inspector: the handshake, the lists, one echo call from the page, stop.
    `first` (a predicate on one record, with its description) is waited for before the call."""
    inspector = start_inspector(base, server_argv, *options)
    try:
        if first is not None:
            predicate, what = first
            wait_for(lambda: any(predicate(r) for r in records_in(inspector.record)), 60, message=what)
        wait_for(lambda: inspector.post("/tools/echo/call", {"arguments": '{"message":"hi","text":"hi"}'})[0] == 200,
                 60, message="the echo tool listed")
        wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and
                             "content" in (r["msg"].get("result") or {}) for r in records_in(inspector.record)),
                 60, message="the call's result")
    finally:
        inspector.stop()
    return inspector.record


@pytest.fixture(scope="module")
def raw_recording(tmp_path_factory) -> Path:
    """A page session of the raw fixture server recorded by the real inspector."""
    return page_recording(tmp_path_factory.mktemp("raw"), fixture_command("raw_server"))


# -- a file an editor touched is not damaged -------------------------------------------------------------------------

@pytest.mark.parametrize("edit", [
    pytest.param(lambda data: data + b"\n", id="trailing-blank-line"),
    pytest.param(lambda data: data + b"\r\n  \n", id="trailing-whitespace-lines"),
    pytest.param(lambda data: b"\xef\xbb\xbf" + data, id="utf8-bom"),
    pytest.param(lambda data: b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n") + b"\r\n", id="bom-crlf-blank"),
])
def test_a_blank_line_or_a_bom_is_not_damage_to_view_replay_or_export(raw_recording, tmp_path, edit):
    from inspector.recording.files import RecordingWriter
    from inspector.recording.store import Store

    path = tmp_path / "edited.jsonl"
    path.write_bytes(edit(raw_recording.read_bytes()))
    # view reads through the Store: the same header, no problems
    store = Store(RecordingWriter.open_existing(path))
    head, problems = store.load_existing()
    assert head is not None and head["format"] == "mcp-inspect-recording" and problems == []
    exported = mcp(["export", str(path), "-o", str(tmp_path / "out.jsonl")], tmp_path)
    assert exported.returncode == 0 and "warning" not in exported.stderr, exported.stderr
    replayed = mcp(["replay", str(path), "--", *fixture_command("raw_server")], tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "warning" not in replayed.stderr and "damaged" not in replayed.stderr


# -- exit 2 when the replay could not run, with a JSON report too -----------------------------------------------------

def test_a_server_that_does_not_start_is_exit_2_not_a_difference(raw_recording, tmp_path):
    result = mcp(["replay", str(raw_recording), "--", PY, str(tmp_path / "nonexistent.py")], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "replay could not run: the server did not answer initialize" in result.stderr
    assert "exited with code 2" in result.stderr and "Traceback" not in result.stderr
    as_json = mcp(["replay", str(raw_recording), "--json", "--", PY, str(tmp_path / "nonexistent.py")], tmp_path)
    assert as_json.returncode == 2
    report = json.loads(as_json.stdout)
    assert report["summary"]["exit"] == 2 and "did not answer initialize" in report["summary"]["error"]
    assert report["steps"][0]["method"] == "initialize" and report["steps"][0]["status"] == "missing"


@pytest.mark.parametrize("argv, words", [
    (["--", "mcp-inspect-no-such-command"], "mcp-inspect-no-such-command"),
    (["--ignore", "$..[", "--", "x"], "not a JSONPath"),
])
def test_json_gets_a_report_whenever_replay_exits_2(raw_recording, tmp_path, argv, words):
    result = mcp(["replay", str(raw_recording), "--json", *argv], tmp_path)
    assert result.returncode == 2 and words in result.stderr, result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["exit"] == 2 and words in summary["error"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = mcp(["replay", str(empty), "--json", "--", "x"], tmp_path)
    assert result.returncode == 2 and "not an mcp-inspect recording" in json.loads(result.stdout)["summary"]["error"]


@pytest.fixture
def refusing_server():
    """An HTTP server that answers 401 to everything, as a server does to a client without its token."""
    import http.server
    import threading

    class Refuse(http.server.BaseHTTPRequestHandler):
        def _refuse(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"error": "invalid_token"}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _refuse

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()


def test_a_401_for_a_missing_header_is_exit_2_with_a_warning_about_the_recorded_header(tmp_path, refusing_server):
    from conftest import start_http_fixture

    proc, port = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "server.log")
    try:
        recording = tmp_path / "http_call.jsonl"
        made = mcp(["call", "tools/list", "--record", str(recording), "--url", f"http://127.0.0.1:{port}/mcp",
                    "-H", "Authorization: Bearer sk-test-token"], tmp_path)
        assert made.returncode == 0, made.stderr
    finally:
        stop_process_group(proc)
    result = mcp(["replay", str(recording), "--json", "--timeout", "60", "--url", refusing_server], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "warning: the recording was made with -H Authorization; not given here" in result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["exit"] == 2 and "401" in summary["error"]


# -- the page's own long-lived stream is replayed as a stream -------------------------------------------------------

def test_a_page_recording_of_a_2026_07_28_server_replays_clean_with_its_listen_stream(tmp_path):
    recording = page_recording(tmp_path, fixture_command("sdk_server"))
    methods = [r["msg"].get("method") for r in records_in(recording) if r.get("dir") == "to_server"]
    assert "subscriptions/listen" in methods and "initialize" not in methods  # the modern era's own stream
    result = mcp(["replay", str(recording), "--json", "--", *fixture_command("sdk_server")], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = json.loads(result.stdout)["steps"]
    listen = next(s for s in steps if s["method"] == "subscriptions/listen")
    assert listen["status"] == "same" and listen["note"] == "the stream was opened", listen
    assert {s["status"] for s in steps} == {"same"} and any(s["method"] == "tools/call" for s in steps)


# -- requests the server makes unprompted, on the HTTP GET stream ---------------------------------------------------

@needs_everything
def test_an_http_page_recording_of_server_everything_replays_clean_with_its_roots_request(tmp_path):
    proc, url = start_everything("streamableHttp", tmp_path / "everything.log")
    try:
        # server-everything asks roots/list 350 ms after initialize, on its own: wait for it before the call.
        def roots_asked(record: dict) -> bool:
            return record.get("dir") == "from_server" and record.get("msg", {}).get("method") == "roots/list"
        recording = page_recording(tmp_path, [], "--url", url, first=(roots_asked, "server-everything's roots/list"))
        result = mcp(["replay", str(recording), "--json", "--url", url], tmp_path)
    finally:
        stop_process_group(proc)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = json.loads(result.stdout)["steps"]
    assert ("roots/list", "from_server", "same") in [(s["method"], s["direction"], s["status"]) for s in steps]


# -- masked values are not differences, and the live value is not printed ------------------------------------------

def test_a_masked_export_replays_clean_and_never_prints_the_masked_value(raw_recording, tmp_path):
    exported = tmp_path / "masked.jsonl"
    made = mcp(["export", str(raw_recording), "-o", str(exported), "--redact-regex", "raw-ser"], tmp_path)
    assert made.returncode == 0, made.stderr
    assert "raw-ser" not in exported.read_text() and '"[REDACTED]ver"' in exported.read_text()
    result = mcp(["replay", str(exported), "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raw-ser" not in result.stdout
    changed = tmp_path / "changed.py"  # the masked text around the value still counts
    changed.write_text((ROOT / "tests" / "fixtures" / "raw_server.py").read_text().replace('"raw-server"', '"raw-serv"'))
    result = mcp(["replay", str(exported), "--json", "--", PY, str(changed)], tmp_path)
    assert result.returncode == 1 and '"[REDACTED]ver"' in result.stdout
