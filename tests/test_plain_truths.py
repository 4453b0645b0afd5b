"""Issue 15, item 8: the smaller things mcp-inspect said or did wrong against real servers, each through a real
`mcp-inspect` process and a real server (headless-http.md findings 15, 17, 18, 19, 20, 22, 23, 25)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT, fixture_command, read_records, start_http_fixture, stop_process_group
from inspector.command_line import copy_as_command

PY = sys.executable
CHILD_TIMEOUT = 90


def mcp(args: list[str], cwd, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def our_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("mcp-inspect: ")]


def assert_refused(result: subprocess.CompletedProcess, words: str) -> None:
    """Exit 2, nothing on stdout, one line of ours on stderr that says words, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert any(words in line for line in our_lines(result)), result.stderr


# -- finding 15: a server that dies at start is started once ----------------------------------------------------


def test_call_starts_a_server_that_dies_at_start_once_and_says_it_exited(tmp_path):
    result = mcp(["call", "tools/list", "--", *fixture_command("fake_server", "exit-at-start")], tmp_path)
    assert_refused(result, "the server exited with code 1 before answering")
    assert result.stderr.count("boom: missing config") == 1, result.stderr  # its stderr: one start, not two
    assert "falling back" not in result.stderr and "stdin is closed" not in result.stderr


DIES_ON_UNKNOWN = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2024-11-05",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "fragile", "version": "1"}}}), flush=True)
    elif msg.get("method") == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
    elif "id" in msg:
        print("started; unknown method " + msg["method"], file=sys.stderr, flush=True)
        sys.exit(3)
"""


def test_a_server_that_dies_on_server_discover_is_still_started_again_for_initialize(tmp_path):
    # The other side of the test above: a handshake-era server that read the probe and died of it gets the
    # fallback's fresh process, as before.
    script = tmp_path / "fragile.py"
    script.write_text(DIES_ON_UNKNOWN)
    result = mcp(["call", "tools/list", "--", PY, str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"tools": []}
    assert "the server exited on server/discover" in result.stderr and "falling back to initialize" in result.stderr


# -- finding 23: `call notifications/...` sends a notification ----------------------------------------------------


def test_call_sends_a_notification_without_an_id_and_waits_for_no_answer(tmp_path):
    log = tmp_path / "received.jsonl"
    record = tmp_path / "call.jsonl"
    result = mcp(["call", "notifications/roots/list_changed", "--protocol", "legacy", "--record", str(record),
                  "--", *fixture_command("fake_server", "ok")], tmp_path, env={"FAKE_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "notification" in result.stderr and "no answer" in result.stderr
    received = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [msg for msg in received if msg.get("method") == "notifications/roots/list_changed"]
    assert sent == [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]  # no id
    answers = [r for r in read_records(record) if r.get("kind") == "message" and r["dir"] == "from_server"
               and "error" in r["msg"]]
    assert answers == []  # nothing was answered with -32601: it was never a request


def test_call_sends_a_notifications_params(tmp_path):
    log = tmp_path / "received.jsonl"
    result = mcp(["call", "notifications/cancelled", "--params", '{"requestId": 7, "reason": "test"}',
                  "--protocol", "legacy", "--", *fixture_command("fake_server", "ok")], tmp_path,
                 env={"FAKE_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "test"}} in received


# -- finding 22 (and 34): headers over HTTP ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    log = tmp_path_factory.mktemp("http") / "server.log"
    proc, port = start_http_fixture("http_sdk_server", "streamable-http", log)
    yield f"http://127.0.0.1:{port}/mcp"
    stop_process_group(proc)


@pytest.mark.parametrize("header", ["Authorization: ", "Authorization:", "X-Extra:   "])
def test_an_empty_header_value_is_a_usage_error(tmp_path, http_server, header):
    result = mcp(["call", "tools/list", "--url", http_server, "-H", header], tmp_path)
    assert_refused(result, "is empty")
    assert header.partition(":")[0] in our_lines(result)[0]


def test_the_copied_http_command_names_the_variables_it_needs_and_runs_once_they_are_set(tmp_path, http_server):
    bin_dir = tmp_path / "bin"  # an `mcp-inspect` on PATH, as pip would install it
    bin_dir.mkdir()
    (bin_dir / "mcp-inspect").write_text(f"#!/bin/sh\nexec {shlex.quote(PY)} -m inspector.cli \"$@\"\n")
    (bin_dir / "mcp-inspect").chmod(0o755)
    msg = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "reveal", "arguments": {}}}
    line = copy_as_command([], msg, url=http_server, header_names=["Authorization", "X-Extra"])
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    env.pop("AUTHORIZATION", None)
    env.pop("X_EXTRA", None)
    unset = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                           env=env)
    # The shell stops before mcp-inspect runs, naming the variable and what to put in it.
    assert unset.returncode != 0 and unset.stdout == ""
    assert "AUTHORIZATION" in unset.stderr and "Authorization header" in unset.stderr, unset.stderr
    assert "mcp-inspect" not in unset.stderr
    result = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                            env={**env, "AUTHORIZATION": "Bearer t0k", "X_EXTRA": "yes"})
    assert result.returncode == 0, result.stderr
    revealed = json.loads(json.loads(result.stdout)["content"][0]["text"])
    headers = {name.lower(): value for name, value in revealed["headers"].items()}
    # Both were sent with the values set (call masks the token where the server echoes it; "yes" is too short).
    assert headers["authorization"] == "[REDACTED]" and "t0k" not in result.stdout and headers["x-extra"] == "yes"


# -- finding 17: cut-off JSON over HTTP --------------------------------------------------------------------------


class CutOff(BaseHTTPRequestHandler):
    """Answers every POST with HTTP 200 application/json whose JSON is cut off."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"jsonrpc": "2.0", "id": 1, "resu'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_cut_off_json_over_http_is_called_cut_off(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), CutOff)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = mcp(["call", "tools/list", "--url", f"http://127.0.0.1:{server.server_address[1]}/mcp"], tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert_refused(result, "application/json that is not valid JSON")
    line = our_lines(result)[-1]
    assert "expected application/json" not in line  # it was application/json: the JSON was the trouble
    assert "cut off" in line


# -- finding 25: --timeout 0 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["call", "tools/list", "--timeout", "0"], ["call", "tools/list", "--timeout", "-1"],
                                  ["check", "--timeout", "0"], ["--max-timeout", "0"]])
def test_a_zero_timeout_is_refused_as_not_greater_than_zero(tmp_path, args):
    result = mcp([*args, "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "greater than 0" in result.stderr and "between 0" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_timeout_over_a_day_says_the_upper_bound(tmp_path):
    result = mcp(["call", "tools/list", "--timeout", "90000", "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 2 and "at most 86400" in result.stderr, result.stderr


# -- findings 19 and 20: folders and files that are not recordings ---------------------------------------------


def test_view_names_a_folder_as_a_folder(tmp_path):
    (tmp_path / "recordings").mkdir()
    result = mcp(["view", "--no-open", "--port", "0", "recordings"], tmp_path)
    assert_refused(result, "recordings is a folder")
    assert "no such file" not in result.stderr


@pytest.mark.parametrize("command", [["call", "tools/list"], ["check"], []])
def test_record_names_a_folder_as_a_folder(tmp_path, command):
    (tmp_path / "out").mkdir()
    options = ["--no-open", "--port", "0"] if not command else []
    result = mcp([*command, *options, "--record", "out", "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "out is a folder" in result.stderr and "already exists" not in result.stderr, result.stderr
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("name, content", [
    ("empty.jsonl", b""),
    ("binary.jsonl", bytes(range(256)) * 4),
    ("hello.jsonl", b'{"hello": "world"}\n'),
    ("lines.txt", b"just some\ntext\n"),
])
def test_view_refuses_a_file_that_is_not_a_recording(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    result = mcp(["view", "--no-open", "--port", "0", name], tmp_path)
    assert_refused(result, f"{name}: not an mcp-inspect recording")
    assert "http://" not in result.stdout + result.stderr  # no page was served


# -- finding 18: export -o - writes stdout -----------------------------------------------------------------------


def test_export_dash_writes_the_recording_to_stdout_and_says_so(tmp_path):
    recorded = mcp(["call", "tools/list", "--record", "rec.jsonl", "--", *fixture_command("raw_server")], tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    result = mcp(["export", "rec.jsonl", "-o", "-"], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    source = read_records(tmp_path / "rec.jsonl")
    assert lines[0]["kind"] == "header" and [r["seq"] for r in lines[1:]] == [r["seq"] for r in source[1:]]
    assert not (tmp_path / "-").exists()
    assert "to stdout" in our_lines(result)[-1] and "to -" not in result.stderr, result.stderr
