"""One connection to the server under test: handshake, our pending requests, timeouts, the server's requests.

Every byte in either direction becomes a Record in the store before anything acts on it. The inspector owns the
ids it sends (integers, never reused across restarts, so pairing stays unambiguous); the server's requests have
their own id space and are answered here.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import jsonrpc
from .records import EVENT, INVALID, MESSAGE, STDERR, TO_SERVER, Record, record_server_line
from .store import Store
from .transport.stdio import ExitInfo, SpawnError, StdioProcess

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "mcp-inspect", "version": ""}
LIST_METHODS = (  # (capability, method, result key, state attribute)
    ("tools", "tools/list", "tools", "tools"),
    ("resources", "resources/list", "resources", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates", "resource_templates"),
    ("prompts", "prompts/list", "prompts", "prompts"),
)
MAX_LIST_PAGES = 1000  # a server that returns a nextCursor forever must not keep us busy forever


class RequestFailed(Exception):
    """A request got no result: an error response, a timeout, or the server went away."""

    def __init__(self, message: str, *, error: dict | None = None, reason: str = "error") -> None:
        super().__init__(message)
        self.error = error
        """The JSON-RPC error object, when the server sent one."""
        self.reason = reason
        """error, timeout, exited, restarted, not-running."""


@dataclass
class Pending:
    """A request the inspector sent and is waiting on."""

    id: int
    method: str
    deadline: float
    timeout: float
    seq: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    response: dict | None = None
    failure: RequestFailed | None = None
    on_done: Callable[["Pending"], None] | None = None
    hard_deadline: float = 0.0
    """Progress notifications push the deadline back, never past this (the maximum timeout)."""

    def wait(self, timeout: float | None = None) -> dict:
        """The result object, or raise RequestFailed."""
        if not self.done.wait(timeout):
            raise RequestFailed(f"{self.method}: no answer yet", reason="timeout")
        if self.failure:
            raise self.failure
        assert self.response is not None
        if "error" in self.response:
            error = self.response["error"]
            message = error.get("message", "error") if isinstance(error, dict) else str(error)
            raise RequestFailed(f"{self.method}: {message}", error=error if isinstance(error, dict) else None)
        return self.response.get("result")


@dataclass
class Call:
    """A tool call made from the page."""

    id: int
    tool: str
    arguments: Any
    started: float
    state: str = "pending"
    """pending, result, error (JSON-RPC error), failed (timeout, exit), in that order of arrival."""
    result: Any = None
    error: dict | None = None
    message: str = ""
    request_seq: int = 0
    request_id: int | None = None
    response_seq: int | None = None
    elapsed_ms: float | None = None
    progress: dict | None = None
    """The latest notifications/progress for this call: {progress, total?, message?}."""
    done: threading.Event = field(default_factory=threading.Event)
    """Set once the call has its final state."""


@dataclass
class ServerState:
    """What the page's server panel shows."""

    state: str = "idle"
    """idle, starting, initializing, running, exited, stopped, failed."""
    pid: int | None = None
    exit: ExitInfo | None = None
    error: str = ""
    protocol_version: str | None = None
    server_info: dict = field(default_factory=dict)
    capabilities: dict = field(default_factory=dict)
    instructions: str | None = None
    tools: list = field(default_factory=list)
    resources: list = field(default_factory=list)
    resource_templates: list = field(default_factory=list)
    prompts: list = field(default_factory=list)
    starts: int = 0
    log_level: str = "info"
    """The level last sent with logging/setLevel (the page's selector shows it)."""


class Session:
    """Drives one server command over stdio for the life of the inspector (across stops and starts)."""

    def __init__(self, store: Store, command: list[str], *, cwd: str | None = None,
                 env: dict[str, str] | None = None, timeout: float = 60.0, client_version: str = "",
                 max_timeout: float | None = None, roots: list[dict] | None = None) -> None:
        self.store = store
        self.command = list(command)
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)
        self.timeout = timeout
        self.max_timeout = max_timeout if max_timeout is not None else timeout * 10
        self.roots = list(roots or [])
        """What roots/list answers: [{uri, name?}] (the working directory unless --root says otherwise)."""
        self.client_info = {**CLIENT_INFO, "version": client_version}
        self.server = ServerState()
        self.calls: dict[int, Call] = {}
        self.last_arguments: dict[str, str] = {}
        """Per tool, the arguments last typed or sent from the page, as JSON text (inputs survive reloads)."""
        self.tool_modes: dict[str, str] = {}
        """Per tool, whether the page shows the generated form or the JSON editor."""
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._pending: dict[int, Pending] = {}
        self._lock = threading.RLock()
        self._send_lock = threading.Lock()
        self._process: StdioProcess | None = None
        self._closed = False
        self.on_exit_hooks: list[Callable[[ExitInfo, bool], None]] = []
        """Called with (exit info, whether the server exited by itself) after each exit is recorded."""
        self.on_notification_hooks: list[Callable[[dict], None]] = []
        """Called with each notification the server sends."""
        self.on_server_request: Callable[[dict, "StdioProcess"], bool] | None = None
        """Offered each server request the session does not answer itself (sampling, elicitation); True = taken."""
        self.advertise: dict[str, bool] = {"roots": bool(self.roots), "sampling": False, "elicitation": False,
                                           "elicitation_url": False}
        """Client capabilities sent at the next initialize (servers register tools depending on them)."""
        self.on_listed_hooks: list[Callable[[], None]] = []
        """Called after the tools, resources, templates and prompts were (re)listed."""
        threading.Thread(target=self._watch_timeouts, name="request-timeouts", daemon=True).start()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self, wait: bool = False) -> None:
        """Spawn the server and run the handshake (in the background unless wait); a spawn failure is shown."""
        with self._lock:
            if self._closed or (self._process and not self._process.exited.is_set()):
                return
            self.server = ServerState(state="starting", starts=self.server.starts + 1)
            process = StdioProcess(self.command, cwd=self.cwd, env=self.env, on_stdout=self._on_stdout,
                                   on_stderr=self._on_stderr, on_exit=lambda info: self._on_exit(process, info),
                                   on_spawn=lambda pid: self.event("spawn", {"pid": pid}))
            try:
                pid = process.start()
            except SpawnError as exc:
                self.server.state, self.server.error = "failed", str(exc)
                self.event("spawn-failed", {"error": str(exc), "command": self.command})
                self.store.signal("server")
                return
            self._process = process
            self.server.pid = pid
            self.server.state = "initializing"
        self.store.signal("server")
        if wait:
            self._handshake(process)
        else:
            threading.Thread(target=self._handshake, args=(process,), name="handshake", daemon=True).start()

    def stop(self, reason: str = "user", stdin_grace: float = 2.0, failure: str | None = None) -> None:
        """Stop the server with the shutdown ladder; pending requests fail at once (with `failure` as message)."""
        with self._lock:
            process = self._process
            if process is None or process.exited.is_set():
                return
            self.event("stop", {"reason": reason})
            self.server.state = "stopping"
        self.store.signal("server")
        self._fail_pending(RequestFailed(failure or f"server stopped ({reason})",
                                         reason="restarted" if failure else "stopped"))
        process.stop(stdin_grace=stdin_grace)
        process.exited.wait(5)
        with self._lock:
            if self.server.state in ("stopping", "exited"):
                self.server.state = "stopped"
        self.store.signal("server")

    def close(self) -> None:
        """Stop for good (inspector shutdown)."""
        self.stop(reason="inspector shutting down")
        with self._lock:
            self._closed = True

    @property
    def running(self) -> bool:
        """A server process is alive."""
        process = self._process
        return process is not None and not process.exited.is_set()

    # -- sending ---------------------------------------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                on_done: Callable[[Pending], None] | None = None) -> Pending:
        """Send a request; returns at once with a Pending (never blocks on the server)."""
        timeout = self.timeout if timeout is None else timeout
        now = time.monotonic()
        pending = Pending(id=next(self._ids), method=method, deadline=now + timeout, timeout=timeout,
                          on_done=on_done, hard_deadline=now + max(timeout, self.max_timeout))
        process = self._process
        if process is None or process.exited.is_set():
            self._finish(pending, failure=RequestFailed(f"{method}: the server is not running", reason="not-running"))
            return pending
        with self._lock:
            self._pending[pending.id] = pending  # registered before sending: a fast answer must find it
        msg = jsonrpc.request(pending.id, method, params)
        record = self._send(process, msg)
        if record is None:
            with self._lock:
                self._pending.pop(pending.id, None)
            self._finish(pending, failure=RequestFailed(f"{method}: the server's stdin is closed", reason="exited"))
        else:
            pending.seq = record.seq
        return pending

    def notify(self, method: str, params: dict | None = None) -> None:
        """Send a notification."""
        process = self._process
        if process is not None:
            self._send(process, jsonrpc.notification(method, params))

    def _send(self, process: StdioProcess, msg: Any, origin: str | None = None) -> Record | None:
        # One lock around record-then-write keeps the recording's order equal to the pipe's order.
        with self._send_lock:
            record = self.store.add(Record(MESSAGE, dir=TO_SERVER, msg=msg, origin=origin))
            try:
                process.send(jsonrpc.encode(msg))
            except (BrokenPipeError, OSError, ValueError) as exc:
                self.event("transport-error", {"error": f"could not write to the server: {exc}", "seq": record.seq})
                return None
        return record

    def send_raw(self, line: str) -> Record | None:
        """Send exactly this line (one line, even if it is not JSON or not JSON-RPC), marked as hand-made."""
        process = self._process
        if process is None or process.exited.is_set():
            return None
        line = line.replace("\r", "").replace("\n", " ")  # stdio framing: one message, one line
        decoded = jsonrpc.decode_line(line.encode("utf-8", "surrogatepass"))
        if decoded.kind == jsonrpc.INVALID:
            record = Record(INVALID, dir=TO_SERVER, raw=line, error=decoded.problem, origin="user")
        else:
            record = Record(MESSAGE, dir=TO_SERVER, msg=decoded.msg, origin="user")
        with self._send_lock:
            self.store.add(record)
            try:
                process.send((line + "\n").encode("utf-8", "replace"))
            except (BrokenPipeError, OSError, ValueError) as exc:
                self.event("transport-error", {"error": f"could not write to the server: {exc}", "seq": record.seq})
                return None
        return record

    # -- tool calls from the page ----------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: Any, *, arguments_text: str | None = None,
                  timeout: float | None = None) -> Call:
        """Call a tool without waiting; the store signals `call:<id>` when it is answered or makes progress."""
        if arguments_text is not None:
            self.last_arguments[name] = arguments_text
        call = Call(id=next(self._call_ids), tool=name, arguments=arguments, started=time.time())
        self.calls[call.id] = call

        def done(pending: Pending) -> None:
            call.elapsed_ms = (time.time() - call.started) * 1000.0
            if pending.failure:
                call.state, call.message = "failed", str(pending.failure)
            elif pending.response is not None and "error" in pending.response:
                call.state, call.error = "error", pending.response["error"]
            else:
                call.state, call.result = "result", (pending.response or {}).get("result")
            call.done.set()
            self.store.signal(f"call:{call.id}")

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params["_meta"] = {"progressToken": f"call-{call.id}"}
        pending = self.request("tools/call", params, on_done=done, timeout=timeout)
        call.request_seq, call.request_id = pending.seq, pending.id
        return call

    def cancel_call(self, call_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel an in-flight call: notifications/cancelled to the server, and the call fails at once."""
        call = self.calls.get(call_id)
        with self._lock:
            pending = self._pending.pop(call.request_id, None) if call and call.request_id is not None else None
        if pending is None:
            return False
        self.notify("notifications/cancelled", {"requestId": pending.id, "reason": reason})
        self._finish(pending, failure=RequestFailed(f"tools/call: {reason}", reason="cancelled"))
        return True

    def _on_progress(self, msg: dict) -> None:
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        token = params.get("progressToken")
        if not (isinstance(token, str) and token.startswith("call-") and token[5:].isdigit()):
            return
        call = self.calls.get(int(token[5:]))
        if call is None or call.state != "pending":
            return  # progress can still arrive after a cancel: shown in the timeline, nothing else
        call.progress = {key: params[key] for key in ("progress", "total", "message") if key in params}
        with self._lock:
            pending = self._pending.get(call.request_id)
            if pending is not None:  # progress resets the timeout, up to the maximum
                pending.deadline = min(time.monotonic() + pending.timeout, pending.hard_deadline)
        self.store.signal(f"call:{call.id}")

    def tool(self, name: str) -> dict | None:
        """The listed tool of that name."""
        for tool in self.server.tools:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool
        return None

    # -- the handshake ---------------------------------------------------------------------------------------

    def _handshake(self, process: StdioProcess) -> None:
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": self.client_capabilities(),
                  "clientInfo": self.client_info}
        try:
            result = self.request("initialize", params).wait()
        except RequestFailed as exc:
            self._handshake_failed(process, f"initialize failed: {exc}")
            return
        if not isinstance(result, dict):
            self._handshake_failed(process, "initialize answered with a result that is not an object")
            return
        with self._lock:
            if self._process is not process:
                return
            server = self.server
            server.protocol_version = result.get("protocolVersion") if isinstance(result.get("protocolVersion"), str) else None
            server.server_info = result.get("serverInfo") if isinstance(result.get("serverInfo"), dict) else {}
            server.capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
            server.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        self.event("handshake", {"era": "legacy", "protocolVersion": server.protocol_version,
                                  "serverInfo": server.server_info, "capabilities": server.capabilities,
                                  "instructions": server.instructions})
        self.notify("notifications/initialized")
        with self._lock:
            if self._process is process and server.state == "initializing":
                server.state = "running"
        self.store.signal("server")
        self.refresh_lists(process)

    def _handshake_failed(self, process: StdioProcess, message: str) -> None:
        with self._lock:
            if self._process is process and self.server.state in ("initializing", "exited"):
                self.server.error = message
        self.store.signal("server")

    def refresh_lists(self, process: StdioProcess | None = None) -> None:
        """List tools, resources, templates and prompts for the capabilities the server declared."""
        process = process or self._process
        for capability, method, key, attribute in LIST_METHODS:
            if capability not in self.server.capabilities:
                continue
            items = self._list_all(method, key)
            if items is None or self._process is not process:
                continue
            setattr(self.server, attribute, items)
            self.store.signal(attribute)
        self.store.signal("server")
        for hook in self.on_listed_hooks:
            hook()

    def client_capabilities(self) -> dict:
        """What the inspector says it can do, from the page's switches."""
        capabilities: dict[str, Any] = {}
        if self.advertise.get("roots"):
            capabilities["roots"] = {"listChanged": True}
        if self.advertise.get("sampling"):
            capabilities["sampling"] = {}
        if self.advertise.get("elicitation") or self.advertise.get("elicitation_url"):
            capabilities["elicitation"] = {}
            if self.advertise.get("elicitation"):
                capabilities["elicitation"]["form"] = {}
            if self.advertise.get("elicitation_url"):
                capabilities["elicitation"]["url"] = {}
        return capabilities

    def reply(self, process: StdioProcess, msg: dict) -> bool:
        """Answer a server request on the process that asked (not on a server started since)."""
        if process is not self._process or process.exited.is_set():
            return False
        return self._send(process, msg) is not None

    def snapshot(self) -> dict:
        """What the server offers, in the shape diff.diff_servers compares."""
        server = self.server
        return {"serverInfo": server.server_info, "capabilities": server.capabilities,
                "instructions": server.instructions, "tools": server.tools, "resources": server.resources,
                "resourceTemplates": server.resource_templates, "prompts": server.prompts}

    def _list_all(self, method: str, key: str) -> list | None:
        items: list = []
        cursor = None
        for _ in range(MAX_LIST_PAGES):
            try:
                result = self.request(method, {"cursor": cursor} if cursor is not None else None).wait()
            except RequestFailed:
                return items or None
            if not isinstance(result, dict):
                return items
            page = result.get(key)
            if isinstance(page, list):
                items.extend(page)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return items
        return items

    # -- receiving -------------------------------------------------------------------------------------------

    def _on_stdout(self, line: bytes) -> None:
        decoded = record_server_line(self.store, line)
        if decoded.kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            self._on_response(decoded.msg)
        elif decoded.kind == jsonrpc.NOTIFICATION:
            if decoded.msg.get("method") == "notifications/progress":
                self._on_progress(decoded.msg)
            for hook in self.on_notification_hooks:
                hook(decoded.msg)
        elif decoded.kind == jsonrpc.REQUEST:
            # Answer from another thread: writing to a server that is itself blocked writing to us would deadlock.
            threading.Thread(target=self._answer_server_request, args=(decoded.msg,), daemon=True).start()

    def _on_response(self, msg: dict) -> None:
        request_id = msg.get("id")
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            return
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            self._finish(pending, response=msg)

    def _answer_server_request(self, msg: dict) -> None:
        process = self._process
        if process is None:
            return
        if msg.get("method") == "ping":
            reply = jsonrpc.result_response(msg.get("id"), {})
        elif msg.get("method") == "roots/list" and self.advertise.get("roots"):
            reply = jsonrpc.result_response(msg.get("id"), {"roots": self.roots})
        elif self.on_server_request is not None and self.on_server_request(msg, process):
            return  # shown to the user, answered from the page
        else:
            reply = jsonrpc.error_response(msg.get("id"), jsonrpc.METHOD_NOT_FOUND,
                                           f"mcp-inspect does not answer {msg.get('method')} yet")
        self._send(process, reply)

    def _on_stderr(self, text: str) -> None:
        self.store.add(Record(STDERR, text=text))

    def _on_exit(self, process: StdioProcess, info: ExitInfo) -> None:
        self.event("exit", {"code": info.code, "signal": info.signal, "stderr_tail": info.stderr_tail})
        by_itself = False
        with self._lock:
            if self._process is process:
                by_itself = self.server.state not in ("stopping", "stopped")
                if by_itself:
                    self.server.state = "exited"
                self.server.exit = info
        tail = "\n".join(info.stderr_tail[-5:])
        self._fail_pending(RequestFailed(f"the server {info.describe()}" + (f"; last stderr:\n{tail}" if tail else ""),
                                         reason="exited"))
        self.store.signal("server")
        for hook in self.on_exit_hooks:
            hook(info, by_itself)

    # -- pending bookkeeping ---------------------------------------------------------------------------------

    def _finish(self, pending: Pending, *, response: dict | None = None, failure: RequestFailed | None = None) -> None:
        pending.response, pending.failure = response, failure
        pending.done.set()
        if pending.on_done:
            try:
                pending.on_done(pending)
            except Exception as exc:  # a broken callback must not kill the reader thread
                self.event("transport-error", {"error": f"internal error handling {pending.method}: {exc!r}"})

    def _fail_pending(self, failure: RequestFailed) -> None:
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for item in pending:
            self._finish(item, failure=RequestFailed(f"{item.method}: {failure}", reason=failure.reason))

    def _watch_timeouts(self) -> None:
        while True:
            time.sleep(0.05)
            now = time.monotonic()
            with self._lock:
                expired = [p for p in self._pending.values() if p.deadline <= now]
                for item in expired:
                    del self._pending[item.id]
            for item in expired:
                self.event("timeout", {"id": item.id, "method": item.method, "after_s": item.timeout})
                self.notify("notifications/cancelled",
                            {"requestId": item.id, "reason": f"mcp-inspect: no answer within {item.timeout:g} s"})
                self._finish(item, failure=RequestFailed(f"{item.method}: timed out after {item.timeout:g} s",
                                                         reason="timeout"))

    def event(self, name: str, detail: dict) -> Record:
        """Record a lifecycle event in the timeline."""
        return self.store.add(Record(EVENT, event=name, detail=detail))

