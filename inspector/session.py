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

from inspector.protocol import eras, jsonrpc
from inspector.protocol.records import EVENT, INVALID, MESSAGE, STDERR, TO_SERVER, Record, record_server_message
from inspector.recording.store import Store
from inspector.transport import ExitInfo, SpawnError
from inspector.transport.stdio import StdioProcess

PROTOCOL_VERSION = eras.LEGACY_VERSION
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
    params: Any = None
    """What was sent (an input_required answer is retried with the same params plus the user's answers)."""
    rounds: int = 1
    """How many times this request went out (modern era: each input_required answer adds a round)."""
    response_seq: int = 0
    """The seq of the answer's record."""
    call: Any = field(default=None, repr=False)
    """The page's Call this request carries out, if any (linked before sending: a fast answer must find it)."""

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
    pending: Pending | None = field(default=None, repr=False)
    """The request in flight (its id changes when an input_required round is retried)."""
    waiting_input: bool = False
    """Modern era: the server asked for input (sampling, elicitation); the call waits for the Asks panel."""
    done: threading.Event = field(default_factory=threading.Event)
    """Set once the call has its final state."""
    version: int = 0
    """Counts the changes the page shows (progress, waiting for input, the final state)."""
    changed: threading.Condition = field(default_factory=threading.Condition, repr=False)
    """Notified with each change: a long poll waits on it."""

    def wait_change(self, seen: int | None, timeout: float) -> None:
        """Until the call is done, or (given the version the page shows) it changed since; at most timeout s."""
        with self.changed:
            self.changed.wait_for(lambda: self.done.is_set() or (seen is not None and self.version != seen), timeout)


@dataclass
class InputRound:
    """Modern era: a request answered with resultType input_required, waiting for the user's answers."""

    pending: Pending
    requests: dict[str, dict]
    """{key: {method, params}} from the result's inputRequests."""
    request_state: Any
    response_seq: int
    """The seq of the input_required answer: the retry links back to it in the timeline."""
    responses: dict[str, Any] = field(default_factory=dict)
    state: str = "waiting"
    """waiting, retried, abandoned."""


@dataclass
class ServerState:
    """What the page's server panel shows."""

    state: str = "idle"
    """idle, starting, initializing, running, exited, stopped, failed."""
    pid: int | None = None
    exit: ExitInfo | None = None
    error: str = ""
    protocol_version: str | None = None
    era: str | None = None
    """legacy (initialize handshake) or modern (2026-07-28: server/discover, per-request _meta)."""
    era_reason: str = ""
    """Why this era: what the server/discover probe saw, or that --protocol forced it."""
    supported_versions: list = field(default_factory=list)
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
                 max_timeout: float | None = None, roots: list[dict] | None = None, protocol: str = "auto",
                 connect: Callable[..., Any] | None = None) -> None:
        self.store = store
        self.protocol = eras.parse_protocol(protocol)
        """What --protocol asked for."""
        self.era_found: eras.ProbeOutcome | None = None
        """What the first server/discover probe found: kept for this command across restarts."""
        self.connect = connect
        """Builds the connection for a start (HTTP); None: spawn `command` over stdio."""
        self.url: str | None = None
        """The HTTP target's URL (shown in the page), when there is one."""
        self.http_headers: list[tuple[str, str]] = []
        """HTTP headers sent with every request (--header; editable in the page before a reconnect)."""
        self.auth_needed: dict | None = None
        """HTTP: the last 401's details ({www_authenticate}), until the headers change."""
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
        self.on_input_required: Callable[[InputRound], bool] | None = None
        """Modern era: offered each input_required round that needs a person (sampling, elicitation); True = taken."""
        self.on_url_required: Callable[[list[dict], Call | None], None] | None = None
        """Offered the URL elicitations of a -32042 error (handshake era)."""
        self.rounds: list[InputRound] = []
        self.resource_subscriptions: set[str] = set()
        """Modern era: the resource URIs that subscriptions/listen asks updates for."""
        self._listen: Pending | None = None
        threading.Thread(target=self._watch_timeouts, name="request-timeouts", daemon=True).start()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self, wait: bool = False) -> None:
        """Spawn the server and run the handshake (in the background unless wait); a spawn failure is shown."""
        with self._lock:
            if self._closed or (self._process and not self._process.exited.is_set()):
                return
            self.server = ServerState(state="starting", starts=self.server.starts + 1,
                                      log_level=self.server.log_level)
            if self.connect is not None:
                process = self.connect(self)
                self.event("connect", {"url": process.url, "transport": process.chosen_transport or "auto"})
            else:
                process = StdioProcess(self.command, cwd=self.cwd, env=self.env, on_stdout=self._on_stdout,
                                       on_stderr=self._on_stderr, on_exit=lambda info: self._on_exit(process, info),
                                       on_spawn=lambda pid: self.event("spawn", {"pid": pid}))
            try:
                pid = process.start()
            except SpawnError as exc:
                self.server.state, self.server.error = "failed", str(exc)
                if self.connect is not None:
                    self.event("transport-error", {"error": str(exc), "url": self.url})
                else:
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
    def http_transport(self) -> str | None:
        """For an HTTP server, the transport its connection settled on (streamable-http or sse) once known."""
        return getattr(self._process, "chosen_transport", None) if self.url else None

    @property
    def running(self) -> bool:
        """A server process is alive."""
        process = self._process
        return process is not None and not process.exited.is_set()

    # -- sending ---------------------------------------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                on_done: Callable[[Pending], None] | None = None, call: "Call | None" = None) -> Pending:
        """Send a request; returns at once with a Pending (never blocks on the server).

        In the modern era the request carries the `_meta` keys (version, capabilities, client info, log level),
        and an input_required answer does not finish it: it waits for the user's answers and goes out again.
        """
        timeout = self.timeout if timeout is None else timeout
        pending = Pending(id=0, method=method, deadline=0.0, timeout=timeout, on_done=on_done, params=params,
                          call=call)
        if call is not None:
            call.pending = pending
        self._send_pending(pending)
        return pending

    def _send_pending(self, pending: Pending, follows: int | None = None) -> None:
        """Send (or re-send, under a new id) a pending request."""
        pending.id = next(self._ids)
        now = time.monotonic()
        pending.deadline = now + pending.timeout
        pending.hard_deadline = now + max(pending.timeout, self.max_timeout)
        method = pending.method
        process = self._process
        if process is None or process.exited.is_set():
            self._finish(pending, failure=RequestFailed(f"{method}: the server is not running", reason="not-running"))
            return
        params = pending.params
        if self.server.era == eras.MODERN:
            params = eras.with_meta(params, self.request_meta())
        with self._lock:
            self._pending[pending.id] = pending  # registered before sending: a fast answer must find it
        msg = jsonrpc.request(pending.id, method, params)

        def recorded(record: Record) -> None:  # before the write: the answer may come before _send returns
            pending.seq = record.seq
            if pending.call is not None and pending.rounds == 1:  # the call's own row: where its chain starts
                pending.call.request_seq, pending.call.request_id = record.seq, pending.id
        record = self._send(process, msg, follows=follows, on_recorded=recorded)
        if record is None:
            with self._lock:
                self._pending.pop(pending.id, None)
            self._finish(pending, failure=RequestFailed(f"{method}: the server's stdin is closed", reason="exited"))

    def request_meta(self, version: str | None = None) -> dict:
        """The modern era's per-request `_meta`: our version, capabilities, info and the page's log level."""
        capabilities = self.client_capabilities()
        # The tasks extension: we can show and steer tasks, so servers may answer a call with one.
        capabilities["extensions"] = {"io.modelcontextprotocol/tasks": {}}
        return eras.request_meta(version or self.server.protocol_version or eras.MODERN_VERSION,
                                 capabilities, self.client_info, self.server.log_level)

    def notify(self, method: str, params: dict | None = None) -> None:
        """Send a notification."""
        process = self._process
        if process is not None:
            self._send(process, jsonrpc.notification(method, params))

    def _send(self, process: StdioProcess, msg: Any, origin: str | None = None, follows: int | None = None,
              on_recorded: Callable[[Record], None] | None = None) -> Record | None:
        # One lock around record-then-write keeps the recording's order equal to the pipe's order.
        with self._send_lock:
            http = process.request_meta(msg) if hasattr(process, "request_meta") else None
            record = self.store.add(Record(MESSAGE, dir=TO_SERVER, msg=msg, origin=origin, follows=follows,
                                           http=http))
            if on_recorded is not None:
                on_recorded(record)
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
        http = process.request_meta(decoded.msg) if hasattr(process, "request_meta") else None
        if decoded.kind == jsonrpc.INVALID:
            record = Record(INVALID, dir=TO_SERVER, raw=line, error=decoded.problem, origin="user", http=http)
        else:
            record = Record(MESSAGE, dir=TO_SERVER, msg=decoded.msg, origin="user", http=http)
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
            call.waiting_input = False
            if pending.failure:
                call.state, call.message = "failed", str(pending.failure)
            elif pending.response is not None and "error" in pending.response:
                call.state, call.error = "error", pending.response["error"]
                urls = eras.url_elicitations(call.error)
                if urls and self.on_url_required is not None:
                    self.on_url_required(urls, call)
            else:
                call.state, call.result = "result", (pending.response or {}).get("result")
            call.done.set()
            self._call_changed(call)

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params["_meta"] = {"progressToken": f"call-{call.id}"}
        self.request("tools/call", params, on_done=done, timeout=timeout, call=call)
        return call

    def cancel_call(self, call_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel an in-flight call: notifications/cancelled to the server, and the call fails at once.

        A modern call waiting for the user's input has nothing in flight: its round is abandoned instead.
        """
        call = self.calls.get(call_id)
        if call is None or call.pending is None or call.pending.done.is_set():
            return False
        pending = call.pending
        with self._lock:
            in_flight = self._pending.pop(pending.id, None) is not None
            waiting = [r for r in self.rounds if r.pending is pending and r.state == "waiting"]
            for round_ in waiting:
                round_.state = "abandoned"
        if not in_flight and not waiting:
            return False
        if in_flight:
            self.notify("notifications/cancelled", {"requestId": pending.id, "reason": reason})
        if waiting:
            self.store.signal("asks")
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
            pending = self._pending.get(call.pending.id) if call.pending else None
            if pending is not None:  # progress resets the timeout, up to the maximum
                pending.deadline = min(time.monotonic() + pending.timeout, pending.hard_deadline)
        self._call_changed(call)

    def _call_changed(self, call: Call) -> None:
        """Wake the call's long polls and its websocket viewers: what the page shows of it changed."""
        with call.changed:
            call.version += 1
            call.changed.notify_all()
        self.store.signal(f"call:{call.id}")

    def tool(self, name: str) -> dict | None:
        """The listed tool of that name."""
        for tool in self.server.tools:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool
        return None

    # -- the handshake ---------------------------------------------------------------------------------------

    def _handshake(self, process: StdioProcess) -> None:
        """Find the era (the probe, --protocol, or what an earlier start found), then connect in it."""
        choice = self.protocol
        self.server.era = None
        if choice.era != eras.AUTO:
            era, version, reason, discover = choice.era, choice.version, f"--protocol {choice.label}", None
        elif self.era_found is not None:
            found = self.era_found
            era, version, reason, discover = found.era, found.version, f"found at the first start: {found.reason}", None
        else:
            outcome, restart, failure = self._probe(process)
            if outcome is None:
                self._handshake_failed(process, f"server/discover failed: {failure}")
                return
            self.era_found = outcome
            if restart:
                # A server that ignored the probe may be stuck on it, and an SDK server that read it is locked
                # into the modern era: the handshake-era fallback needs a fresh process.
                if process.exited.is_set():
                    self.event("stop", {"reason": f"{outcome.reason}; starting it again for the initialize "
                                                  "handshake"})
                else:
                    self.stop(reason=f"{outcome.reason}; restarting it for the initialize handshake",
                              stdin_grace=0.5)
                self.start()
                return
            era, version, reason, discover = outcome.era, outcome.version, outcome.reason, outcome.discover
        with self._lock:
            if self._process is not process:
                return
            self.server.era, self.server.era_reason = era, reason
        if era == eras.MODERN:
            self._modern_handshake(process, version or eras.MODERN_VERSION, discover)
        else:
            self._legacy_handshake(process, version or PROTOCOL_VERSION)

    def _probe(self, process: StdioProcess) -> tuple[eras.ProbeOutcome | None, bool, str]:
        """Ask server/discover once: (what it says about the era, whether to restart the process, a failure)."""
        pending = self.request("server/discover", {"_meta": self.request_meta(eras.MODERN_VERSION)},
                               timeout=eras.PROBE_SECONDS)
        pending.done.wait(eras.PROBE_SECONDS + 5.0)
        if self._process is not process:
            return None, False, "the server was replaced during the probe"
        if process.exited.is_set() and pending.response is None:
            # Hand-written handshake-era servers often die on a method they do not know: no modern server would
            # (server/discover is mandatory there), so the fallback goes on with a fresh process.
            return (eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION,
                                      f"the server exited on server/discover ({pending.failure})"), True, "")
        if pending.response is not None:
            return eras.judge_probe(pending.response), False, ""
        outcome = eras.judge_probe(None)
        failure = pending.failure
        if failure is not None and failure.reason != "timeout":
            outcome = eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION, f"server/discover failed: {failure}")
        # Only a process that got no answer in time is restarted (the spec's fallback); HTTP has nothing to restart.
        return outcome, failure is not None and failure.reason == "timeout" and process.pid is not None, ""


    def _legacy_handshake(self, process: StdioProcess, version: str) -> None:
        params = {"protocolVersion": version, "capabilities": self.client_capabilities(),
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
        self.event("handshake", {"era": eras.LEGACY, "protocolVersion": server.protocol_version,
                                  "serverInfo": server.server_info, "capabilities": server.capabilities,
                                  "instructions": server.instructions, "why": server.era_reason})
        self.notify("notifications/initialized")
        self._connected(process)

    def _modern_handshake(self, process: StdioProcess, version: str, discover: dict | None) -> None:
        """The 2026-07-28 era has no handshake: server/discover (if the probe did not already) tells what it offers."""
        self.server.protocol_version = version
        if discover is None:
            try:
                discover = self.request("server/discover").wait()
            except RequestFailed as exc:
                explained = eras.explain_error(exc.error)
                self._handshake_failed(process, f"server/discover failed: {explained or exc}")
                return
        if not isinstance(discover, dict):
            self._handshake_failed(process, "server/discover answered with a result that is not an object")
            return
        meta = discover.get("_meta") if isinstance(discover.get("_meta"), dict) else {}
        with self._lock:
            if self._process is not process:
                return
            server = self.server
            server.server_info = meta.get(eras.META_SERVER_INFO) if isinstance(meta.get(eras.META_SERVER_INFO),
                                                                               dict) else {}
            server.capabilities = discover.get("capabilities") if isinstance(discover.get("capabilities"),
                                                                             dict) else {}
            server.instructions = discover.get("instructions") if isinstance(discover.get("instructions"),
                                                                             str) else None
            supported = discover.get("supportedVersions")
            server.supported_versions = [v for v in supported if isinstance(v, str)] if isinstance(
                supported, list) else []
        self.event("handshake", {"era": eras.MODERN, "protocolVersion": version,
                                  "serverInfo": server.server_info, "capabilities": server.capabilities,
                                  "instructions": server.instructions,
                                  "supportedVersions": server.supported_versions, "why": server.era_reason})
        self._connected(process)

    def _connected(self, process: StdioProcess) -> None:
        with self._lock:
            if self._process is process and self.server.state == "initializing":
                self.server.state = "running"
        self.store.signal("server")
        self.refresh_lists(process)
        if self.server.era == eras.MODERN:
            self.listen()

    def listen(self) -> Pending | None:
        """Modern era: (re)open subscriptions/listen for list changes and the subscribed resources.

        The listen request stays open for the life of the connection (no timeout); a new one replaces the old,
        which is cancelled.
        """
        capabilities = self.server.capabilities
        wanted: dict[str, Any] = {}
        for capability, flag in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                                 ("resources", "resourcesListChanged")):
            declared = capabilities.get(capability)
            if isinstance(declared, dict) and declared.get("listChanged"):
                wanted[flag] = True
        resources = capabilities.get("resources")
        if isinstance(resources, dict) and resources.get("subscribe") and self.resource_subscriptions:
            wanted["resourceSubscriptions"] = sorted(self.resource_subscriptions)
        old, self._listen = self._listen, None
        if old is not None and not old.done.is_set():
            with self._lock:
                in_flight = self._pending.pop(old.id, None) is not None
            if in_flight:
                self.notify("notifications/cancelled", {"requestId": old.id, "reason": "replaced by a new listen"})
            self._finish(old, failure=RequestFailed("subscriptions/listen: replaced", reason="cancelled"))
        if not wanted or self.server.era != eras.MODERN:
            return None
        self._listen = self.request("subscriptions/listen", {"notifications": wanted}, timeout=float("inf"))
        return self._listen

    def set_resource_subscription(self, uri: str, subscribed: bool) -> None:
        """Modern era: add or drop a resource URI from the listen stream, and re-listen."""
        if subscribed:
            self.resource_subscriptions.add(uri)
        else:
            self.resource_subscriptions.discard(uri)
        self.listen()

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

    def _on_stdout(self, line: bytes, http: dict | None = None) -> None:
        decoded, record = record_server_message(self.store, line, http)
        if decoded.kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            self._on_response(decoded.msg, record.seq)
        elif decoded.kind == jsonrpc.NOTIFICATION:
            if decoded.msg.get("method") == "notifications/progress":
                self._on_progress(decoded.msg)
            elif decoded.msg.get("method") == "notifications/cancelled":
                self._on_server_cancelled(decoded.msg)
            for hook in self.on_notification_hooks:
                hook(decoded.msg)
        elif decoded.kind == jsonrpc.REQUEST:
            # Answer from another thread: writing to a server that is itself blocked writing to us would deadlock.
            threading.Thread(target=self._answer_server_request, args=(decoded.msg,), daemon=True).start()

    def _on_server_cancelled(self, msg: dict) -> None:
        """The server gave up on one of our requests (on stdio this is also how it ends subscriptions/listen)."""
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        reason = params.get("reason") if isinstance(params.get("reason"), str) else ""
        self._give_up(params.get("requestId"), "cancelled by the server" + (f" ({reason})" if reason else ""),
                      "cancelled")

    def _give_up(self, request_id: Any, why: str, reason: str) -> None:
        """Fail one of our pending requests now: no answer will come for it."""
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            return
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            self._finish(pending, failure=RequestFailed(f"{pending.method}: {why}", reason=reason))

    def set_roots(self, roots: list[dict]) -> None:
        """New roots from the page; a handshake-era server that may ask for them hears that they changed."""
        self.roots = list(roots)
        if self.running and self.server.era == eras.LEGACY and self.advertise.get("roots"):
            self.notify("notifications/roots/list_changed")

    def _on_response(self, msg: dict, seq: int = 0) -> None:
        request_id = msg.get("id")
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            return
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            pending.response_seq = seq
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

    def _on_send_failed(self, request_id: Any, reason: str) -> None:
        """The transport says a request will never be answered (HTTP: refused, failed, not MCP): fail it now."""
        self._give_up(request_id, reason, "transport")

    def _on_session_expired(self) -> None:
        """HTTP: the server forgot our session (404): connect again with a fresh handshake, shown as a restart."""
        threading.Thread(target=self.reconnect, args=("the server's session expired (HTTP 404)",),
                         name="reconnect", daemon=True).start()

    def retarget(self, *, command: list[str] | None = None, cwd: str | None = None, env: dict | None = None,
                 url: str | None = None, headers: list[tuple[str, str]] | None = None,
                 connect: Callable[..., Any] | None = None, describe: dict | None = None) -> None:
        """Run another server from here on (a config file's entry picked in the page); the era is found anew."""
        self.stop(reason="switching to another server")
        with self._lock:
            self.command, self.cwd = list(command or []), cwd
            if env is not None:
                self.env = dict(env)
            self.url, self.http_headers, self.connect = url, list(headers or []), connect
            self.era_found = None
        self.event("target", describe or {})
        self.start()

    def reconnect(self, reason: str) -> None:
        """Stop and start again (for HTTP: a new connection and handshake)."""
        self.event("restart", {"reason": reason, "paths": []})
        self.stop(reason=reason, failure=f"the connection was renewed: {reason}")
        self.start()

    def _on_exit(self, process: StdioProcess, info: ExitInfo) -> None:
        detail: dict[str, Any] = {"code": info.code, "signal": info.signal, "stderr_tail": info.stderr_tail}
        if info.reason:
            detail["reason"] = info.reason
        self.event("exit", detail)
        by_itself = False
        with self._lock:
            if self._process is process:
                by_itself = self.server.state not in ("stopping", "stopped")
                if by_itself:
                    self.server.state = "exited"
                self.server.exit = info
        tail = "\n".join(info.stderr_tail[-5:])
        said = info.reason or f"the server {info.describe()}"
        self._fail_pending(RequestFailed(said + (f"; last stderr:\n{tail}" if tail else ""), reason="exited"))
        self.store.signal("server")
        for hook in self.on_exit_hooks:
            hook(info, by_itself)

    # -- pending bookkeeping ---------------------------------------------------------------------------------

    def _finish(self, pending: Pending, *, response: dict | None = None, failure: RequestFailed | None = None) -> None:
        if response is not None and self._needs_input(pending, response):
            return  # not finished: it goes out again once the user answered
        pending.response, pending.failure = response, failure
        pending.done.set()
        if pending.on_done:
            try:
                pending.on_done(pending)
            except Exception as exc:  # a broken callback must not kill the reader thread
                self.event("transport-error", {"error": f"internal error handling {pending.method}: {exc!r}"})

    # -- modern era: input_required rounds -------------------------------------------------------------------

    def _needs_input(self, pending: Pending, response: dict) -> bool:
        """Start an input round for an input_required answer; False when it is a final answer."""
        if pending.method not in eras.INPUT_REQUIRED_METHODS or self.server.era != eras.MODERN:
            return False
        result = response.get("result")
        if eras.result_type(result) != "input_required":
            return False
        asked = eras.input_requests(result)
        if not asked:
            return False  # nothing we could answer: the input_required result itself is the answer shown
        round_ = InputRound(pending=pending, requests=asked, request_state=result.get("requestState"),
                            response_seq=pending.response_seq)
        for key, item in asked.items():
            if item["method"] == "roots/list" and self.advertise.get("roots"):
                round_.responses[key] = {"roots": self.roots}  # answered for the user, as roots/list is
        people = {key: item for key, item in asked.items() if key not in round_.responses}
        with self._lock:
            self.rounds.append(round_)
            del self.rounds[:-200]
        call = pending.call
        if call is not None and people:
            # Before the asks appear: whoever sees the question should already see the call waiting for it.
            call.waiting_input = True
            self._call_changed(call)
        if people and not (self.on_input_required is not None and self.on_input_required(round_)):
            with self._lock:
                round_.state = "abandoned"
            if call is not None:
                call.waiting_input = False
                self._call_changed(call)
            return False
        if not people:
            self._retry(round_)
        return True

    def answer_input(self, round_: InputRound, key: str, result: Any | None) -> bool:
        """The user's answer to one input request (None: rejected, which abandons the request)."""
        with self._lock:
            if round_.state != "waiting" or key not in round_.requests:
                return False
            if result is None:
                round_.state = "abandoned"
            else:
                round_.responses[key] = result
            complete = round_.state == "waiting" and set(round_.responses) >= set(round_.requests)
        if result is None:
            self._finish(round_.pending, failure=RequestFailed(
                f"{round_.pending.method}: the user rejected {round_.requests[key]['method']}; the request was "
                "not sent again", reason="rejected"))
            return True
        if complete:
            self._retry(round_)
        return True

    def _retry(self, round_: InputRound) -> None:
        with self._lock:
            if round_.state != "waiting":
                return
            round_.state = "retried"
        pending = round_.pending
        pending.params = eras.retry_params(pending.params, dict(round_.responses), round_.request_state)
        pending.rounds += 1
        if pending.call is not None:
            pending.call.waiting_input = False
        self._send_pending(pending, follows=round_.response_seq or None)
        if pending.call is not None:
            self._call_changed(pending.call)

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

    def _on_transport_event(self, name: str, detail: dict) -> None:
        """What the HTTP transport reports: recorded; a 401 is also kept for the Server panel to explain."""
        self.event(name, detail)
        if name == "transport-error" and detail.get("kind") == "auth":
            self.auth_needed = {"www_authenticate": detail.get("www_authenticate")}
            self.store.signal("server")

