"""The HTTP transport against real servers on loopback, over real sockets.

Two kinds of server: the official Python SDK (tests/fixtures/http_sdk_server.py) for what a correct MCP server
puts on the wire in both eras and over legacy HTTP+SSE, and a small stdlib server in this file that answers
the ways deployments go wrong (an HTML page, a 500, redirects elsewhere, a 401, a server that never answers).
The only stand-in is a spy on socket.create_connection, to prove that a refused redirect made no connection.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from conftest import free_port, start_http_fixture, stop_process_group, wait_for

from inspector.transport import HttpTransport, SpawnError, Transport
from inspector.transport.http import AUTH_HINT, ConnectError, HttpConnection, header_value
from inspector.transport.stdio import StdioProcess

pytestmark = pytest.mark.timeout(60)

MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-inspect-tests", "version": "0"},
}


# -- helpers ---------------------------------------------------------------------------------------------------


class Recorder:
    """Collects everything the connection reports, and waits for it."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.messages: list[tuple[dict | None, dict]] = []
        self.raw: list[bytes] = []
        self.events: list[tuple[str, dict]] = []
        self.failed: list[tuple[object, str]] = []
        self.exits: list = []
        self.expired = 0

    def _add(self, action) -> None:
        with self.cond:
            action()
            self.cond.notify_all()

    def on_message(self, raw: bytes, meta: dict) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        self._add(lambda: (self.raw.append(raw), self.messages.append((msg, meta))))

    def on_event(self, name: str, detail: dict) -> None:
        self._add(lambda: self.events.append((name, detail)))

    def on_send_failed(self, request_id, reason: str) -> None:
        self._add(lambda: self.failed.append((request_id, reason)))

    def on_exit(self, info) -> None:
        self._add(lambda: self.exits.append(info))

    def on_session_expired(self) -> None:
        def bump():
            self.expired += 1
        self._add(bump)

    def wait(self, predicate, timeout: float = 10.0, what: str = "condition"):
        with self.cond:
            assert self.cond.wait_for(predicate, timeout), f"timed out waiting for {what}; events={self.events}"
            return predicate()

    def response(self, request_id, timeout: float = 10.0) -> tuple[dict, dict]:
        def found():
            return next(((m, meta) for m, meta in self.messages
                         if isinstance(m, dict) and m.get("id") == request_id and "method" not in m), None)
        return self.wait(found, timeout, f"the response to {request_id}")

    def failure(self, request_id, timeout: float = 10.0) -> str:
        def found():
            return next((reason for rid, reason in self.failed if rid == request_id), None)
        return self.wait(found, timeout, f"the failure of {request_id}")

    def transport_errors(self) -> list[dict]:
        with self.cond:
            return [detail for name, detail in self.events if name == "transport-error"]

    def notes(self) -> list[str]:
        with self.cond:
            return [detail.get("note", "") for name, detail in self.events if name == "transport"]


@pytest.fixture
def connect():
    """connect(url, **options) -> (started HttpConnection, Recorder); stopped at the end of the test."""
    made: list[HttpConnection] = []

    def _connect(url: str, **options) -> tuple[HttpConnection, Recorder]:
        rec = Recorder()
        conn = HttpConnection(url, on_message=rec.on_message, on_event=rec.on_event,
                              on_send_failed=rec.on_send_failed, on_exit=rec.on_exit,
                              on_session_expired=rec.on_session_expired, **options)
        conn.start()
        made.append(conn)
        return conn, rec

    yield _connect
    for conn in made:
        started = time.monotonic()
        conn.stop(stdin_grace=0.5)
        assert time.monotonic() - started < 4.0
    # stop() closes every stream: no thread of ours is left reading. Wait on the threads themselves.
    deadline = time.monotonic() + 3.0
    for thread in our_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    assert [thread.name for thread in our_threads()] == []


def our_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcp-http") and t.is_alive()]


def send(conn: HttpConnection, msg: dict) -> None:
    conn.send((json.dumps(msg) + "\n").encode())


def request(request_id, method: str, params: dict | None = None) -> dict:
    msg = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def initialize(request_id=1, version: str = "2025-11-25") -> dict:
    return request(request_id, "initialize", {"protocolVersion": version, "capabilities": {},
                                              "clientInfo": {"name": "mcp-inspect-tests", "version": "0"}})


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def handshake(conn: HttpConnection, rec: Recorder) -> str:
    """initialize + initialized; returns the session id."""
    send(conn, initialize(1))
    _, meta = rec.response(1)
    send(conn, INITIALIZED)
    return meta["headers"].get("mcp-session-id")


def start_sdk_server(transport: str, log: Path) -> tuple[subprocess.Popen, int]:
    return start_http_fixture("http_sdk_server", transport, log)


@pytest.fixture(scope="module")
def sdk_http_server(tmp_path_factory):
    """The SDK over Streamable HTTP: (its /mcp URL, the file its stderr goes to)."""
    log = tmp_path_factory.mktemp("sdk") / "http.log"
    proc, port = start_sdk_server("streamable-http", log)
    yield f"http://127.0.0.1:{port}/mcp", log
    stop_process_group(proc)


@pytest.fixture(scope="module")
def sdk_http(sdk_http_server):
    return sdk_http_server[0]


@pytest.fixture(scope="module")
def sdk_sse(tmp_path_factory):
    proc, port = start_sdk_server("sse", tmp_path_factory.mktemp("sdk") / "sse.log")
    yield f"http://127.0.0.1:{port}/sse"
    stop_process_group(proc)


# -- the official SDK over Streamable HTTP, handshake era ---------------------------------------------------------


def test_handshake_era_keeps_the_session_opens_the_get_stream_and_calls_tools(connect, sdk_http):
    conn, rec = connect(sdk_http)
    send(conn, initialize(1))
    answer, meta = rec.response(1)
    session_id = meta["headers"]["mcp-session-id"]
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert meta["status"] == 200 and meta["via"] == "post"
    assert conn.chosen_transport == "streamable-http" and conn.pid is None
    send(conn, INITIALIZED)
    rec.wait(lambda: any("opened the GET stream" in note for note in rec.notes()), what="the GET stream")

    # Later requests carry the session id and the negotiated version; the user sees them in the meta.
    listing = request(2, "tools/list")
    headers = conn.request_meta(listing)["headers"]
    assert headers["Mcp-Session-Id"] == session_id and headers["MCP-Protocol-Version"] == "2025-11-25"
    assert headers["Accept"] == "application/json, text/event-stream"
    send(conn, listing)
    tools, _ = rec.response(2)
    assert {"echo", "count", "nudge", "nap", "hiccup"} <= {tool["name"] for tool in tools["result"]["tools"]}
    send(conn, request(3, "tools/call", {"name": "echo", "arguments": {"text": "hello"}}))
    called, _ = rec.response(3)
    assert called["result"]["content"][0]["text"] == "hello"

    # A notification that belongs to no request comes on the GET stream.
    send(conn, request(4, "tools/call", {"name": "nudge", "arguments": {}}))
    rec.response(4)
    changed = rec.wait(lambda: next((meta for m, meta in rec.messages
                                     if m and m.get("method") == "notifications/tools/list_changed"), None))
    assert changed["via"] == "get-stream" and changed["headers"]["content-type"].startswith("text/event-stream")

    # This server primes every stream (an id with empty data): none of that reaches the session.
    assert all(m is not None for m, _ in rec.messages) and not rec.failed
    assert not rec.transport_errors()

    conn.stop()
    assert rec.exits and rec.exits[0].reason == "the connection was closed"
    assert rec.exits[0].describe() == "the connection was closed"
    assert any(f"ended session {session_id} with DELETE" in note for note in rec.notes())
    with pytest.raises(BrokenPipeError):
        send(conn, request(5, "tools/list"))
    gone = httpx.post(sdk_http, content=json.dumps(request(9, "tools/list")),
                      headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                               "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    assert gone.status_code == 404  # stop() ended the session on the server


def test_progress_and_log_notifications_arrive_before_the_response(connect, sdk_http):
    conn, rec = connect(sdk_http, transport="streamable-http")
    handshake(conn, rec)
    send(conn, request(7, "tools/call", {"name": "count", "arguments": {"steps": 3},
                                         "_meta": {"progressToken": "tok"}}))
    rec.response(7)
    order = [(m.get("method") or f"response {m.get('id')}", meta["via"]) for m, meta in rec.messages if m]
    at = order.index(("response 7", "post"))
    before = order[:at]
    assert before.count(("notifications/progress", "post")) == 3
    assert before.count(("notifications/message", "post")) == 3
    progress = [m for m, _ in rec.messages if m and m.get("method") == "notifications/progress"]
    assert [p["params"]["progress"] for p in progress] == [1, 2, 3]


def test_a_request_stream_closed_early_is_resumed_with_last_event_id(connect, sdk_http):
    conn, rec = connect(sdk_http)
    handshake(conn, rec)
    send(conn, request(8, "tools/call", {"name": "hiccup", "arguments": {}}))
    answer, meta = rec.response(8)
    assert answer["result"]["content"][0]["text"] == "answered after the hiccup"
    assert meta["via"] == "get-stream" and meta.get("resumed") is True and meta["event_id"]
    assert any("resuming with Last-Event-ID" in note for note in rec.notes())
    assert not rec.failed


def test_a_404_for_our_session_expires_it_and_fails_the_request(connect, sdk_http):
    conn, rec = connect(sdk_http)
    session_id = handshake(conn, rec)
    # The server forgets the session (as after a restart or an idle timeout).
    deleted = httpx.delete(sdk_http, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    assert deleted.status_code == 200
    send(conn, request(2, "tools/list"))
    assert "expired" in rec.failure(2)
    assert rec.wait(lambda: rec.expired) == 1
    expired = [d for d in rec.transport_errors() if d.get("kind") == "session-expired"]
    assert expired and expired[0]["status"] == 404 and session_id in expired[0]["error"]
    assert "Mcp-Session-Id" not in conn.request_meta(request(3, "tools/list"))["headers"]
    # Initializing again starts a new session on the same connection.
    send(conn, initialize(4))
    _, meta = rec.response(4)
    assert meta["headers"]["mcp-session-id"] not in (None, session_id)
    send(conn, INITIALIZED)
    send(conn, request(5, "tools/list"))
    assert "tools" in rec.response(5)[0]["result"]


# -- the official SDK over Streamable HTTP, 2026-07-28 --------------------------------------------------------------


def modern(request_id, method: str, params: dict | None = None) -> dict:
    return request(request_id, method, {**(params or {}), "_meta": dict(MODERN_META)})


def test_modern_era_sends_the_request_headers_the_server_checks(connect, sdk_http):
    conn, rec = connect(sdk_http)
    send(conn, modern(1, "server/discover"))
    discovered, meta = rec.response(1)
    assert MODERN in discovered["result"]["supportedVersions"]
    assert "mcp-session-id" not in meta["headers"]

    call = modern(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    headers = conn.request_meta(call)["headers"]
    assert headers["MCP-Protocol-Version"] == MODERN and headers["Mcp-Method"] == "tools/call"
    assert headers["Mcp-Name"] == "echo" and "Mcp-Session-Id" not in headers
    send(conn, call)
    assert rec.response(2)[0]["result"]["content"][0]["text"] == "hi"

    # A name outside printable ASCII travels base64-wrapped; the server decodes it and finds it equal to the body's.
    odd = modern(3, "tools/call", {"name": "échö", "arguments": {}})
    assert conn.request_meta(odd)["headers"]["Mcp-Name"] == header_value("échö") != "échö"
    send(conn, odd)
    answer, _ = rec.response(3)
    assert "error" not in answer and answer["result"]["isError"] is True  # unknown tool, but the headers matched
    assert not rec.failed and not rec.transport_errors()
    # Notifications carry Mcp-Method too; no GET stream was opened in this era.
    assert conn.request_meta({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": 99}})["headers"]["Mcp-Method"] == "notifications/cancelled"
    assert not any("GET stream" in note for note in rec.notes())


def test_the_sdk_rejects_a_header_that_disagrees_with_the_body(connect, sdk_http):
    # The counter-check for the test above: a wrong Mcp-Method (the user's header wins) gets -32020.
    conn, rec = connect(sdk_http, headers={"Mcp-Method": "tools/list"})
    send(conn, modern(1, "server/discover"))
    answer, meta = rec.response(1)
    assert answer["error"]["code"] == -32020 and meta["status"] == 400


def test_modern_era_cancel_closes_the_response_stream_instead_of_posting(connect, sdk_http_server):
    url, log = sdk_http_server
    conn, rec = connect(url)
    send(conn, modern(1, "tools/call", {"name": "nap", "arguments": {"seconds": 30, "tag": "modern-cancel"}}))
    # The POST is on the wire and the server is running the tool: its response stream is open.
    wait_for(lambda: "nap modern-cancel started" in log.read_text(errors="replace"), message="the nap to start")
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 1, "_meta": dict(MODERN_META)}}
    meta = conn.request_meta(cancel)
    assert meta["method"] is None and "is the cancellation" in meta["note"]
    started = time.monotonic()
    send(conn, cancel)
    assert rec.failure(1, timeout=5).startswith("cancelled")
    assert time.monotonic() - started < 3
    assert "cancelled request 1 by closing its response stream" in rec.notes()
    assert not rec.transport_errors()


# -- the official SDK over legacy HTTP+SSE --------------------------------------------------------------------------


def test_legacy_sse_transport(connect, sdk_sse):
    conn, rec = connect(sdk_sse, transport="sse")
    assert conn.chosen_transport == "sse"
    endpoint = next(d["endpoint"] for name, d in rec.events if "endpoint" in d)
    assert endpoint.startswith(sdk_sse.replace("/sse", "/messages/")) and "session_id=" in endpoint
    assert conn.request_meta(initialize(1))["url"] == endpoint
    send(conn, initialize(1))
    answer, meta = rec.response(1)
    assert meta["via"] == "sse-stream" and answer["result"]["serverInfo"]["name"] == "http-fixture"
    send(conn, INITIALIZED)
    send(conn, request(2, "tools/call", {"name": "echo", "arguments": {"text": "over sse"}}))
    assert rec.response(2)[0]["result"]["content"][0]["text"] == "over sse"
    assert not rec.failed and not rec.transport_errors()


def test_auto_falls_back_to_legacy_sse_and_resends_the_first_message(connect, sdk_sse):
    conn, rec = connect(sdk_sse)  # transport="auto"
    send(conn, initialize(1))
    send(conn, INITIALIZED)
    send(conn, request(2, "tools/list"))
    assert rec.response(1)[1]["via"] == "sse-stream"
    assert rec.response(2)[1]["via"] == "sse-stream"
    chosen = [d for name, d in rec.events if name == "transport" and "chosen" in d]
    assert chosen[0]["chosen"] == "sse" and "405" in chosen[0]["why"]
    assert conn.chosen_transport == "sse" and not rec.failed


# -- a stdlib server that misbehaves in the usual ways --------------------------------------------------------------


class Quirks(BaseHTTPRequestHandler):
    """Each path answers one way; POST bodies are JSON-RPC lines from the test."""

    protocol_version = "HTTP/1.1"
    state: ClassVar[dict] = {}

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def _reply(self, status: int, body: bytes | str = b"", content_type: str | None = None, **headers: str) -> None:
        body = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        path = self.path.split("?")[0]
        self.state["posts"].append((path, body))
        msg = json.loads(body) if body.strip().startswith(b"{") else {}
        other, own = self.state["other_port"], self.state["own_port"]
        redirects = {
            "/to-other-port": (302, f"http://127.0.0.1:{other}/mcp"),
            "/to-metadata": (302, "http://169.254.169.254/latest/meta-data/"),
            "/to-own-port": (302, f"http://127.0.0.1:{own}/api"),
            "/to-file": (302, "file:///etc/passwd"),
            "/moved": (307, "/echo"),
            "/see-other": (302, "/echo"),
        }
        if path in redirects:
            status, location = redirects[path]
            self._reply(status, "", "text/plain", Location=location)
        elif path == "/echo":
            seen = {name.lower(): value for name, value in self.headers.items()}
            self._reply(200, json.dumps({"jsonrpc": "2.0", "id": msg.get("id"),
                                         "result": {"path": path, "headers": seen}}), "application/json")
        elif path == "/html":
            self._reply(200, "<html><body>Welcome to nginx!</body></html>", "text/html")
        elif path == "/boom":
            self._reply(500, "Internal Server Error: boom", "text/plain")
        elif path == "/not-jsonrpc":
            self._reply(200, '{"status": "ok"}', "application/json")
        elif path == "/auth":
            self._reply(401, '{"error": "invalid_token"}', "application/json",
                        WWW_Authenticate='Bearer resource_metadata="http://127.0.0.1/.well-known/oauth"')
        elif path == "/null-id-error":
            self._reply(400, json.dumps({"jsonrpc": "2.0", "id": None,
                                         "error": {"code": -32600, "message": "Bad Request: no session"}}),
                        "application/json")
        elif path == "/accepted":
            self._reply(202, "Accepted", "text/plain")
        elif path == "/neither":
            self._reply(405, "Method Not Allowed", "text/plain")
        elif path == "/gs":  # a handshake-era server whose GET stream asks to be resumed
            if msg.get("method") == "initialize":
                self._reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                             "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                        "serverInfo": {"name": "gs", "version": "0"}}}),
                            "application/json", Mcp_Session_Id="gs-1")
            else:
                self._reply(202)
        elif path == "/slow-init":  # a slow initialize answer: what comes after must still carry the session
            if msg.get("method") == "initialize":
                # The server's slowness, not synchronisation: a client that waits for this answer passes however
                # long it takes; one that does not gets its next POSTs here first, without the session.
                time.sleep(0.3)
                self._reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                             "result": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                        "serverInfo": {"name": "slow", "version": "0"}}}),
                            "application/json", Mcp_Session_Id="s-9")
            elif "id" in msg:
                seen = {name.lower(): value for name, value in self.headers.items()}
                self._reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"headers": seen}}),
                            "application/json")
            else:
                self.state["slow_init_notes"].append({k.lower(): v for k, v in self.headers.items()})
                self._reply(202)
        elif path == "/hang":
            self.state["hang_seen"].set()
            self.state["release"].wait(20)  # accept, read, never answer
        else:
            self._reply(404, "not here", "text/plain")

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path in ("/sse-short", "/sse-elsewhere"):
            endpoint = "/echo?session=1" if path == "/sse-short" else \
                f"http://127.0.0.1:{self.state['other_port']}/messages"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(f": hello\r\n\r\nevent: endpoint\r\ndata: {endpoint}\r\n\r\n".encode())
            self.wfile.flush()
            # The stream stays open until the test ends it (/sse-short) or the module's servers stop.
            (self.state["sse_end"] if path == "/sse-short" else self.state["release"]).wait(20)
            self.close_connection = True  # then the stream ends
        elif path == "/gs":
            self._get_stream()
        elif path in ("/html", "/neither"):
            self._reply(200, "<html>not an event stream</html>", "text/html")
        elif path == "/slow-init":
            self._reply(405, "", "text/plain")
        else:
            self._reply(404, "not here", "text/plain")


    def _get_stream(self) -> None:
        """GET #1 sends retry, an id and a message, then closes; #2 resumes after that id; later ones are empty."""
        gets = self.state["gets"]
        gets.append((self.headers.get("Last-Event-ID"), self.headers.get("Mcp-Session-Id")))
        events = {1: "retry: 100\nid: a1\ndata: " + json.dumps({"jsonrpc": "2.0", "method": "notifications/one"}),
                  2: "id: a2\ndata: " + json.dumps({"jsonrpc": "2.0", "method": "notifications/two"})}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write((events.get(len(gets), ": nothing new") + "\n\n").encode())
        self.close_connection = True


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # aborted connections make the handler's late writes fail; that is the point of those tests


@pytest.fixture(scope="module")
def quirks():
    release = threading.Event()
    Quirks.state = {"posts": [], "gets": [], "slow_init_notes": [], "hang_seen": threading.Event(), "release": release,
                    "sse_end": threading.Event(), "other_port": free_port(), "own_port": free_port()}
    server = QuietServer(("127.0.0.1", 0), Quirks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Quirks.state["base"] = f"http://127.0.0.1:{server.server_address[1]}"
    Quirks.state["port"] = server.server_address[1]
    yield Quirks.state
    release.set()
    Quirks.state["sse_end"].set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path, status, content_type, words", [
    ("/html", 200, "text/html", "not an MCP answer: HTTP 200 with text/html"),
    ("/boom", 500, "text/plain", "HTTP 500 Internal Server Error (text/plain)"),
    ("/not-jsonrpc", 200, "application/json", "not an MCP answer: HTTP 200 with application/json"),
])
def test_an_answer_that_is_not_mcp_is_a_transport_error(connect, quirks, path, status, content_type, words):
    conn, rec = connect(quirks["base"] + path)
    send(conn, request(1, "tools/list"))
    assert words in rec.failure(1)
    (error,) = rec.transport_errors()
    assert words in error["error"] and error["status"] == status
    assert error["content_type"] == content_type and error["url"] == quirks["base"] + path
    assert error["body"] and len(error["body"]) <= 500
    assert conn.chosen_transport is None  # nothing MCP-like answered yet: auto has not decided
    assert not rec.messages


@pytest.mark.parametrize("path, location, why", [
    ("/to-other-port", "http://127.0.0.1:{other_port}/mcp", "it leads to another origin"),
    ("/to-metadata", "http://169.254.169.254/latest/meta-data/", "link-local address"),
    ("/to-own-port", "http://127.0.0.1:{own_port}/api", "that is mcp-inspect's own port"),
    ("/to-file", "file:///etc/passwd", "only http(s) is followed"),
])
def test_a_redirect_elsewhere_is_refused_without_connecting(connect, quirks, monkeypatch, path, location, why):
    location = location.format(**quirks)
    dialled: list = []
    real = socket.create_connection

    def spy(address, *args, **kwargs):
        dialled.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", spy)
    conn, rec = connect(quirks["base"] + path, refuse_ports=[quirks["own_port"]],
                        headers={"Authorization": "Bearer S3CR3T"})
    send(conn, request(1, "tools/list"))
    reason = rec.failure(1)
    (error,) = rec.transport_errors()
    assert error["error"].startswith(f"refused a redirect to {location}: ") and why in error["error"]
    assert reason == error["error"] and error["status"] == 302 and error["location"] == location
    assert dialled == [("127.0.0.1", quirks["port"])]  # the one connection: to the server we were pointed at


def test_a_same_origin_redirect_is_followed_with_the_body(connect, quirks):
    conn, rec = connect(quirks["base"] + "/moved")
    send(conn, request(5, "tools/list"))
    answer, meta = rec.response(5)
    assert answer["result"]["path"] == "/echo" and meta["status"] == 200
    assert f"followed a 307 redirect to {quirks['base']}/echo" in rec.notes()
    assert not rec.failed


def test_a_302_for_a_post_is_not_turned_into_a_get(connect, quirks):
    conn, rec = connect(quirks["base"] + "/see-other")
    send(conn, request(1, "tools/list"))
    assert "did not follow a 302 redirect" in rec.failure(1)


def test_a_401_says_authorization_is_needed(connect, quirks):
    conn, rec = connect(quirks["base"] + "/auth")
    send(conn, request(1, "tools/list"))
    assert AUTH_HINT in rec.failure(1)
    (error,) = rec.transport_errors()
    assert error["status"] == 401 and AUTH_HINT in error["error"]
    assert error["www_authenticate"] == 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth"'


def test_the_users_headers_reach_the_server_but_the_meta_redacts_them(connect, quirks):
    conn, rec = connect(quirks["base"] + "/echo", headers={"Authorization": "Bearer S3CR3T-1", "X-Team": "blue"})
    msg = request(1, "tools/list")
    meta = conn.request_meta(msg)
    assert meta["method"] == "POST" and meta["url"] == quirks["base"] + "/echo"
    assert meta["headers"]["Authorization"] == "[REDACTED]" and meta["headers"]["X-Team"] == "[REDACTED]"
    assert "S3CR3T" not in json.dumps(meta) and "blue" not in json.dumps(meta)
    send(conn, msg)
    seen = rec.response(1)[0]["result"]["headers"]
    assert seen["authorization"] == "Bearer S3CR3T-1" and seen["x-team"] == "blue"
    assert seen["accept"] == "application/json, text/event-stream" and seen["content-type"] == "application/json"


def test_a_jsonrpc_error_without_our_id_is_delivered_and_fails_the_request(connect, quirks):
    conn, rec = connect(quirks["base"] + "/null-id-error")
    send(conn, request(1, "tools/list"))
    assert "names no request of ours" in rec.failure(1)
    ((error, meta),) = rec.messages
    assert error["id"] is None and error["error"]["code"] == -32600 and meta["status"] == 400


def test_a_202_for_a_request_fails_it_and_is_fine_for_a_notification(connect, quirks):
    conn, rec = connect(quirks["base"] + "/accepted")
    send(conn, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    send(conn, request(1, "tools/list"))
    assert "202" in rec.failure(1)
    assert rec.failed == [(1, rec.failed[0][1])] and not rec.messages and not rec.transport_errors()


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_server_that_never_answers_can_be_cancelled(connect, quirks, era):
    quirks["hang_seen"].clear()
    posts_before = len(quirks["posts"])
    conn, rec = connect(quirks["base"] + "/hang")
    first = request(1, "tools/call", {"name": "x"}) if era == "handshake" else modern(1, "tools/call", {"name": "x"})
    send(conn, first)
    assert quirks["hang_seen"].wait(5)
    started = time.monotonic()
    params = {"requestId": 1} if era == "handshake" else {"requestId": 1, "_meta": dict(MODERN_META)}
    send(conn, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    assert rec.failure(1, timeout=5).startswith("cancelled")
    assert time.monotonic() - started < 3

    def methods_posted() -> list[str]:
        return [json.loads(body).get("method") for _, body in quirks["posts"][posts_before:]]

    # Handshake era: the notification is POSTed too (it is the cancellation there); 2026-07-28: closing is enough.
    if era == "handshake":
        wait_for(lambda: len(methods_posted()) == 2, message="the cancellation's POST")
        assert methods_posted() == ["tools/call", "notifications/cancelled"]
    else:
        # POSTs go out in order: once a later message has reached the server, a POSTed cancellation would have too.
        quirks["hang_seen"].clear()
        send(conn, modern(2, "tools/list"))
        assert quirks["hang_seen"].wait(5)
        assert methods_posted() == ["tools/call", "tools/list"]


def test_stop_ends_a_request_that_never_gets_an_answer(connect, quirks):
    quirks["hang_seen"].clear()
    conn, rec = connect(quirks["base"] + "/hang")
    send(conn, request(1, "tools/list"))
    assert quirks["hang_seen"].wait(5)
    started = time.monotonic()
    conn.stop()
    assert time.monotonic() - started < 3
    assert conn.exited.is_set() and rec.exits[0].reason == "the connection was closed"
    assert "closed" in rec.failure(1, timeout=1)


def test_connection_refused_and_tls_errors_are_clear(connect, quirks):
    closed_port = free_port()
    conn, rec = connect(f"http://127.0.0.1:{closed_port}/mcp")
    send(conn, request(1, "tools/list"))
    assert rec.failure(1) == f"connection refused: nothing is listening at 127.0.0.1:{closed_port}"
    assert rec.transport_errors()[0]["status"] is None

    conn, rec = connect(quirks["base"].replace("http://", "https://") + "/echo")  # TLS to a plain-HTTP port
    send(conn, request(1, "tools/list"))
    assert rec.failure(1).startswith("TLS error with 127.0.0.1:")


def test_a_connect_timeout_is_clear_and_quick(connect):
    # A listener whose accept queue is full: the kernel drops the next SYN, so connecting hangs.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):
            conn, rec = connect(f"http://127.0.0.1:{port}/mcp", connect_timeout=0.5)
            started = time.monotonic()
            send(conn, request(1, "tools/list"))
            assert rec.failure(1) == f"could not connect to 127.0.0.1:{port} within 0.5 s (connect timeout)"
            assert time.monotonic() - started < 3


def test_start_refuses_urls_it_cannot_use(quirks):
    def make(url: str, **options) -> HttpConnection:
        return HttpConnection(url, on_message=print, on_event=print, on_send_failed=print, on_exit=print, **options)

    for url in ("ftp://example.com/mcp", "http:///mcp", "not a url"):
        with pytest.raises(ConnectError):
            make(url).start()
    with pytest.raises(ConnectError, match="mcp-inspect's own port"):
        make("http://127.0.0.1:8765/mcp", refuse_ports=[8765]).start()
    assert issubclass(ConnectError, SpawnError)
    assert make(quirks["base"] + "/mcp").stop() is None  # never started: nothing to stop


def test_both_transports_have_the_transport_surface(tmp_path):
    http = HttpConnection("http://127.0.0.1:1/mcp", on_message=print, on_event=print, on_send_failed=print,
                          on_exit=print)
    stdio = StdioProcess(["true"], cwd=str(tmp_path), env={}, on_stdout=print, on_stderr=print, on_exit=print)
    assert isinstance(http, HttpTransport)
    assert isinstance(stdio, Transport) and not isinstance(stdio, HttpTransport)


def test_legacy_sse_start_failures_are_one_line_reasons(quirks):
    def start(url: str) -> str:
        conn = HttpConnection(url, transport="sse", on_message=print, on_event=lambda *a: None,
                              on_send_failed=print, on_exit=print, connect_timeout=3)
        with pytest.raises(ConnectError) as caught:
            conn.start()
        assert "\n" not in str(caught.value)
        return str(caught.value)

    assert "is not an HTTP+SSE endpoint" in start(quirks["base"] + "/html")
    assert "connection refused" in start(f"http://127.0.0.1:{free_port()}/sse")
    assert start(quirks["base"] + "/sse-elsewhere").startswith(
        f"refused the SSE endpoint http://127.0.0.1:{quirks['other_port']}/messages")


def test_auto_fails_clearly_when_the_server_speaks_neither_transport(connect, quirks):
    conn, rec = connect(quirks["base"] + "/neither")
    send(conn, initialize(1))
    reason = rec.failure(1)
    assert "speaks neither Streamable HTTP (the first POST got HTTP 405) nor HTTP+SSE" in reason
    assert conn.chosen_transport is None


def test_the_end_of_the_legacy_sse_stream_ends_the_connection(connect, quirks):
    quirks["sse_end"].clear()
    conn, rec = connect(quirks["base"] + "/sse-short", transport="sse")
    assert not conn.exited.is_set() and not rec.exits  # the endpoint came and the stream is still open
    quirks["sse_end"].set()  # now the server ends it
    info = rec.wait(lambda: rec.exits and rec.exits[0], timeout=5, what="the exit")
    assert info.reason == "the server closed the SSE stream" and info.describe() == info.reason
    assert conn.exited.is_set()
    with pytest.raises(BrokenPipeError):
        send(conn, request(1, "tools/list"))
    assert conn.stop() is info


def test_messages_sent_at_once_wait_for_the_initialize_answer(connect, quirks):
    conn, rec = connect(quirks["base"] + "/slow-init", transport="streamable-http")
    send(conn, initialize(1))
    send(conn, INITIALIZED)
    send(conn, request(2, "tools/list"))
    seen = rec.response(2)[0]["result"]["headers"]
    assert seen["mcp-session-id"] == "s-9" and seen["mcp-protocol-version"] == "2025-06-18"
    (initialized,) = quirks["slow_init_notes"]
    assert initialized["mcp-session-id"] == "s-9" and initialized["mcp-protocol-version"] == "2025-06-18"
    ids = [m["id"] for m, _ in rec.messages]
    assert ids == [1, 2]
    rec.wait(lambda: any("no GET stream (HTTP 405)" in note for note in rec.notes()), what="the 405 note")
    assert not rec.transport_errors() and not rec.failed


def test_the_get_stream_reconnects_with_last_event_id_but_not_forever(connect, quirks):
    conn, rec = connect(quirks["base"] + "/gs")
    handshake(conn, rec)
    rec.wait(lambda: any("not reconnecting" in note for note in rec.notes()), what="the GET stream giving up")
    got = [(m["method"], meta["via"], meta.get("event_id")) for m, meta in rec.messages if "method" in m]
    assert got == [("notifications/one", "get-stream", "a1"), ("notifications/two", "get-stream", "a2")]
    # Resumed after the last id each time; two empty reconnects in a row, then no more.
    assert quirks["gets"] == [(None, "gs-1"), ("a1", "gs-1"), ("a2", "gs-1"), ("a2", "gs-1")]
    assert sum("reconnecting in" in note for note in rec.notes()) == 3


def test_a_host_name_is_resolved_once_and_pinned(connect, quirks, monkeypatch):
    answers = iter(["127.0.0.1", "10.255.255.1", "10.255.255.1"])  # a rebinding DNS: first us, then elsewhere
    asked: list = []
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.test":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    conn, rec = connect(f"http://rebind.test:{quirks['port']}/echo")
    for request_id in (1, 2, 3):
        send(conn, request(request_id, "tools/list"))
        assert rec.response(request_id)[0]["result"]["headers"]["host"] == f"rebind.test:{quirks['port']}"
    assert asked == ["rebind.test"]


def test_subscriptions_listen_stays_open_until_cancelled(connect, sdk_http):
    conn, rec = connect(sdk_http)
    send(conn, modern(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    _, meta = rec.wait(lambda: next(((m, meta) for m, meta in rec.messages
                                       if m.get("method") == "notifications/subscriptions/acknowledged"), None))
    assert meta["via"] == "post"
    # A later event still arrives on the same stream: it stayed open after the acknowledgement.
    send(conn, modern(2, "tools/call", {"name": "announce", "arguments": {}}))
    assert rec.response(2)[0]["result"]["content"][0]["text"] == "announced"
    changed, meta = rec.wait(lambda: next(((m, meta) for m, meta in rec.messages
                                             if m.get("method") == "notifications/tools/list_changed"), None),
                             what="the tools/list_changed event on the listen stream")
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1 and meta["via"] == "post"
    assert not rec.failed  # no response to the listen request yet, and none is missed
    send(conn, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1, "_meta": dict(MODERN_META)}})
    assert rec.failure(1).startswith("cancelled")


def test_header_values_outside_printable_ascii_are_base64_wrapped():
    assert header_value("tools/call") == "tools/call"
    assert header_value("file:///tmp/a b.txt") == "file:///tmp/a b.txt"
    assert header_value("résumé") == "=?base64?csOpc3Vtw6k=?="
    assert header_value(" padded") == "=?base64?IHBhZGRlZA==?="
    assert header_value("line\nbreak").startswith("=?base64?")
    assert header_value("=?base64?abc?=") != "=?base64?abc?="  # a value that looks wrapped is wrapped again
