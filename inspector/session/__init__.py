"""The page's connection to the server under test: start, stop, restart, retarget, the handshake, what it offers.

It speaks through the one Client (inspector/client/), as the headless commands do. Tool calls and drafts live in
session/calls.py, the asks and the modern era's input rounds in session/asks.py; this module holds no page state.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterable

from inspector.protocol import eras, jsonrpc
from inspector.client import handshake
from inspector.client.connect import transport_for
from inspector.client.targets import HttpTarget, StdioTarget
from inspector.client.offer import LIST_METHODS, Listener, ServerState, list_all
from inspector.client.rpc import Client, Pending, RequestFailed
from inspector.protocol.records import Record
from inspector.recording.store import Store
from inspector.transport.stdio import ExitInfo, SpawnError
from inspector.session import changes

__all__ = ["LIST_METHODS", "Pending", "RequestFailed", "ServerState", "Session"]


class Session:
    """Drives one server (a command over stdio, or a URL) for the life of the inspector, across stops and starts."""

    def __init__(self, store: Store, command: list[str], *, cwd: str | None = None,
                 env: dict[str, str] | None = None, timeout: float = 60.0, client_version: str = "",
                 max_timeout: float | None = None, roots: list[dict] | None = None, protocol: str = "auto",
                 probe_timeout: float = eras.PROBE_SECONDS) -> None:
        self.store = store
        self.client = Client(store, timeout=timeout, max_timeout=max_timeout)
        """The one JSON-RPC client: ids never reused across restarts."""
        self.protocol = eras.parse_protocol(protocol)
        """What --protocol asked for."""
        self.probe_timeout = probe_timeout
        self.era_found: eras.ProbeOutcome | None = None
        """What the first server/discover probe found: kept for this command across restarts."""
        self.url: str | None = None
        """The HTTP target's URL (shown in the page), when there is one; None runs `command` over stdio."""
        self.http_transport_choice = "auto"
        """--transport for the URL: auto, streamable-http or sse."""
        self.http_headers: list[tuple[str, str]] = []
        """HTTP headers sent with every request (--header; editable in the page before a reconnect)."""
        self.refuse_ports: Callable[[], Iterable[int]] = lambda: ()
        """Ports an HTTP target may not be (our own, known once bound)."""
        self.auth_needed: dict | None = None
        """HTTP: the last 401's details ({www_authenticate}), until the headers change."""
        self.command = list(command)
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)
        self.timeout = timeout
        self.roots = list(roots or [])
        """What roots/list answers: [{uri, name?}] (the working directory unless --root says otherwise)."""
        self.client_info = handshake.client_info(client_version)
        self.server = ServerState()
        self.advertise: dict[str, bool] = {"roots": bool(self.roots), "sampling": False, "elicitation": False,
                                           "elicitation_url": False}
        """Client capabilities sent at the next initialize (servers register tools depending on them)."""
        self.on_exit_hooks: list[Callable[[ExitInfo, bool], None]] = []
        """Called with (exit info, whether the server exited by itself) after each exit is recorded."""
        self.on_notification_hooks: list[Callable[[dict], None]] = self.client.on_notification
        """Called with each notification the server sends."""
        self.on_server_request: Callable[[dict, Any], bool] | None = None
        """Offered each server request the session does not answer itself (sampling, elicitation); True = taken."""
        self.on_listed_hooks: list[Callable[[], None]] = []
        """Called after the tools, resources, templates and prompts were (re)listed."""
        self.listener = Listener(self.client)
        self.client.on_server_request = self._answer_server_request
        self._lock = threading.RLock()
        self._process: Any = None
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self, wait: bool = False) -> None:
        """Start the server and run the handshake (in the background unless wait); a start failure is shown."""
        process = self._spawn()
        if process is None:
            return
        if wait:
            self._handshake(process)
        else:
            threading.Thread(target=self._handshake, args=(process,), name="handshake", daemon=True).start()

    def _spawn(self) -> Any:
        with self._lock:
            if self._closed or (self._process and not self._process.exited.is_set()):
                return None
            self.server = ServerState(state="starting", starts=self.server.starts + 1,
                                      log_level=self.server.log_level)
            self.client.meta = None  # the era is found anew (or taken from era_found) at each start
            if self.url is not None:
                target: Any = HttpTarget(self.url, self.http_transport_choice)
            else:
                target = StdioTarget(tuple(self.command), self.cwd, self.env)
            process = transport_for(target, self.client, on_exit=self.on_exit, on_event=self.on_transport_event,
                                    on_session_expired=self.on_session_expired, refuse_ports=self.refuse_ports(),
                                    headers=self.http_headers)
            self.client.attach(process)  # before it starts: its first line may be a request to answer
            if self.url is not None:
                self.event("connect", {"url": self.url, "transport": process.chosen_transport or "auto"})
            try:
                pid = process.start()
            except SpawnError as exc:
                self.client.attach(None)
                self.server.state, self.server.error = "failed", str(exc)
                if self.url is not None:
                    self.event("transport-error", {"error": str(exc), "url": self.url})
                else:
                    self.event("spawn-failed", {"error": str(exc), "command": self.command})
                self.store.signal(changes.SERVER)
                return None
            self._process = process
            self.server.pid = pid
            self.server.state = "initializing"
        self.store.signal(changes.SERVER)
        return process

    def stop(self, reason: str = "user", stdin_grace: float = 2.0, failure: str | None = None) -> None:
        """Stop the server with the shutdown ladder; pending requests fail at once (with `failure` as message)."""
        with self._lock:
            process = self._process
            if process is None or process.exited.is_set():
                return
            self.event("stop", {"reason": reason})
            self.server.state = "stopping"
        self.store.signal(changes.SERVER)
        self.client.fail_all(failure or f"server stopped ({reason})", "restarted" if failure else "stopped")
        process.stop(stdin_grace=stdin_grace)
        process.exited.wait(5)
        with self._lock:
            if self.server.state in ("stopping", "exited"):
                self.server.state = "stopped"
        self.store.signal(changes.SERVER)

    def close(self) -> None:
        """Stop for good (inspector shutdown); the request-timeout thread ends too."""
        self.stop(reason="inspector shutting down")
        with self._lock:
            self._closed = True
        self.client.close()

    @property
    def http_transport(self) -> str | None:
        """For an HTTP server, the transport its connection settled on (streamable-http or sse) once known."""
        return getattr(self._process, "chosen_transport", None) if self.url else None

    @property
    def running(self) -> bool:
        """A server process is alive."""
        process = self._process
        return process is not None and not process.exited.is_set()

    def retarget(self, *, command: list[str] | None = None, cwd: str | None = None, env: dict | None = None,
                 url: str | None = None, headers: list[tuple[str, str]] | None = None, transport: str = "auto",
                 describe: dict | None = None) -> None:
        """Run another server from here on (a config file's entry picked in the page); the era is found anew."""
        self.stop(reason="switching to another server")
        with self._lock:
            self.command, self.cwd = list(command or []), cwd
            if env is not None:
                self.env = dict(env)
            self.url, self.http_headers, self.http_transport_choice = url, list(headers or []), transport
            self.era_found = None
        self.event("target", describe or {})
        self.start()

    def reconnect(self, reason: str) -> None:
        """Stop and start again (for HTTP: a new connection and handshake)."""
        self.event("restart", {"reason": reason, "paths": []})
        self.stop(reason=reason, failure=f"the connection was renewed: {reason}")
        self.start()

    # -- what the transport reports (public callbacks: client/connect.py wires them) --------------------------

    def on_exit(self, process: Any, info: ExitInfo) -> None:
        """The server exited (or the HTTP connection ended): recorded, shown, pending requests fail."""
        info = self.store.masker.exit_info(info)  # its stderr tail is shown in the page and in failure messages
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
        # Not `gone`: a request made after this exit says "the server is not running", as the page words it.
        self.client.fail_all(said + (f"; last stderr:\n{tail}" if tail else ""), "exited")
        self.store.signal(changes.SERVER)
        for hook in self.on_exit_hooks:
            hook(info, by_itself)

    def on_transport_event(self, name: str, detail: dict) -> None:
        """What the HTTP transport reports: recorded; a 401 is also kept for the Server panel to explain, and a
        connection that failed (refused: the server is down) means the server is no longer "running"."""
        self.event(name, detail)
        if name == "transport-error" and detail.get("kind") == "connect":
            self._reachable(False, str(detail.get("error") or "the connection failed"))
        elif name == "transport" and detail.get("reachable"):
            self._reachable(True)
        if name == "transport-error" and detail.get("kind") == "auth":
            self.auth_needed = {"www_authenticate": detail.get("www_authenticate")}
            self.store.signal(changes.SERVER)

    def _reachable(self, reachable: bool, error: str = "") -> None:
        """HTTP: the server could not be reached (so until it answers again, or the next connect: Restart), or it
        answers again after that (the same session, or the modern era)."""
        with self._lock:
            if self.server.state not in (("unreachable",) if reachable else ("running", "initializing")):
                return
            self.server.state = "running" if reachable else "unreachable"
            self.server.error = "" if reachable else f"the server cannot be reached: {error}; Restart connects again"
        self.store.signal(changes.SERVER)

    def on_session_expired(self) -> None:
        """HTTP: the server forgot our session (404, or a 400 naming it): connect again with a fresh handshake,
        shown as a restart."""
        threading.Thread(target=self.reconnect, args=("the server's session expired (or the server restarted)",),
                         name="reconnect", daemon=True).start()

    # -- sending (through the client) ------------------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                on_done: Callable[[Pending], None] | None = None) -> Pending:
        """Send a request; returns at once with a Pending (never blocks on the server)."""
        return self.client.request(method, params, timeout=timeout, on_done=on_done)

    def notify(self, method: str, params: dict | None = None) -> None:
        """Send a notification."""
        self.client.notify(method, params)

    def send_raw(self, line: str) -> Record | None:
        """Send exactly this line (one line, even if it is not JSON or not JSON-RPC), marked as hand-made.

        Raises client.rpc.RawRefused for a request whose id is one of ours still waiting (nothing is sent)."""
        return self.client.send_line(line) if self.running else None

    def reply(self, process: Any, msg: dict) -> bool:
        """Answer a server request on the process that asked (not on a server started since)."""
        return self.client.reply(process, msg)

    def event(self, name: str, detail: dict) -> Record:
        """Record a lifecycle event in the timeline."""
        return self.client.event(name, detail)

    def request_meta(self, version: str | None = None) -> dict:
        """The modern era's per-request `_meta`: our version, capabilities, info and the page's log level."""
        capabilities = self.client_capabilities()
        # The tasks extension: we can show and steer tasks, so servers may answer a call with one.
        capabilities["extensions"] = {"io.modelcontextprotocol/tasks": {}}
        return eras.request_meta(version or self.server.protocol_version or eras.MODERN_VERSION,
                                 capabilities, self.client_info, self.server.log_level)

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

    def set_roots(self, roots: list[dict]) -> None:
        """New roots from the page; a handshake-era server that may ask for them hears that they changed."""
        self.roots = list(roots)
        if self.running and self.server.era == eras.LEGACY and self.advertise.get("roots"):
            self.notify("notifications/roots/list_changed")

    def _answer_server_request(self, msg: dict, process: Any) -> dict | None:
        if msg.get("method") == "ping":
            return jsonrpc.result_response(msg.get("id"), {})
        if msg.get("method") == "roots/list" and self.advertise.get("roots"):
            return jsonrpc.result_response(msg.get("id"), {"roots": self.roots})
        if self.on_server_request is not None and self.on_server_request(msg, process):
            return None  # shown to the user, answered from the page
        return jsonrpc.error_response(msg.get("id"), jsonrpc.METHOD_NOT_FOUND,
                                      f"mcp-inspect does not answer {msg.get('method')} yet")

    # -- the handshake and the offer -------------------------------------------------------------------------

    def _handshake(self, process: Any) -> None:
        """Find the era (the probe, --protocol, or what an earlier start found), then connect in it."""
        decision = handshake.decide(self.client, self.protocol, meta=self.request_meta(eras.MODERN_VERSION),
                                    probe_timeout=self.probe_timeout, restart=self._fall_back, found=self.era_found)
        if decision is None:
            return  # the fresh process for the fallback could not start (shown as a spawn failure)
        if self.server.state == "exited" and self._process is process:
            # It died before reading the probe, so it is not started again: the failure names its exit.
            exit_info = self.server.exit
            how = exit_info.describe() if exit_info is not None else "exited"
            step = "server/discover" if decision.era == eras.MODERN else "initialize"
            self._handshake_failed(process, f"{step} failed: the server {how} before answering")
            return
        if self.server.state != "initializing":
            return  # stopped or replaced during the probe: whoever did that runs the next handshake
        if decision.found is not None:
            self.era_found = decision.found
        process = self._process
        with self._lock:
            self.server.era, self.server.era_reason = decision.era, decision.why
            if decision.era == eras.MODERN:
                self.server.protocol_version = decision.version or eras.MODERN_VERSION
                self.client.meta = self.request_meta
        try:
            connected = handshake.connect(self.client, decision, capabilities=self.client_capabilities(),
                                          info=self.client_info)
        except (handshake.ConnectFailed, RequestFailed) as exc:
            text = str(exc)
            if isinstance(exc, RequestFailed):
                explained = eras.explain_error(exc.error)
                text = f"{'server/discover' if decision.era == eras.MODERN else 'initialize'} failed: {explained or exc}"
            self._handshake_failed(process, text)
            return
        with self._lock:
            if self._process is not process:
                return
            server = self.server
            server.protocol_version, server.server_info = connected.version, connected.server_info
            server.capabilities, server.instructions = connected.capabilities, connected.instructions
            server.supported_versions = connected.supported_versions
            if server.state == "initializing":
                server.state = "running"
        self.store.signal(changes.SERVER)
        self.refresh_lists(process)
        if self.server.era == eras.MODERN:
            self.listen()

    def _fall_back(self, why: str, how: str) -> bool:
        """The probe got no modern answer: a fresh process for initialize (handshake.Restart)."""
        reason = f"{why}; {how} for the initialize handshake"
        if self._process is not None and self._process.exited.is_set():
            self.event("stop", {"reason": reason})
        else:
            self.stop(reason=reason, stdin_grace=0.5)
        return self._spawn() is not None

    def _handshake_failed(self, process: Any, message: str) -> None:
        with self._lock:
            if self._process is process and self.server.state in ("initializing", "exited"):
                self.server.error = message
        self.store.signal(changes.SERVER)

    def refresh_lists(self, process: Any = None) -> None:
        """List tools, resources, templates and prompts for the capabilities the server declared."""
        process = process or self._process
        for capability, method, key, attribute in LIST_METHODS:
            if capability not in self.server.capabilities:
                continue
            items = list_all(self.client, method, key)
            if items is None or self._process is not process:
                continue
            setattr(self.server, attribute, items)
            self.store.signal(changes.listed(attribute))
        self.store.signal(changes.SERVER)
        for hook in self.on_listed_hooks:
            hook()

    def listen(self) -> Pending | None:
        """Modern era: (re)open subscriptions/listen for list changes and the subscribed resources."""
        return self.listener.listen(self.server)

    @property
    def resource_subscriptions(self) -> set[str]:
        """Modern era: the resource URIs that subscriptions/listen asks updates for."""
        return self.listener.resource_subscriptions

    def set_resource_subscription(self, uri: str, subscribed: bool) -> None:
        """Modern era: add or drop a resource URI from the listen stream, and re-listen."""
        if subscribed:
            self.resource_subscriptions.add(uri)
        else:
            self.resource_subscriptions.discard(uri)
        self.listen()

    def snapshot(self) -> dict:
        """What the server offers, in the shape diff.diff_servers compares."""
        return self.server.snapshot()

    def tool(self, name: str) -> dict | None:
        """The listed tool of that name."""
        return self.server.tool(name)
