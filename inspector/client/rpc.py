"""The JSON-RPC client core: ids, the pending table, record-then-write, timeouts, the server's own requests.

Every byte in either direction becomes a Record in the sink before anything acts on it. The client owns the ids it
sends (integers from one counter, never reused across restarts, so pairing stays unambiguous); the server's
requests have their own id space and are answered through `on_server_request`, in order, by one thread of a
bounded queue (`answers.py`), never one thread each. The page's Session and the
headless commands (`call`, `check`, `replay`) all speak through this one class.

It knows no page and no era: the modern era's `_meta` comes in through `meta`, and its input rounds through the
`on_answer` hook (an answer arrived; may someone else take it?), so this module imports neither asks nor calls.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable

from inspector.protocol import eras, jsonrpc
from inspector.protocol.records import (EVENT, INVALID, MESSAGE, STDERR, TO_SERVER, UNANSWERED, Record,
                                        record_server_lines, record_server_message)
from inspector.client.answers import ServerRequests, default_answer
from inspector.client.deadlines import DEFAULT_TIMEOUT, FOREVER, Deadlines  # noqa: F401 - DEFAULT_TIMEOUT re-exported
from inspector.client.pending import Pending, RequestFailed  # re-exported: callers import them from here

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

class RawRefused(ValueError):
    """A hand-made request was not sent: its id belongs to a request of ours still waiting for its answer."""


class Client:
    """One JSON-RPC conversation over whatever transport is attached (stdio process or HTTP connection)."""

    def __init__(self, sink, *, timeout: float = 60.0, max_timeout: float | None = None,
                 who: str = "mcp-inspect") -> None:
        self.sink = sink
        """Anything with add(record) -> record: the page's Store or a headless recording sink."""
        self.timeout = timeout
        self.max_timeout = max_timeout if max_timeout is not None else timeout * 10
        self.who = who
        """Who gives up in a timeout's notifications/cancelled reason (mcp-inspect, mcp-inspect check, ...)."""
        self.transport: Any = None
        self.meta: Callable[[], dict] | None = None
        """Modern era: the `_meta` keys every request carries; None in the handshake era."""
        self.on_server_request: Callable[[dict, Any], dict | None] = lambda msg, transport: default_answer(msg)
        """(request, transport that asked) -> the reply to send, or None (answered later, or not at all)."""
        self.on_answer: Callable[[Pending, dict], bool] | None = None
        """Offered each answer before it finishes its request; True = taken (modern input rounds)."""
        self.on_notification: list[Callable[[dict], None]] = []
        self.on_stderr: list[Callable[[str], None]] = []
        self.on_timeout: Callable[[Pending], None] | None = None
        """Called after a timeout is recorded, before notifications/cancelled goes out."""
        self.heard_at: float | None = None
        """When the attached server first said anything (stdout or stderr): the era probe's clock starts there."""
        self.activity = threading.Condition()
        """Notified on each line from the server and each finished request (the probe waits on it)."""
        self.gone: str | None = None
        """Why the attached transport will answer nothing more (it exited), or None."""
        self._ids = itertools.count(1)
        self._pending: dict[str, Pending] = {}
        self._raw_open: Counter[str] = Counter()
        """Ids of hand-made requests still unanswered: their answers are theirs, and our counter skips them."""
        self._lock = threading.RLock()
        self._send_lock = threading.Lock()
        self.deadlines = Deadlines(self._expire_due)
        """The request-timeout thread (one per client, ended by close())."""
        self.server_requests = ServerRequests(self._answer_request,
                                              lambda limit: self.event(UNANSWERED, {"limit": limit}))
        """The server's own requests, answered in order by one thread (not one each), the reader never waiting."""

    # -- the transport -----------------------------------------------------------------------------------------

    def attach(self, transport: Any) -> None:
        """Speak over this transport from now on (a new process after a restart keeps the id counter)."""
        with self._lock:
            self.transport, self.gone, self.heard_at = transport, None, None
            self._raw_open.clear()  # a new server answers nothing that was sent to the old one

    def close(self) -> None:
        """No more requests: the timeout thread ends."""
        self.deadlines.close()

    def event(self, name: str, detail: dict) -> Record:
        """Record a lifecycle event."""
        return self.sink.add(Record(EVENT, event=name, detail=detail))

    # -- sending -----------------------------------------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: float | None = None,
                on_done: Callable[[Pending], None] | None = None, call: Any = None,
                on_recorded: Callable[[Pending, Record], None] | None = None) -> Pending:
        """Send a request under the next id; returns at once with its Pending (never blocks on the server)."""
        pending = Pending(id=0, method=method, timeout=self.timeout if timeout is None else timeout,
                          on_done=on_done, params=params, call=call, on_recorded=on_recorded)
        self.send_pending(pending)
        return pending

    def send_pending(self, pending: Pending, follows: int | None = None) -> None:
        """Send (or re-send, under a new id) a pending request; the modern era adds its `_meta`."""
        pending.sent_at = now = time.monotonic()
        pending.deadline = now + pending.timeout
        pending.hard_deadline = now + max(pending.timeout, self.max_timeout)
        params, meta = pending.params, self.meta
        if meta is not None and (params is None or isinstance(params, dict)):
            params = eras.with_meta(params, meta())
        if not self._register(pending, new_id=True):
            return
        self.deadlines.add(pending.deadline)

        def recorded(record: Record) -> None:  # before the write: the answer may come before send() returns
            pending.seq = record.seq
            if pending.on_recorded is not None:
                pending.on_recorded(pending, record)
        if self.send(jsonrpc.request(pending.id, pending.method, params), follows=follows,
                     on_recorded=recorded) is None:
            if self.forget(pending):
                transport = self.transport
                gone = transport is None or transport.exited.is_set()
                why = "the server's stdin is closed" if gone else "could not write to the server"
                self.finish(pending, failure=RequestFailed(f"{pending.method}: {why}",
                                                           reason="exited" if gone else "transport"))

    def expect(self, request_id: Any, method: str) -> Pending:
        """Wait for the answer to a request the caller writes itself (replay's own ids); no timeout of ours."""
        pending = Pending(id=request_id, method=method, timeout=FOREVER)
        self._register(pending)
        return pending

    def _register(self, pending: Pending, new_id: bool = False) -> bool:
        with self._lock:
            if new_id:  # under the lock: a hand-made request cannot take this id between the pick and the entry
                pending.id = next(i for i in self._ids if self._raw_open[jsonrpc.id_key(i) or ""] <= 0)
            key = jsonrpc.id_key(pending.id)
            transport, gone = self.transport, self.gone
            if transport is not None and gone is None and not transport.exited.is_set():
                if key is not None:
                    self._pending[key] = pending  # registered before sending: a fast answer must find it
                return True
        why = gone or "the server is not running"
        self.finish(pending, failure=RequestFailed(f"{pending.method}: {why}",
                                                   reason="exited" if gone else "not-running"))
        return False

    def send(self, msg: Any, *, origin: str | None = None, follows: int | None = None,
             on_recorded: Callable[[Record], None] | None = None) -> Record | None:
        """Record, then write one message; None when it could not be written."""
        record = Record(MESSAGE, dir=TO_SERVER, msg=msg, origin=origin, follows=follows)
        return self.write(record, jsonrpc.encode(msg), on_recorded=on_recorded)

    def send_line(self, line: str, *, origin: str | None = "user") -> Record | None:
        """Send exactly this line (one line, even if it is not JSON or not JSON-RPC), recorded as what it is.

        A request in it whose id is one of ours still waiting is refused (RawRefused, nothing sent): its answer
        would be taken for ours. Until a hand-made request is answered, its id is its own: the answer goes to
        no request of ours, and our counter skips that id."""
        line = line.replace("\r", "").replace("\n", " ")  # stdio framing: one message, one line
        decoded = jsonrpc.decode_line(line.encode("utf-8", "surrogatepass"))
        if decoded.kind == jsonrpc.INVALID:
            record = Record(INVALID, dir=TO_SERVER, raw=line, error=decoded.problem, origin=origin)
        else:
            record = Record(MESSAGE, dir=TO_SERVER, msg=decoded.msg, origin=origin)
        keys = jsonrpc.request_ids(decoded.msg) if decoded.kind != jsonrpc.INVALID else []
        with self._lock:
            for key in keys:
                if key in self._pending:
                    taken = self._pending[key]
                    row = f" (row #{taken.seq})" if taken.seq else ""
                    raise RawRefused(f"Not sent: id {key} is taken by a {taken.method} request still waiting for "
                                     f"its answer{row}. Use another id.")
            self._raw_open.update(keys)
        written = self.write(record, (line + "\n").encode("utf-8", "replace"))
        if written is None and keys:
            with self._lock:
                self._raw_open.subtract(keys)
        return written

    def write(self, record: Record, data: bytes, on_recorded: Callable[[Record], None] | None = None) -> Record | None:
        """Record, then write the bytes; None when there is no transport or the write failed."""
        transport = self.transport
        # One lock around record-then-write keeps the recording's order equal to the pipe's order. It is never
        # held while waiting on the server: a transport's send() queues what cannot be written at once.
        with self._send_lock:
            if transport is not None and hasattr(transport, "request_meta"):
                record.http = transport.request_meta(record.msg)
            self.sink.add(record)
            if on_recorded is not None:
                on_recorded(record)
            if transport is None or transport.exited.is_set():
                return None
            try:
                transport.send(data)
            except (OSError, ValueError) as exc:
                self.event("transport-error", {"error": f"could not write to the server: {exc}", "seq": record.seq})
                return None
        return record

    def notify(self, method: str, params: dict | None = None) -> None:
        """Send a notification."""
        if self.transport is not None:
            self.send(jsonrpc.notification(method, params))

    def cancel(self, request_id: Any, reason: str) -> None:
        """Tell the server we gave up on a request (it may stop working on it)."""
        self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    def reply(self, transport: Any, msg: dict) -> bool:
        """Answer a server request on the transport that asked (not on a server started since)."""
        if transport is not self.transport or transport is None or transport.exited.is_set():
            return False
        return self.send(msg) is not None

    # -- the pending table -------------------------------------------------------------------------------------

    def forget(self, pending: Pending) -> bool:
        """Stop waiting for a request (a later answer is still recorded); False if it was no longer waiting."""
        key = jsonrpc.id_key(pending.id)
        with self._lock:
            if key is not None and self._pending.get(key) is pending:
                del self._pending[key]
                return True
        return False

    def extend(self, pending: Pending) -> None:
        """Progress came: push the request's timeout back, up to its maximum."""
        with self._lock:
            if self._pending.get(jsonrpc.id_key(pending.id) or "") is not pending:
                return
            pending.deadline = min(time.monotonic() + pending.timeout, pending.hard_deadline)
        self.deadlines.add(pending.deadline)

    def finish(self, pending: Pending, *, response: dict | None = None, failure: RequestFailed | None = None) -> None:
        """Give a request its answer or failure (unless `on_answer` takes the answer), then call its on_done."""
        if response is not None and self.on_answer is not None and self.on_answer(pending, response):
            return  # not finished: it goes out again once someone answered
        pending.response, pending.failure = response, failure
        pending.done.set()
        with self.activity:
            self.activity.notify_all()
        if pending.on_done:
            try:
                pending.on_done(pending)
            except Exception as exc:  # a broken callback must not kill the reader thread
                self.event("transport-error", {"error": f"internal error handling {pending.method}: {exc!r}"})

    def give_up(self, request_id: Any, why: str, reason: str) -> None:
        """Fail one pending request now: no answer will come for it (HTTP refused it, the server cancelled it)."""
        key = jsonrpc.id_key(request_id)
        with self._lock:
            pending = self._pending.pop(key, None) if key is not None else None
        if pending is not None:
            self.finish(pending, failure=RequestFailed(f"{pending.method}: {why}", reason=reason))

    def fail_all(self, why: str, reason: str, *, gone: bool = False) -> None:
        """Fail every pending request with `<method>: why`; gone: the transport will answer nothing more."""
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
            if gone:
                self.gone = why
        for item in pending:
            self.finish(item, failure=RequestFailed(f"{item.method}: {why}", reason=reason))

    def expire(self, pending: Pending, after: float) -> bool:
        """Give up on a request that got no answer within `after` s: recorded, cancelled, failed.

        False when it already had its answer (it is then used, not discarded).
        """
        if not self.forget(pending):
            return False
        self.event("timeout", {"id": pending.id, "method": pending.method, "after_s": after})
        if self.on_timeout is not None:
            self.on_timeout(pending)
        self.cancel(pending.id, f"{self.who}: no answer within {after:g} s")
        self.finish(pending, failure=RequestFailed(f"{pending.method}: no answer within {after:g} s",
                                                   reason="timeout"))
        return True

    def _expire_due(self, now: float) -> None:
        with self._lock:
            due = [p for p in self._pending.values() if p.deadline <= now]
        for item in due:  # pushed by progress to the maximum: that is the limit it ran into, not --timeout
            capped = item.deadline >= item.hard_deadline
            self.expire(item, max(item.timeout, self.max_timeout) if capped else item.timeout)

    # -- receiving ---------------------------------------------------------------------------------------------

    def on_line(self, line: bytes, http: dict | None = None) -> None:
        """One line (or HTTP body) from the server: recorded, then matched or dispatched."""
        self._heard()
        self._dispatch(*record_server_message(self.sink, line, http))

    def on_lines(self, lines: list[bytes]) -> None:
        """The stdout lines of one read: all recorded at once (one write), then each matched or dispatched."""
        self._heard()
        for decoded, record in record_server_lines(self.sink, lines):
            self._dispatch(decoded, record)

    def _dispatch(self, decoded: jsonrpc.Decoded, record: Record) -> None:
        if decoded.kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            key = jsonrpc.id_key(decoded.msg.get("id"))
            with self._lock:
                if key is not None and self._raw_open[key] > 0:  # the answer to a hand-made request: not ours
                    self._raw_open[key] -= 1
                    pending = None
                else:
                    pending = self._pending.pop(key, None) if key is not None else None
            if pending is not None:
                pending.response_seq = record.seq
                self.finish(pending, response=decoded.msg)
        elif decoded.kind == jsonrpc.NOTIFICATION:
            if decoded.msg.get("method") == "notifications/cancelled":
                self._on_server_cancelled(decoded.msg)
            for hook in self.on_notification:
                hook(decoded.msg)
        elif decoded.kind == jsonrpc.REQUEST:
            self.server_requests.put(decoded.msg, self.transport)

    def on_stderr_line(self, text: str) -> None:
        """One stderr line from the server."""
        self._heard()
        text = self.sink.add(Record(STDERR, text=text)).text or text  # as stored: known secrets masked
        for hook in self.on_stderr:
            hook(text)

    def _heard(self) -> None:
        if self.heard_at is None:
            self.heard_at = time.monotonic()
        with self.activity:
            self.activity.notify_all()

    def _on_server_cancelled(self, msg: dict) -> None:
        """The server gave up on one of our requests (on stdio this is also how it ends subscriptions/listen)."""
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        reason = params.get("reason") if isinstance(params.get("reason"), str) else ""
        self.give_up(params.get("requestId"), "cancelled by the server" + (f" ({reason})" if reason else ""),
                     "cancelled")

    def _answer_request(self, msg: dict, transport: Any) -> None:
        if transport is None:
            return
        try:
            reply = self.on_server_request(msg, transport)
            if reply is not None:
                self.reply(transport, reply)
        except Exception as exc:  # noqa: BLE001 - the one answering thread must answer the next request too
            self.event("transport-error", {"error": f"internal error answering {msg.get('method')}: {exc!r}"})
