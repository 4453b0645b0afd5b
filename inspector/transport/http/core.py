"""The state of one HTTP connection and what both transports share: delivering messages, reading SSE streams,
failing requests that will never be answered, and the events that tell the session what happened.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import httpx

from inspector.transport import ExitInfo
from inspector.transport.sse import SseEvent, SseParser
from inspector.transport.http.messages import (
    NOT_JSON, id_key, media_type_of, method_of, parse_json, preview, request_ids, response_items,
)
from inspector.transport.http.net import Abortable, Failure, SameOriginClient, describe_exception, read_some

ACCEPT_POST = "application/json, text/event-stream"
KEPT_HEADERS = ("content-type", "mcp-session-id", "mcp-protocol-version", "www-authenticate", "location",
                "retry-after", "x-accel-buffering")
AUTH_HINT = "the server needs authorization (OAuth is not supported by mcp-inspect yet; pass a token with --header)"


class Exchange(Abortable):
    """One outgoing message: its POST, its response, and the requests in it still waiting for an answer."""

    def __init__(self, body: bytes, msg: Any, era: str, version: str | None, release_on: str) -> None:
        super().__init__()
        self.body, self.msg, self.era, self.version = body, msg, era, version
        self.method = method_of(msg)
        self.waiting: dict[str, Any] = request_ids(msg)  # request ids not answered yet
        self.release_on = release_on  # when the worker may send the next message: "sent", "headers" or "answer"
        self.released = threading.Event()
        self.cancel_note: str | None = None
        self.session_sent: str | None = None

    def trace(self, name: str, info: dict) -> None:
        super().trace(name, info)
        if name == "http11.send_request_body.complete" and self.release_on == "sent":
            self.released.set()  # this message is on the wire: the next one may go


@dataclass
class StreamState:
    """What a reader learned from one SSE stream: enough to resume it."""

    parser: SseParser = field(default_factory=SseParser)
    delivered: int = 0


def carry_over(parser: SseParser) -> SseParser:
    """A fresh parser for the reconnected stream that remembers the id and the retry delay of the last."""
    fresh = SseParser()
    fresh.last_event_id, fresh.retry_ms = parser.last_event_id, parser.retry_ms
    return fresh


class ConnectionCore:
    """The connection's state, and what the Streamable HTTP and legacy HTTP+SSE parts both use."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, transport: str = "auto",
                 on_message: Callable[[bytes, dict], None], on_event: Callable[[str, dict], None],
                 on_send_failed: Callable[[Any, str], None], on_exit: Callable[[ExitInfo], None],
                 on_session_expired: Callable[[], None] | None = None, refuse_ports: Iterable[int] = (),
                 connect_timeout: float = 10.0) -> None:
        if transport not in ("auto", "streamable-http", "sse"):
            raise ValueError(f"unknown HTTP transport {transport!r} (auto, streamable-http or sse)")
        self.url = url
        self._mode = transport
        self._user_headers = dict(headers or {})
        self._on_message, self._on_event = on_message, on_event
        self._on_send_failed, self._on_exit = on_send_failed, on_exit
        self._on_session_expired = on_session_expired
        self._refuse_ports = frozenset(int(port) for port in refuse_ports)
        self._connect_timeout = connect_timeout
        self.exited = threading.Event()
        self.exit_info: ExitInfo | None = None
        self.chosen_transport: str | None = None if transport == "auto" else transport
        self._base: httpx.URL | None = None
        self._net: SameOriginClient | None = None
        self._lock = threading.Lock()  # connection state below
        self._callbacks = threading.RLock()  # one callback at a time, like the single stdout reader of stdio
        self._queue: queue.Queue[Exchange | None] = queue.Queue()
        self._stopping = threading.Event()  # also the interruptible sleep of reconnect delays
        self._quiet = False  # set when ending: late readers must not report anything
        self._started = False
        self._ending = False
        self._session_id: str | None = None
        self._negotiated: str | None = None  # handshake era: result.protocolVersion of our initialize
        self._modern: str | None = None  # 2026-07-28 era: the version of the last message that declared one
        self._initialize_ids: set[str] = set()
        self._in_flight: dict[str, Exchange] = {}  # request id key -> the exchange waiting for its answer
        self._exchanges: set[Exchange] = set()
        self._streams: set[Abortable] = set()  # GET and legacy SSE streams
        self._get_stream: Abortable | None = None
        self._post_url: httpx.URL | None = None  # legacy HTTP+SSE: the endpoint event's URL
        self._notes_once: set[str] = set()
        self._unreachable = False  # a connection failed; the next HTTP answer says the server is back

    # -- ending ----------------------------------------------------------------------------------------------

    def _end(self, info: ExitInfo) -> None:
        """Close everything and report the exit, once (stop(), or the legacy SSE stream was lost)."""
        with self._lock:
            if self._quiet:
                return
            self._quiet = self._ending = True
            everything = list(self._exchanges) + list(self._streams)
        self._stopping.set()
        for item in everything:
            item.abort()
            if isinstance(item, Exchange):
                item.released.set()
        self._queue.put(None)
        if self._net is not None:
            with suppress(Exception):  # closing must not stop the exit from being reported
                self._net.close()
        self.exit_info = info
        with self._callbacks:
            self._on_exit(info)
        self.exited.set()

    def _fail_everything(self, reason: str) -> None:
        """on_send_failed for every request still waiting, sent or queued (stop, or the SSE stream was lost)."""
        with self._lock:
            exchanges = set(self._exchanges) | set(self._in_flight.values())
        for exchange in exchanges:
            self._fail(exchange, reason)
        while True:  # messages still queued were never sent
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self._fail(item, "the connection was closed before it was sent")
                self._forget(item)

    # -- incoming messages -----------------------------------------------------------------------------------

    def _meta(self, response: httpx.Response, via: str, event_id: str | None = None) -> dict:
        """The http meta that goes with an incoming message."""
        meta = {"status": response.status_code,
                "headers": {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers},
                "via": via}
        if event_id is not None:
            meta["event_id"] = event_id
        return meta

    def _deliver(self, raw: bytes, meta: dict, value: Any = NOT_JSON) -> None:
        """Hand one message to the session, after noting the requests it answers."""
        if value is NOT_JSON:
            value = parse_json(raw)
        for item in response_items(value):
            self._answered(item)
        if self._quiet:
            return
        with self._callbacks:
            self._on_message(raw, meta)

    def _answered(self, response: dict) -> None:
        """A response arrived: its request waits no more; an initialize answer gives the negotiated version."""
        key = id_key(response.get("id"))
        with self._lock:
            exchange = self._in_flight.pop(key, None)
            if exchange is not None:
                exchange.waiting.pop(key, None)
            if key in self._initialize_ids:
                self._initialize_ids.discard(key)
                result = response.get("result")
                version = result.get("protocolVersion") if isinstance(result, dict) else None
                if isinstance(version, str):
                    self._negotiated = version
        if exchange is not None and exchange.release_on == "answer" and not exchange.waiting:
            exchange.released.set()  # initialize answered: the version is known, the next message may go

    def _pump(self, handle: Abortable, response: httpx.Response, state: StreamState, via: str,
              resumed: bool = False, on_endpoint: Callable[[SseEvent], None] | None = None) -> str | None:
        """Read SSE events until the server ends the stream; None when it ended cleanly, else why it broke.

        Reading goes on after a request's response: subscriptions/listen (2026-07-28) and servers that keep a
        stream open end it themselves, and closing it early would cancel the request in that era.
        """
        try:
            for chunk in response.iter_bytes():
                for event in state.parser.feed(chunk):
                    self._sse_event(event, response, state, via, resumed, on_endpoint)
            for event in state.parser.close():
                self._sse_event(event, response, state, via, resumed, on_endpoint)
        except Exception as exc:  # noqa: BLE001 - includes the end forced by abort()
            if handle.aborted:
                return "closed by mcp-inspect"
            return describe_exception(exc, response.request.url, self._connect_timeout)
        return None

    def _sse_event(self, event: SseEvent, response: httpx.Response, state: StreamState, via: str,
                   resumed: bool, on_endpoint: Callable[[SseEvent], None] | None) -> None:
        """One SSE event: a message is delivered, the endpoint goes to the legacy reader, the rest is noted."""
        if event.event == "message":
            if not event.data.strip():
                return  # whitespace only: a priming event in all but name
            meta = self._meta(response, via, event.id)
            if resumed:
                meta["resumed"] = True
            state.delivered += 1
            self._deliver(event.data.encode("utf-8"), meta)
        elif event.event == "endpoint" and on_endpoint is not None:
            on_endpoint(event)
        else:
            self._note_once(f"event:{event.event}", {"note": f"ignored SSE events named {event.event!r}",
                                                     "data": event.data[:200]})

    # -- answers that are not messages -----------------------------------------------------------------------

    def _auth_failure(self, response: httpx.Response) -> Failure:
        """A 401 in words; the challenge (WWW-Authenticate) is kept for the user."""
        challenge = response.headers.get("www-authenticate")
        return Failure(f"HTTP 401 Unauthorized: {AUTH_HINT}", kind="auth", www_authenticate=challenge,
                       status=401, content_type=response.headers.get("content-type"),
                       body=preview(read_some(response)))

    def _not_mcp(self, response: httpx.Response, body: bytes | None = None, trouble: str | None = None) -> Failure:
        """A failure in words for an answer an MCP server would not give (HTML page, 500 text, wrong type);
        `trouble` says what was wrong with a body of the right type (then the type is not blamed)."""
        body = read_some(response) if body is None else body
        status, media_type = response.status_code, media_type_of(response) or "no content type"
        if 200 <= status < 300 and trouble:
            error = f"not an MCP answer: HTTP {status} with {media_type} that {trouble}"
        elif 200 <= status < 300:
            error = (f"not an MCP answer: HTTP {status} with {media_type} (expected application/json JSON-RPC "
                     "or text/event-stream)")
        else:
            error = f"HTTP {status} {response.reason_phrase}".rstrip() + f" ({media_type})"
            if status == 403:
                error += "; the server may reject the Host or Origin header"
        return Failure(error, kind="http", status=status, content_type=response.headers.get("content-type"),
                       body=preview(body))

    # -- bookkeeping and callbacks ---------------------------------------------------------------------------

    def _with_user_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """The user's headers win over ours (an inspector may want to send a wrong one on purpose)."""
        mine = {name.lower() for name in self._user_headers}
        merged = {name: value for name, value in headers.items() if name.lower() not in mine}
        merged.update(self._user_headers)
        return merged

    def _choose(self, transport: str, why: str, **extra: Any) -> None:
        """auto: the transport is known; said once."""
        with self._lock:
            if self.chosen_transport is not None:
                return
            self.chosen_transport = transport
        self._emit("transport", {"chosen": transport, "why": why, **extra})

    def _settle(self, exchange: Exchange, reason: str) -> None:
        """Fail the exchange's unanswered requests: with the cancel note if we closed it, else with `reason`."""
        if exchange.waiting:
            self._fail(exchange, exchange.cancel_note if exchange.aborted and exchange.cancel_note else reason)

    def _fail(self, exchange: Exchange, reason: str) -> None:
        """on_send_failed for each request of the exchange still waiting, once; then forget it."""
        with self._lock:
            waiting, exchange.waiting = exchange.waiting, {}
            for key in waiting:
                if self._in_flight.get(key) is exchange:
                    del self._in_flight[key]
        for request_id in waiting.values():
            if not self._quiet:
                with self._callbacks:
                    self._on_send_failed(request_id, reason)

    def _forget(self, exchange: Exchange) -> None:
        """The exchange's thread is done (its requests may still wait for an answer on the SSE stream)."""
        with self._lock:
            self._exchanges.discard(exchange)

    def _track(self, handle: Abortable) -> None:
        with self._lock:
            self._streams.add(handle)

    def _untrack(self, handle: Abortable) -> None:
        with self._lock:
            self._streams.discard(handle)

    def _ids_text(self, exchange: Exchange) -> str:
        return ", ".join(str(value) for value in exchange.waiting.values()) or "?"

    def _detail(self, error: str, url: Any, response: httpx.Response | None = None, body: bytes | None = None,
                **extra: Any) -> dict:
        detail = {"error": error, "url": str(url),
                  "status": response.status_code if response is not None else None,
                  "content_type": response.headers.get("content-type") if response is not None else None,
                  "body": preview(body)}
        detail.update(extra)
        return detail

    def _report(self, failure: Failure, url: Any, **extra: Any) -> None:
        """A Failure as a transport-error event with the standard keys."""
        detail = {"error": failure.error, "url": str(url), "status": None, "content_type": None, "body": None}
        detail.update(failure.detail)
        detail.update(extra)
        if detail.get("kind") == "connect":
            with self._lock:
                self._unreachable = True
        self._emit("transport-error", detail)

    def _reachable(self, response: httpx.Response) -> None:
        """An HTTP answer came: after a failed connection, say once that the server answers again."""
        with self._lock:
            was, self._unreachable = self._unreachable, False
        if was:
            self._emit("transport", {"note": f"the server answers again (HTTP {response.status_code})",
                                     "reachable": True})

    def _note_once(self, key: str, detail: dict) -> None:
        with self._lock:
            if key in self._notes_once:
                return
            self._notes_once.add(key)
        self._emit("transport", detail)

    def _emit(self, name: str, detail: dict) -> None:
        """One timeline event for the session (none after the end)."""
        if self._quiet:
            return
        with self._callbacks:
            self._on_event(name, detail)
