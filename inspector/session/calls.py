"""The page's tool calls: each call's state as it progresses, cancelling, and the drafts the tool forms keep.

A Call is one tools/call made from the page; the request itself goes through the session's Client. The store
signals `call:<id>` whenever what the page shows of a call changes.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from inspector.protocol import bursts, eras
from inspector.client.rpc import Pending, RequestFailed
from inspector.protocol.records import Record
from inspector.session import changes


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
    ended_seq: int | None = None
    """The newest seq when the call ended: with request_seq, the window its stderr lines are counted in."""
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


class Calls:
    """The page's tool calls and drafts, over the session's client."""

    def __init__(self, session) -> None:
        self.session = session
        self.calls: dict[int, Call] = {}
        self.last_arguments: dict[str, str] = {}
        """Per tool, the arguments last typed or sent from the page, as JSON text (inputs survive reloads)."""
        self.tool_modes: dict[str, str] = {}
        """Per tool, whether the page shows the generated form or the JSON editor."""
        self.on_url_required: Callable[[list[dict], Call], None] | None = None
        """Offered the URL elicitations of a -32042 error (handshake era)."""
        self.abandon_rounds: Callable[[Pending], bool] = lambda pending: False
        """Abandon the input rounds a cancelled call waits in; True if there were any (set by the asks)."""
        self._ids = itertools.count(1)
        session.on_notification_hooks.append(self._on_notification)
        self._tails = StderrTails(self.changed)
        session.client.on_stderr.append(self._tails.line)

    def call_tool(self, name: str, arguments: Any, *, arguments_text: str | None = None,
                  timeout: float | None = None) -> Call:
        """Call a tool without waiting; the store signals `call:<id>` when it is answered or makes progress."""
        if arguments_text is not None:
            self.last_arguments[name] = arguments_text
        call = Call(id=next(self._ids), tool=name, arguments=arguments, started=time.time())
        self.calls[call.id] = call

        def recorded(pending: Pending, record: Record) -> None:  # before the write: a fast answer must find it
            call.pending = pending
            if pending.rounds == 1:  # the call's own row: where its chain starts
                call.request_seq, call.request_id = record.seq, pending.id

        def done(pending: Pending) -> None:
            call.elapsed_ms = (time.time() - call.started) * 1000.0
            call.response_seq = pending.response_seq or None
            call.ended_seq = self.session.store.last_seq
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
            self._tails.ended(call)
            self.changed(call)

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params["_meta"] = {"progressToken": f"call-{call.id}"}
        self.session.client.request("tools/call", params, on_done=done, timeout=timeout, call=call,
                                    on_recorded=recorded)
        return call

    def cancel_call(self, call_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel an in-flight call: notifications/cancelled to the server, and the call fails at once.

        A modern call waiting for the user's input has nothing in flight: its round is abandoned instead.
        """
        call = self.calls.get(call_id)
        if call is None or call.pending is None or call.pending.done.is_set():
            return False
        pending, client = call.pending, self.session.client
        in_flight = client.forget(pending)
        waiting = self.abandon_rounds(pending)
        if not in_flight and not waiting:
            return False
        if in_flight:
            client.cancel(pending.id, reason)
        if waiting:
            self.session.store.signal(changes.ASKS)
        client.finish(pending, failure=RequestFailed(f"tools/call: {reason}", reason="cancelled"))
        return True

    def _on_notification(self, msg: dict) -> None:
        if msg.get("method") != "notifications/progress":
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        token = params.get("progressToken")
        if not (isinstance(token, str) and token.startswith("call-") and token[5:].isdigit()):
            return
        call = self.calls.get(int(token[5:]))
        if call is None or call.state != "pending":
            return  # progress can still arrive after a cancel: shown in the timeline, nothing else
        call.progress = {key: params[key] for key in ("progress", "total", "message") if key in params}
        if call.pending is not None:
            self.session.client.extend(call.pending)  # progress resets the timeout, up to the maximum
        self.changed(call)

    def changed(self, call: Call) -> None:
        """Wake the call's long polls and its websocket viewers: what the page shows of it changed."""
        with call.changed:
            call.version += 1
            call.changed.notify_all()
        self.session.store.signal(changes.call(call.id))


class StderrTails:
    """Shows a finished call again while the stderr burst it ended in goes on.

    A server writes its traceback before it answers, but its stdout and stderr are read by two threads, so the
    answer is often recorded (and the result shown) before the traceback's last lines: the result's count of
    stderr lines must follow them. A call is followed while lines keep coming within bursts.GAP_SECONDS.
    """

    def __init__(self, changed: Callable[[Call], None]) -> None:
        self._changed = changed
        self._lock = threading.Lock()
        self._followed: dict[int, tuple[Call, float, int]] = {}
        """Call id → the call, when its last line came, how many came since it ended."""

    def ended(self, call: Call) -> None:
        with self._lock:
            self._followed[call.id] = (call, time.monotonic(), 0)

    def line(self, text: str) -> None:
        """A stderr line was recorded."""
        now = time.monotonic()
        with self._lock:
            for call_id, (call, last, lines) in list(self._followed.items()):
                if now - last > bursts.GAP_SECONDS or lines >= bursts.MAX_LINES:
                    del self._followed[call_id]
                else:
                    self._followed[call_id] = (call, now, lines + 1)
            calls = [call for call, _, _ in self._followed.values()]
        for call in calls:
            self._changed(call)
