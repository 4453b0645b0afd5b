"""`mcp-inspect --url`, `--config` and the headless commands over HTTP, against real SDK servers on loopback.

Each test runs the page against a real HTTP server process (the official SDK's Streamable HTTP and legacy SSE
transports, or a small stdlib server for the failures), and reads what it recorded. The page is built in-process,
except in the tests that check the real inspector process (both eras end to end, and staying up on failures).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import (
    wait_tools_listed,
    FIXTURES,
    PYTHON,
    fixture_command,
    free_port,
    read_records,
    records_in,
    start_http_fixture,
    stop_process_group,
    wait_for,
)

from inspector.protocol.forms import build_form, default_pairs

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def streamable(tmp_path_factory):
    proc, port = start_http_fixture("asking_sdk_server", "streamable-http",
                                   tmp_path_factory.mktemp("http") / "server.log")
    yield f"http://127.0.0.1:{port}/mcp"
    stop_process_group(proc)


@pytest.fixture(scope="module")
def legacy_sse(tmp_path_factory):
    proc, port = start_http_fixture("asking_sdk_server", "sse", tmp_path_factory.mktemp("sse") / "server.log")
    yield f"http://127.0.0.1:{port}/sse"
    stop_process_group(proc)


def messages(inspector) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("kind") == "message"]


def events(inspector, name: str) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("event") == name]


def wait_tools(inspector, timeout: float = 20) -> None:
    wait_tools_listed(inspector, timeout)


def call_result(inspector, tool: str, arguments: dict) -> dict:
    """Call a tool from the page; the final response message in the recording."""
    status, _, body = inspector.post(f"/tools/{tool}/call", {"arguments": json.dumps(arguments)})
    assert status == 200, body

    def final():
        sent = [r["msg"]["id"] for r in messages(inspector) if r["dir"] == "to_server"
                and r["msg"].get("method") == "tools/call"]
        return next((r["msg"] for r in messages(inspector) if sent and r["dir"] == "from_server"
                     and r["msg"].get("id") == sent[-1] and "method" not in r["msg"]), None)
    return wait_for(final, 20, message=f"the answer to {tool}")


def mcp(args: list[str], cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "inspector.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


# -- Streamable HTTP in both eras, and the legacy SSE transport ------------------------------------------------------

@pytest.mark.parametrize("protocol, era", [("auto", "modern"), ("legacy", "legacy")])
def test_streamable_http_in_both_eras(inspector_factory, streamable, protocol, era):
    inspector = inspector_factory([], "--url", streamable, "--protocol", protocol,
                                  "-H", "Authorization: Bearer sekrit-token-123")
    wait_tools(inspector)
    handshake = events(inspector, "handshake")[0]["detail"]
    assert handshake["era"] == era and handshake["serverInfo"]["name"] == "asking-sdk-fixture"
    answer = call_result(inspector, "slow_count", {"steps": 2, "delay": 0.05})
    assert answer["result"]["content"][0]["text"] == "Counted to 2."
    # Every message row knows the HTTP exchange that carried it; the token never reaches the file.
    received = [r for r in messages(inspector) if r["dir"] == "from_server" and "id" in r["msg"]]
    assert received and all(r["http"]["status"] == 200 for r in received)
    sent = next(r for r in messages(inspector) if r["dir"] == "to_server" and r["msg"].get("method") == "tools/call")
    assert sent["http"]["method"] == "POST" and sent["http"]["headers"]["Authorization"] == "[REDACTED]"
    if era == "modern":
        assert sent["http"]["headers"]["Mcp-Method"] == "tools/call"
        assert sent["http"]["headers"]["Mcp-Name"] == "slow_count"
    else:
        assert "Mcp-Session-Id" in sent["http"]["headers"]
    header = read_records(inspector.record)[0]
    assert header["target"]["url"] == streamable and header["target"]["headers"] == {"Authorization": "[REDACTED]"}
    assert "sekrit-token-123" not in inspector.record.read_text()
    page = inspector.request("GET", "/")[2].decode()
    assert streamable in page and "sekrit-token-123" not in page
    assert "Authorization: [REDACTED]" in page  # the header editor shows names only


def test_legacy_sse_transport_explicit_and_by_fallback(page_factory, legacy_sse):
    for options in (("--transport", "sse"), ()):
        inspector = page_factory([], "--url", legacy_sse, *options)
        wait_tools(inspector)
        answer = call_result(inspector, "slow_count", {"steps": 1, "delay": 0.01})
        assert answer["result"]["content"][0]["text"] == "Counted to 1."
        if not options:
            chosen = [e["detail"] for e in events(inspector, "transport") if e["detail"].get("chosen")]
            assert chosen[-1]["chosen"] == "sse"
        received = [r for r in messages(inspector) if r["dir"] == "from_server"]
        assert all(r["http"]["via"] == "sse-stream" for r in received)


def test_a_server_request_over_http_reaches_the_asks_panel(page_factory, streamable):
    """Handshake era: the SDK sends elicitation/create on the call's own SSE stream; the page answers it."""
    inspector = page_factory([], "--url", streamable, "--protocol", "legacy")
    wait_tools(inspector)
    inspector.post("/tools/confirm_order/call", {"arguments": json.dumps({"item": "teapot"})})
    body = wait_for(lambda: (b := inspector.request("GET", "/")[2].decode()) and 'data-ask="' in b and b, 15,
                    message="the elicitation shown")
    key = int(re.search(r'data-ask="(\d+)"', body).group(1))
    asked = next(r["msg"] for r in messages(inspector) if r["msg"].get("method") == "elicitation/create")
    form = dict(default_pairs(build_form(asked["params"]["requestedSchema"])))  # what the page's form posts
    form.update({"action": "accept", "f:/quantity": "3"})
    status, _, body = inspector.post(f"/asks/{key}", form)
    assert status == 200, body
    final = wait_for(lambda: next((r["msg"] for r in messages(inspector) if r["dir"] == "from_server"
                                   and "content" in (r["msg"].get("result") or {})
                                   and "teapot" in json.dumps(r["msg"]["result"])), None), 15,
                     message="the tool's answer")
    assert "3" in json.dumps(final["result"])
    reply = next(r for r in messages(inspector) if r["dir"] == "to_server" and "result" in r["msg"]
                 and isinstance(r["msg"]["result"], dict) and r["msg"]["result"].get("action") == "accept")
    assert reply["http"]["method"] == "POST"


def test_an_expired_session_leads_to_a_fresh_handshake(page_factory, tmp_path):
    port = free_port()
    proc, _ = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "a.log", port)
    try:
        inspector = page_factory([], "--url", f"http://127.0.0.1:{port}/mcp", "--protocol", "legacy")
        wait_tools(inspector)
        stop_process_group(proc)
        proc, _ = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "b.log", port)
        inspector.post("/tools/echo/call", {"arguments": json.dumps({"text": "hi"})})
        wait_for(lambda: len(events(inspector, "handshake")) == 2, 20, message="a second handshake")
        errors = [e["detail"] for e in events(inspector, "transport-error")]
        assert any(e.get("kind") == "session-expired" for e in errors), errors
        assert any("session expired" in e["detail"]["reason"] for e in events(inspector, "restart"))
        # The new session lists its tools after the handshake: call once the page knows the tool again.
        wait_for(lambda: inspector.request("GET", "/tools/echo")[0] == 200, 20, message="echo listed again")
        answer = call_result(inspector, "echo", {"text": "again"})
        assert answer["result"]["content"][0]["text"] == "again"
    finally:
        stop_process_group(proc)


# -- failures are rows, not hangs ------------------------------------------------------------------------------------

class Quirky(BaseHTTPRequestHandler):
    """401 with WWW-Authenticate on /auth, an HTML page on /html, a redirect to another port on /away."""

    seen_headers: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        Quirky.seen_headers.append(dict(self.headers))
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/auth":
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer realm="mcp", resource_metadata="http://x/.well-known"')
            self.end_headers()
        elif self.path == "/away":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:9/mcp")
            self.end_headers()
        else:
            body = b"<html><body>502 Bad Gateway</body></html>"
            self.send_response(502)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def quirky():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Quirky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("path, words", [
    ("/auth", "authorization"),
    ("/html", "502"),
    ("/away", "refused a redirect"),
])
def test_http_failures_are_clear_rows_and_the_page_stays_up(inspector_factory, quirky, path, words):
    inspector = inspector_factory([], "--url", quirky + path, "--protocol", "legacy", "--timeout", "5")
    error = wait_for(lambda: events(inspector, "transport-error"), 10, message="a transport-error row")[0]
    assert words in error["detail"]["error"].lower()
    page = wait_for(lambda: (b := inspector.request("GET", "/")[2].decode()) and "initialize failed" in b and b, 10,
                    message="the handshake failure on the page")
    if path == "/auth":
        assert "needs authorization" in page and "OAuth" in page and "resource_metadata" in page
    assert inspector.proc.poll() is None


def test_the_header_reaches_the_server_and_can_be_edited_in_the_page(page_factory, quirky):
    Quirky.seen_headers.clear()
    inspector = page_factory([], "--url", quirky + "/auth", "--protocol", "legacy", "-H", "X-Api-Key: first-key")
    wait_for(lambda: events(inspector, "transport-error"), 10, message="the 401")
    assert Quirky.seen_headers[0]["X-Api-Key"] == "first-key"
    status, _, body = inspector.post("/server/headers", {"headers": "X-Api-Key: [REDACTED]\nAuthorization: Bearer t2"})
    assert status == 200
    wait_for(lambda: len(Quirky.seen_headers) >= 2, 10, message="a reconnect")
    assert Quirky.seen_headers[-1]["X-Api-Key"] == "first-key"  # [REDACTED] kept the value
    assert Quirky.seen_headers[-1]["Authorization"] == "Bearer t2"
    text = inspector.record.read_text()
    assert "first-key" not in text and "Bearer t2" not in text


# -- headless commands over HTTP --------------------------------------------------------------------------------------

def test_call_check_and_replay_over_http(streamable, legacy_sse, tmp_path):
    recording = tmp_path / "call.jsonl"
    result = mcp(["call", "--url", streamable, "--record", str(recording), "--tool", "slow_count", "--args",
                  '{"steps": 1, "delay": 0.01}'], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["content"][0]["text"] == "Counted to 1."
    replayed = mcp(["replay", str(recording), "--url", streamable], tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "0 different, 0 missing" in replayed.stdout
    checked = mcp(["check", "--json", "--url", legacy_sse, "--transport", "sse", "--protocol", "legacy"], tmp_path)
    report = json.loads(checked.stdout)
    assert report["summary"]["era"] == "legacy" and report["summary"]["tools"] == 4, checked.stderr
    assert report["warnings"] == []


@pytest.mark.parametrize("args, words", [
    (["--url", "http://127.0.0.1:1/mcp", "--", "python", "x.py"], "cannot be used together"),
    (["-H", "Authorization: x", "--", "python", "x.py"], "--header is for servers reached over HTTP"),
    (["--url", "ftp://example.com/mcp"], "http:// or https://"),
    (["--url", "http://127.0.0.1:1/mcp", "-H", "no colon"], "Name: value"),
    (["--server", "x", "--", "python", "x.py"], "--server NAME picks an entry of --config"),
])
def test_usage_errors(tmp_path, args, words):
    result = mcp(["--no-open", *args], tmp_path, timeout=20)
    assert result.returncode == 2 and words in result.stderr, result.stderr


def test_headless_usage_errors(tmp_path):
    result = mcp(["call", "tools/list", "--url", "http://127.0.0.1:1/mcp", "--", "python", "x.py"], tmp_path)
    assert result.returncode == 2 and "not both" in result.stderr
    refused = mcp(["call", "tools/list", "--url", f"http://127.0.0.1:{free_port()}/mcp"], tmp_path)
    assert refused.returncode == 2 and "could not connect" in refused.stderr, refused.stderr


# -- config files ------------------------------------------------------------------------------------------------------

def test_a_claude_config_entry_runs_with_server(page_factory, tmp_path):
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "raw": {"command": PYTHON, "args": [str(FIXTURES / "raw_server.py")], "env": {"RAW_FLAG": "1"}},
        "other": {"command": "definitely-not-a-program"}}}))
    inspector = page_factory([], "--config", str(config), "--server", "raw")
    wait_tools(inspector)
    header = read_records(inspector.record)[0]
    assert header["target"]["command"] == [PYTHON, str(FIXTURES / "raw_server.py")]
    assert header["target"]["config"] == {"file": str(config), "server": "raw"}
    page = inspector.request("GET", "/")[2].decode()
    assert "Servers in" in page and "other" in page


def test_without_server_the_page_lists_the_entries_and_starts_only_those(page_factory, tmp_path, streamable):
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    config = vscode / "mcp.json"
    config.write_text("""{
      // comments and trailing commas: VS Code's file is JSON5
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "web": {"type": "http", "url": "%s", "headers": {"X-Api-Key": "k-123"},},
        "local": {"type": "stdio", "command": "%s", "args": ["%s"]},
        "needs-input": {"type": "stdio", "command": "python", "env": {"KEY": "${input:key}"}},
      },
    }""" % (streamable, PYTHON, FIXTURES / "raw_server.py"))
    inspector = page_factory([], "--config", str(config))
    page = inspector.request("GET", "/")[2].decode()
    assert "web" in page and "local" in page and "${input:key}" in page
    assert not events(inspector, "spawn") and not events(inspector, "connect")  # nothing runs until picked
    assert inspector.post("/config/start", {"name": "python -c evil"})[0] == 404
    assert inspector.post("/config/start", {"name": "needs-input"})[0] == 422
    assert inspector.post("/config/start", {"name": "local"})[0] == 200
    wait_tools(inspector)
    assert inspector.post("/config/start", {"name": "web"})[0] == 200
    wait_for(lambda: events(inspector, "connect"), 15, message="connected to the web entry")
    wait_for(lambda: len(events(inspector, "handshake")) == 2, 15, message="the web entry's handshake")
    targets = [e["detail"] for e in events(inspector, "target")]
    assert [t["server"] for t in targets] == ["local", "web"]
    assert targets[1]["headers"] == {"X-Api-Key": "[REDACTED]"} and "k-123" not in inspector.record.read_text()
    snippet = inspector.request("GET", "/config/snippet?flavour=vscode", headers={"Accept": "application/json"})[2]
    entry = json.loads(snippet)["servers"]["web"]
    assert entry["url"] == streamable and "k-123" not in snippet.decode()


def test_copy_server_entry_for_a_command(page_factory):
    inspector = page_factory(fixture_command("raw_server"), "-e", "TOKEN=abc-secret")
    wait_tools(inspector)
    for flavour, key in (("claude", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers")):
        status, headers, body = inspector.request("GET", f"/config/snippet?flavour={flavour}")
        assert status == 200 and headers["content-type"].startswith("text/plain")
        entry = json.loads(body)[key]["raw_server"]
        assert [entry["command"], *entry["args"]] == fixture_command("raw_server")
        assert "abc-secret" not in body.decode() and "TOKEN" in body.decode()
    assert inspector.request("GET", "/config/snippet?flavour=zed")[0] == 400


def test_a_config_file_with_problems_says_so_in_one_line(tmp_path):
    bad = tmp_path / "mcp.json"
    bad.write_text('{"servers": {"a": {"type": "stdio", "command": "x",}')
    result = mcp(["--no-open", "--config", str(bad)], tmp_path, timeout=20)
    assert result.returncode == 2 and "line" in result.stderr and "Traceback" not in result.stderr
    result = mcp(["--no-open", "--config", str(FIXTURES.parent / "nope.json")], tmp_path, timeout=20)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    good = tmp_path / "c.json"
    good.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}))
    result = mcp(["--no-open", "--config", str(good), "--server", "zzz"], tmp_path, timeout=20)
    assert result.returncode == 2 and "a, b" in result.stderr, result.stderr


def test_call_explains_a_modern_error_in_words(streamable, tmp_path):
    """list_my_roots needs the roots capability, which `call` does not declare: -32021, explained on stderr."""
    result = mcp(["call", "--url", streamable, "--tool", "list_my_roots"], tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == -32021
    assert "Missing client capability (-32021)" in result.stderr and "roots" in result.stderr


def test_copy_as_command_for_an_http_target(page_factory, streamable, tmp_path):
    inspector = page_factory([], "--url", streamable, "-H", "X-Api-Key: k-999")
    wait_tools(inspector)
    answer = call_result(inspector, "slow_count", {"steps": 1, "delay": 0.01})
    assert answer["result"]["content"]
    seq = next(r["seq"] for r in messages(inspector) if r["dir"] == "to_server"
               and r["msg"].get("method") == "tools/call")
    line = inspector.request("GET", f"/records/{seq}/command")[2].decode().strip()
    assert f"--url {streamable}" in line
    assert '-H "X-Api-Key: ${X_API_KEY:?set X_API_KEY to the value of the X-Api-Key header}"' in line
    assert "k-999" not in line and "io.modelcontextprotocol" not in line and " -- " not in line
    again = subprocess.run(line.replace("mcp-inspect", f"{PYTHON} -m inspector.cli", 1), shell=True,
                           capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "X_API_KEY": "k-999"})
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["content"][0]["text"] == "Counted to 1."


def test_restart_of_an_http_target_reconnects_and_diffs(page_factory, streamable):
    inspector = page_factory([], "--url", streamable, "--protocol", "legacy")
    wait_tools(inspector)
    # The diff compares with the first complete listing (tools, resources, prompts): restart once there is one.
    wait_for(lambda: inspector.services.restarter.has_baseline, 15, message="the first listing")
    status, _, _ = inspector.post("/server/restart")
    assert status == 200
    wait_for(lambda: len(events(inspector, "handshake")) == 2, 15, message="a second handshake")
    diff = wait_for(lambda: events(inspector, "diff"), 15, message="the restart's diff")[0]["detail"]
    assert "nothing changed" in diff["summary"].lower() or diff.get("sections") == {}
    assert len(events(inspector, "connect")) == 2 and not events(inspector, "spawn")
    ends = [e["detail"] for e in events(inspector, "exit")]
    assert ends and ends[0]["reason"] == "the connection was closed"
