"""A light client for the headless commands: one server process, line by line, every line recorded.

`call` and `replay` need less than the page's Session and something different: no tool lists, no state for a
page, and replay must send the recording's own `initialize` (its protocol version and capabilities) rather than
ours. So this speaks raw JSON-RPC over StdioProcess directly, and records every line as the page does, so a
`--record` file of a headless run has the same shape as any other recording.

No Flask, no web UI here: `mcp-inspect call` must start fast.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from inspector import __version__
from inspector.protocol import eras, jsonrpc
from inspector.recording.files import RecordingWriter, header
from inspector.protocol.records import EVENT, INVALID, MESSAGE, STDERR, TO_SERVER, Record, record_server_line
from inspector.transport import ExitInfo, SpawnError
from inspector.transport.stdio import StdioProcess

# The handshake the page's Session sends (a test checks they agree). Not imported from session.py: that would pull
# the page's timeline store into a command that must start fast.
PROTOCOL_VERSION = "2025-11-25"
CLIENT_NAME = "mcp-inspect"

if TYPE_CHECKING:  # only for annotations: httpx and the targets stay unloaded for stdio runs
    from inspector.targets import HttpTarget

__all__ = ["Answer", "Exchange", "NoAnswer", "Sink", "SpawnError", "Wire", "close_store", "initialize_params",
           "open_store"]


class NoAnswer(Exception):
    """A request got no response: it timed out, or the server went away first."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        """timeout or exited."""


@dataclass
class Exchange:
    """One request we sent and are waiting on, keyed by the id that went over the wire."""

    id: Any
    method: str
    sent_at: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    response: dict | None = None
    """The response object (result or error), once it arrived."""
    exit: ExitInfo | None = None
    """Set when the server exited before answering."""
    failure: str | None = None
    """Set when the transport says no answer will come (HTTP: refused, failed, not MCP)."""

    def wait(self, timeout: float) -> dict:
        """The response message, or NoAnswer (timeout, exit)."""
        if not self.done.wait(max(0.0, timeout)):
            raise NoAnswer(f"{self.method}: no answer within {timeout:g} s", "timeout")
        if self.response is None:
            if self.failure:
                raise NoAnswer(f"{self.method}: {self.failure}", "transport")
            if self.exit and self.exit.reason:
                raise NoAnswer(f"{self.method}: {self.exit.reason} before the server answered", "exited")
            how = self.exit.describe() if self.exit else "went away"
            raise NoAnswer(f"{self.method}: the server {how} before answering", "exited")
        return self.response


# What a server-request handler returns: a reply message to send, or None to leave the request unanswered.
Answer = Callable[[dict], "dict | None"]


class Sink:
    """Numbers records and appends them to a recording: the part of the page's Store a headless command needs.

    Anything with the same `add(record) -> record` (a Store, to show a replay in the page) can take its place.
    """

    def __init__(self, writer: RecordingWriter) -> None:
        self.writer = writer
        self._seq = 0
        self._lock = threading.Lock()

    def add(self, record: Record) -> Record:
        """Give the record its seq and time, and write it."""
        with self._lock:
            self._seq += 1
            record.seq = self._seq
            record.t = record.t or time.time()
            self.writer.write_lines(record.to_line())
        return record


class Wire:
    """One run of a server command spoken to in raw JSON-RPC; every line in either direction goes to the store."""

    def __init__(self, store: Sink, command: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None,
                 on_stderr: Callable[[str], None] | None = None, answer: Answer | None = None,
                 http: "HttpTarget | None" = None) -> None:
        self.store = store
        self.http = http
        """An HTTP target instead of a command (--url, --transport, --header)."""
        self.command = list(command)
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)
        self._on_stderr = on_stderr
        self._answer = answer or default_answer
        self._waiting: dict[str, Exchange] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._process: StdioProcess | None = None
        self.exit_info: ExitInfo | None = None
        self.exit_recorded = threading.Event()
        self.modern_meta: dict | None = None
        """Set once the modern era is chosen: request() adds these `_meta` keys to every request."""

    def start(self) -> int:
        """Spawn the server (again, after a close); raises SpawnError with a one-line reason."""
        with self._lock:
            self.exit_info = None
        self.exit_recorded.clear()
        if self.http is not None:
            return self._connect_http(self.http)
        process = StdioProcess(self.command, cwd=self.cwd, env=self.env, on_stdout=self._on_stdout,
                               on_stderr=self._on_stderr_line, on_exit=self._on_exit,
                               on_spawn=lambda pid: self._event("spawn", {"pid": pid}))
        try:
            pid = process.start()
        except SpawnError as exc:
            self._event("spawn-failed", {"error": str(exc), "command": self.command})
            raise
        self._process = process
        return pid

    def _connect_http(self, http: "HttpTarget") -> int:
        from inspector.targets import http_connection  # httpx only for HTTP targets: `call` over stdio stays light

        connection = http_connection(http.url, transport=http.transport, headers=http.headers,
                                     on_message=self._on_stdout, on_event=self._event,
                                     on_send_failed=self._on_send_failed, on_exit=self._on_exit)
        self._event("connect", {"url": http.url, "transport": http.transport})
        try:
            connection.start()
        except SpawnError as exc:
            self._event("transport-error", {"error": str(exc), "url": http.url})
            raise
        self._process = connection
        return 0

    @property
    def exited(self) -> bool:
        """The server process is gone."""
        return self._process is None or self._process.exited.is_set()

    # -- sending ---------------------------------------------------------------------------------------------

    def expect(self, request_id: Any, method: str) -> Exchange:
        """Register interest in the response to an id before sending it: a fast answer must find its waiter."""
        exchange = Exchange(id=request_id, method=method)
        key = jsonrpc.id_key(request_id)
        if key is not None:
            with self._lock:
                if self.exit_info is not None:
                    exchange.exit = self.exit_info
                    exchange.done.set()
                else:
                    self._waiting[key] = exchange
        return exchange

    def send(self, msg: Any, *, origin: str | None = None) -> bool:
        """Record, then write one message; False when the server's stdin is closed."""
        return self._write(Record(MESSAGE, dir=TO_SERVER, msg=msg, origin=origin), jsonrpc.encode(msg))

    def send_raw(self, text: str) -> bool:
        """Write one line exactly as given (a recorded hand-made line that is not JSON-RPC)."""
        data = text.encode("utf-8", "replace").replace(b"\n", b" ")
        problem = jsonrpc.decode_line(data).problem or "sent as recorded"
        return self._write(Record(INVALID, dir=TO_SERVER, raw=text, error=problem), data + b"\n")

    def _write(self, record: Record, data: bytes) -> bool:
        process = self._process
        # One lock around record-then-write keeps the recording's order equal to the pipe's order.
        with self._send_lock:
            if process is not None and hasattr(process, "request_meta"):
                record.http = process.request_meta(record.msg)
            self.store.add(record)
            if process is None:
                return False
            try:
                process.send(data)
            except (OSError, ValueError) as exc:
                self._event("transport-error", {"error": f"could not write to the server: {exc}", "seq": record.seq})
                return False
        return True

    def request(self, request_id: Any, method: str, params: Any = None, *, timeout: float) -> dict:
        """Send a request and wait for its response message; raises NoAnswer."""
        exchange = self.expect(request_id, method)
        if self.modern_meta is not None and (params is None or isinstance(params, dict)):
            params = eras.with_meta(params, self.modern_meta)
        msg = jsonrpc.request(request_id, method, params)
        if not self.send(msg):
            self.forget(exchange)
            raise NoAnswer(f"{method}: the server's stdin is closed", "exited")
        try:
            return exchange.wait(timeout)
        except NoAnswer as exc:
            self.forget(exchange)
            if exc.reason == "timeout":
                self.cancel(request_id, f"mcp-inspect: no answer within {timeout:g} s")
            raise

    def cancel(self, request_id: Any, reason: str) -> None:
        """Tell the server we gave up on a request (it may stop working on it)."""
        self.send(jsonrpc.notification("notifications/cancelled", {"requestId": request_id, "reason": reason}))

    def forget(self, exchange: Exchange) -> None:
        """Stop waiting for an exchange (a later response is still recorded, just not matched)."""
        key = jsonrpc.id_key(exchange.id)
        with self._lock:
            if key is not None and self._waiting.get(key) is exchange:
                del self._waiting[key]

    # -- receiving -------------------------------------------------------------------------------------------

    def _on_send_failed(self, request_id: Any, reason: str) -> None:
        key = jsonrpc.id_key(request_id)
        with self._lock:
            exchange = self._waiting.pop(key, None) if key is not None else None
        if exchange is not None:
            exchange.failure = reason
            exchange.done.set()

    def _on_stdout(self, line: bytes, http: dict | None = None) -> None:
        decoded = record_server_line(self.store, line, http)
        if decoded.kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            key = jsonrpc.id_key(decoded.msg.get("id"))
            with self._lock:
                exchange = self._waiting.pop(key, None) if key is not None else None
            if exchange is not None:
                exchange.response = decoded.msg
                exchange.done.set()
        elif decoded.kind == jsonrpc.REQUEST:
            # Answer from another thread: writing to a server that is itself blocked writing to us would deadlock.
            threading.Thread(target=self._reply, args=(decoded.msg,), name="answer-server", daemon=True).start()

    def _reply(self, msg: dict) -> None:
        reply = self._answer(msg)
        if reply is not None:
            self.send(reply)

    def _on_stderr_line(self, text: str) -> None:
        self.store.add(Record(STDERR, text=text))
        if self._on_stderr:
            self._on_stderr(text)

    def _on_exit(self, info: ExitInfo) -> None:
        detail = {"code": info.code, "signal": info.signal, "stderr_tail": info.stderr_tail}
        if info.reason:
            detail["reason"] = info.reason
        self._event("exit", detail)
        with self._lock:
            self.exit_info = info
            waiting, self._waiting = list(self._waiting.values()), {}
        for exchange in waiting:
            exchange.exit = info
            exchange.done.set()
        self.exit_recorded.set()

    def _event(self, name: str, detail: dict) -> None:
        self.store.add(Record(EVENT, event=name, detail=detail))

    # -- shutdown --------------------------------------------------------------------------------------------

    def close(self, stdin_grace: float = 2.0) -> None:
        """The shutdown ladder; returns once the exit is recorded (so it precedes a session-end)."""
        process = self._process
        if process is None:
            return
        if not process.exited.is_set():
            self._event("stop", {"reason": "done"})
        process.stop(stdin_grace=stdin_grace)
        self.exit_recorded.wait(5.0)


def default_answer(msg: dict) -> dict:
    """How a plain headless client answers the server's own requests: ping yes, the rest not supported."""
    if msg.get("method") == "ping":
        return jsonrpc.result_response(msg.get("id"), {})
    return jsonrpc.error_response(msg.get("id"), jsonrpc.METHOD_NOT_FOUND,
                                  f"mcp-inspect (headless) does not answer {msg.get('method')}")


@dataclass
class Connected:
    """What connecting in an era found out."""

    era: str
    version: str | None
    server_info: dict
    capabilities: dict
    instructions: str | None
    why: str


class ConnectFailed(Exception):
    """The handshake (or the modern era's server/discover) failed; one line for the user."""


Ask = Callable[[str, Any, float], dict]
"""Sends a request and waits for its response message: (method, params, timeout) -> response; raises NoAnswer."""


def connect(wire: Wire, protocol: str, timeout: float, ask: Ask) -> Connected:
    """Find the era as the page does (probe server/discover, fall back to initialize) and connect in it.

    The handshake event is recorded like the page's. A server that does not answer the probe within
    eras.PROBE_SECONDS is restarted for initialize (it may be stuck on the probe, or locked into the modern era).
    Raises ConnectFailed or NoAnswer.
    """
    choice = eras.parse_protocol(protocol)
    era, version, why, discover = choice.era, choice.version, f"--protocol {choice.label}", None
    if choice.era == eras.AUTO:
        meta = eras.request_meta(eras.MODERN_VERSION, {}, client_info(), None)
        try:
            answer, lost = ask("server/discover", {"_meta": meta}, eras.PROBE_SECONDS), ""
        except NoAnswer as exc:
            answer, lost = None, exc.reason
        outcome = eras.judge_probe(answer)
        if lost == "exited":  # it died on a method it does not know: a handshake-era server, try a fresh one
            outcome = eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION, "the server exited on server/discover")
        era, version, why, discover = outcome.era, outcome.version, outcome.reason, outcome.discover
        if answer is None:
            wire.close(stdin_grace=0.5)
            wire.start()
    if era == eras.MODERN:
        wire.modern_meta = eras.request_meta(version or eras.MODERN_VERSION, {}, client_info(), None)
        if discover is None:
            response = ask("server/discover", None, timeout)
            if not isinstance(response.get("result"), dict):
                error = response.get("error")
                raise ConnectFailed(f"server/discover failed: {eras.explain_error(error) or _error_line(error)}")
            discover = response["result"]
        meta = discover.get("_meta") if isinstance(discover.get("_meta"), dict) else {}
        connected = Connected(eras.MODERN, version, _dict(meta.get(eras.META_SERVER_INFO)),
                              _dict(discover.get("capabilities")), _str(discover.get("instructions")), why)
    else:
        response = ask("initialize", initialize_params(version), timeout)
        result = response.get("result")
        if not isinstance(result, dict):
            raise ConnectFailed(f"initialize failed: {_error_line(response.get('error'))}")
        connected = Connected(eras.LEGACY, _str(result.get("protocolVersion")), _dict(result.get("serverInfo")),
                              _dict(result.get("capabilities")), _str(result.get("instructions")), why)
    wire.store.add(Record(EVENT, event="handshake", detail={
        "era": connected.era, "protocolVersion": connected.version, "serverInfo": connected.server_info,
        "capabilities": connected.capabilities, "instructions": connected.instructions, "why": why}))
    if connected.era == eras.LEGACY:
        wire.send(jsonrpc.notification("notifications/initialized"))
    return connected


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _error_line(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('message', 'error')} (code {error.get('code')})"
    return "the answer was not a result"


def client_info() -> dict:
    """Our clientInfo."""
    return {"name": CLIENT_NAME, "version": __version__}


def initialize_params(protocol: str | None = None) -> dict:
    """The params of our own initialize request (legacy era)."""
    return {"protocolVersion": protocol or PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": __version__}}


def open_store(record: str | None, command: list[str], cwd: str | None, *, protocol: str = "auto",
               env_keys: list[str] | tuple[str, ...] = (), http: "HttpTarget | None" = None) -> Sink:
    """A Sink on a new --record file (created exclusively, 0600), or on an unlinked spool file without one.

    Raises RecordingError when the file cannot be created.
    """
    writer = RecordingWriter.create(Path(record), unique=False) if record else RecordingWriter.spool()
    if http is not None:
        target = http.recorded()
    else:
        target = {"transport": "stdio", "command": list(command), "cwd": cwd or os.getcwd()}
    writer.write_header(header(target, protocol=protocol, env_keys=list(env_keys)))
    return Sink(writer)


def close_store(store: Sink) -> None:
    """End the recording cleanly: a session-end line, then close the file."""
    store.add(Record(EVENT, event="session-end", detail={}))
    store.writer.close()
