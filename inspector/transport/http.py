"""MCP over HTTP with the surface of `StdioProcess`: Streamable HTTP (both eras) and the legacy HTTP+SSE transport.

The inspector speaks raw JSON-RPC, so this module moves bytes and never builds or repairs messages. It only
looks inside them to choose headers (the era, the method, the name), to learn the session and the negotiated
version, and to tell the session when a request will never be answered.

Threads, all daemons: one worker POSTs the queued messages in order; every POST then runs on a thread of its
own, and the worker waits for it only as long as order needs: a request until its body is on the wire, a
notification or response until its response headers came, and `initialize` until its answer (it brings the
session id and the negotiated version that every later message carries).
Reading a response, a long SSE stream included, never holds up the next POST. The GET stream (handshake era)
and the legacy SSE stream have a thread each. Nothing blocks forever: every connection can be aborted by
shutting its socket down, which is how cancellation (2026-07-28: closing the response stream IS the
cancellation) and stop() work.

Safety (security.md row 29): redirects are handled here, never by httpx: only same-origin ones are followed,
nothing is sent to another origin (so the user's headers never leave it), the inspector's own port is never a
target, and the first address a host name resolves to is pinned for the life of the connection (a DNS
rebinding cannot move a later request elsewhere). Proxies from the environment are not used.

What it reports, besides messages (`on_message(body, meta)`, meta = status, MCP-relevant headers, via
"post" | "get-stream" | "sse-stream", event_id, and resumed=True on a stream picked up with Last-Event-ID):

- on_event("transport-error", {error, url, status, content_type, body, ...}): a failure in one line; extra keys
  say more: kind ("connect", "http", "auth", "redirect", "session-expired"), location (redirects),
  www_authenticate (401), session_id (session-expired), get_stream=True (the GET stream failed);
- on_event("transport", {chosen, why[, endpoint]}): auto found the transport;
- on_event("transport", {note, ...}): what the transport did on its own: the GET stream opened, or a 405 said
  there is none; a stream reconnects or gives up; a redirect was followed; a request was cancelled by closing
  its stream (request_id); the legacy endpoint (endpoint); the session was ended with DELETE.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import queue
import re
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from contextlib import closing, suppress
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from .sse import SseEvent, SseParser
from .stdio import ExitInfo, SpawnError

MODERN_ERA = "2026-07-28"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
ACCEPT_POST = "application/json, text/event-stream"
EVENT_STREAM = "text/event-stream"
KEPT_HEADERS = ("content-type", "mcp-session-id", "mcp-protocol-version", "www-authenticate", "location",
                "retry-after", "x-accel-buffering")
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
MAX_RESUMES = 2
BODY_PREVIEW_CHARS = 500
ERROR_BODY_BYTES = 64 * 1024
WRITE_TIMEOUT = 30.0
REDACTED = "[REDACTED]"
AUTH_HINT = "the server needs authorization (OAuth is not supported by mcp-inspect yet; pass a token with --header)"
# Methods whose Mcp-Name header (2026-07-28) mirrors one of their params.
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_DATE_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
_SAFE_HEADER = re.compile(r"[\x20-\x7e]*")
_NOT_JSON = object()


class ConnectError(SpawnError):
    """The HTTP server could not be reached, or did not answer as an MCP server (one line, in words)."""


class _Failure(Exception):
    """A transport failure, already put in words; `detail` adds keys to the transport-error event."""

    def __init__(self, error: str, **detail: Any) -> None:
        super().__init__(error)
        self.error = error
        self.detail = detail


# -- small pure helpers --------------------------------------------------------------------------------------


def _id_key(value: Any) -> str:
    """A key for a JSON-RPC id that keeps 1, "1" and true apart."""
    return json.dumps(value, sort_keys=True, default=str)


def _request_ids(msg: Any) -> dict[str, Any]:
    """The ids of the requests in an outgoing message (a batch may hold several), by key."""
    items = msg if isinstance(msg, list) else [msg]
    return {_id_key(item["id"]): item["id"] for item in items
            if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item}


def _response_items(value: Any) -> list[dict]:
    """The responses (result or error, no method) in an incoming message."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and "method" not in item
            and ("result" in item or "error" in item)]


def _looks_jsonrpc(value: Any) -> bool:
    """A JSON value an MCP server could mean as JSON-RPC (a message, or a non-empty batch of them)."""
    if isinstance(value, list):
        return bool(value) and all(_looks_jsonrpc(item) for item in value)
    return isinstance(value, dict) and any(key in value for key in ("jsonrpc", "method", "result", "error"))


def _is_jsonrpc_error(value: Any) -> bool:
    """Does the value hold a JSON-RPC error object (what tells a Streamable HTTP refusal from a legacy server)?"""
    return any("error" in item for item in _response_items(value))


def _parse_json(body: bytes) -> Any:
    """The parsed value, or _NOT_JSON (null is a JSON value, so None cannot mean "not JSON")."""
    try:
        return json.loads(body)
    except ValueError:
        return _NOT_JSON


def _method(msg: Any) -> str | None:
    return msg.get("method") if isinstance(msg, dict) and isinstance(msg.get("method"), str) else None


def _params(msg: Any) -> dict:
    params = msg.get("params") if isinstance(msg, dict) else None
    return params if isinstance(params, dict) else {}


def _modern_version(msg: Any) -> str | None:
    """The 2026-07-28-or-later version a message declares in `params._meta`, else None (handshake era)."""
    meta = _params(msg).get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(version, str) and _DATE_VERSION.fullmatch(version) and version >= MODERN_ERA:
        return version
    return None


def header_value(value: str) -> str:
    """A header value as 2026-07-28 writes it: verbatim if printable ASCII, else `=?base64?<utf-8 b64>?=`."""
    looks_wrapped = value.startswith("=?base64?") and value.endswith("?=")
    if _SAFE_HEADER.fullmatch(value) and value == value.strip() and not looks_wrapped:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _media_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def _is_json_type(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


def _preview(body: bytes | None) -> str | None:
    if not body:
        return None
    return body.decode("utf-8", "replace")[:BODY_PREVIEW_CHARS]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _read_some(response: httpx.Response, limit: int = ERROR_BODY_BYTES) -> bytes:
    """At most `limit` bytes of a body: enough to show, and an endless body cannot hold us."""
    data = bytearray()
    try:
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.HTTPError, OSError):
        pass
    return bytes(data[:limit])


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in: what "same origin" compares."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host.lower(), port


def _origin_text(url: httpx.URL) -> str:
    scheme, host, port = _origin(url)
    return f"{scheme}://{host}:{port}"


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _is_loopback(host: str) -> bool:
    """localhost, 127/8, ::1, or 0.0.0.0 (which reaches this machine too)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    ip = _ip(host)
    return ip is not None and (ip.is_loopback or ip.is_unspecified)


def _is_link_local(host: str) -> bool:
    ip = _ip(host)
    return ip is not None and ip.is_link_local


def _describe_exception(exc: BaseException, url: httpx.URL, connect_timeout: float) -> str:
    """One line in words for an httpx failure: refused, TLS, timeout, name resolution, a broken connection."""
    chain, seen = [], exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    where = f"{url.host}:{_origin(url)[2]}"
    tls = next((item for item in chain if isinstance(item, ssl.SSLError)), None)
    if tls is not None:
        why = getattr(tls, "verify_message", None) or getattr(tls, "reason", None) or str(tls)
        return _one_line(f"TLS error with {where}: {why}")
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect to {where} within {connect_timeout:g} s (connect timeout)"
    if any(isinstance(item, ConnectionRefusedError) for item in chain):
        return f"connection refused: nothing is listening at {where}"
    if any(isinstance(item, socket.gaierror) for item in chain):
        return f"cannot resolve the host name {url.host}"
    if isinstance(exc, httpx.ConnectError):
        return _one_line(f"cannot connect to {where}: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return _one_line(f"the server at {where} broke the HTTP exchange: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return _one_line(f"timed out talking to {where}: {type(exc).__name__}")
    return _one_line(f"HTTP exchange with {where} failed: {type(exc).__name__}: {exc}")


def _shutdown(sock: socket.socket | None) -> None:
    """Wake a thread blocked reading this socket (close() alone would not) by shutting it down."""
    if sock is None:
        return
    try:
        # The plain socket method: SSLSocket.shutdown would also drop its SSL object under the reading thread.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


# -- connections: pinned addresses, abortable exchanges ------------------------------------------------------


class _PinnedBackend(httpcore.SyncBackend):
    """Resolves each host name once and connects to that address from then on (no DNS rebinding)."""

    def __init__(self) -> None:
        self._pins: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        last_error: Exception | None = None
        for address in self._addresses(host, port):
            try:
                stream = super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc  # as socket.create_connection does: try the host's next address
                continue
            with self._lock:
                self._pins[host] = [address]  # the address that answered is the one used from now on
            return stream
        assert last_error is not None
        raise last_error

    def _addresses(self, host: str, port: int) -> list[str]:
        if _ip(host) is not None:
            return [host]
        with self._lock:
            pinned = self._pins.get(host)
        if pinned:
            return pinned
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from exc
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        with self._lock:
            return self._pins.setdefault(host, addresses)


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's transport on a pool with the pinning backend and no keep-alive.

    No keep-alive: every request opens its own connection, so the socket an exchange saw in its trace is
    only its own, and shutting it down (cancel, stop) cannot hurt another exchange.
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        limits = httpx.Limits(max_keepalive_connections=0)
        super().__init__(verify=ssl_context, limits=limits, trust_env=False)
        self._pool.close()
        # httpx offers no public way to pass a network backend; its pool is the documented httpcore one.
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, max_keepalive_connections=0,
                                             network_backend=_PinnedBackend())


class _Abortable:
    """One HTTP exchange's connection, captured through httpcore's trace hook so another thread can abort it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.aborted = False

    def trace(self, name: str, info: dict) -> None:
        """httpcore trace callback: remember the socket as soon as it exists."""
        if name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._sock = sock
                aborted = self.aborted
            if aborted:
                _shutdown(sock)

    def abort(self) -> None:
        """Close the connection under whoever is reading it; the reader sees the end of the stream."""
        with self._lock:
            self.aborted = True
            sock = self._sock
        _shutdown(sock)


class _Exchange(_Abortable):
    """One outgoing message: its POST, its response, and the requests in it still waiting for an answer."""

    def __init__(self, body: bytes, msg: Any, era: str, version: str | None, release_on: str) -> None:
        super().__init__()
        self.body, self.msg, self.era, self.version = body, msg, era, version
        self.method = _method(msg)
        self.waiting: dict[str, Any] = _request_ids(msg)  # request ids not answered yet
        self.release_on = release_on  # when the worker may send the next message: "sent", "headers" or "answer"
        self.released = threading.Event()
        self.cancel_note: str | None = None
        self.session_sent: str | None = None

    def trace(self, name: str, info: dict) -> None:
        super().trace(name, info)
        if name == "http11.send_request_body.complete" and self.release_on == "sent":
            self.released.set()  # this message is on the wire: the next one may go


@dataclass
class _StreamState:
    """What a reader learned from one SSE stream: enough to resume it."""

    parser: SseParser = field(default_factory=SseParser)
    delivered: int = 0


# -- the connection ------------------------------------------------------------------------------------------


class HttpConnection:
    """One MCP server reached over HTTP; drive it like a `StdioProcess`."""

    pid = None

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
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()  # connection state below
        self._callbacks = threading.RLock()  # one callback at a time, like the single stdout reader of stdio
        self._queue: queue.Queue[_Exchange | None] = queue.Queue()
        self._stopping = threading.Event()  # also the interruptible sleep of reconnect delays
        self._quiet = False  # set when ending: late readers must not report anything
        self._started = False
        self._ending = False
        self._session_id: str | None = None
        self._negotiated: str | None = None  # handshake era: result.protocolVersion of our initialize
        self._modern: str | None = None  # 2026-07-28 era: the version of the last message that declared one
        self._initialize_ids: set[str] = set()
        self._in_flight: dict[str, _Exchange] = {}  # request id key -> the exchange waiting for its answer
        self._exchanges: set[_Exchange] = set()
        self._streams: set[_Abortable] = set()  # GET and legacy SSE streams
        self._get_stream: _Abortable | None = None
        self._post_url: httpx.URL | None = None  # legacy HTTP+SSE: the endpoint event's URL
        self._notes_once: set[str] = set()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Check the URL; for legacy SSE also open the stream and wait for its endpoint. Raises ConnectError."""
        self._base = self._check_url(self.url)
        self._client = self._make_client()
        if self._mode == "sse":
            try:
                self._connect_legacy(self._base)
            except _Failure as failure:
                self._client.close()
                raise ConnectError(failure.error) from None
        self._started = True
        threading.Thread(target=self._work, name="mcp-http-worker", daemon=True).start()

    def _check_url(self, url: str) -> httpx.URL:
        """The URL parsed, or a ConnectError: http(s) with a host, and not mcp-inspect's own port."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise ConnectError(f"not a usable URL: {url} ({exc})") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ConnectError(f"not an http(s) URL with a host: {url}")
        if _is_loopback(parsed.host) and _origin(parsed)[2] in self._refuse_ports:
            raise ConnectError(f"refusing to connect to {url}: that is mcp-inspect's own port")
        return parsed

    def _make_client(self) -> httpx.Client:
        """No read timeout (streams may be quiet for long; cancel and stop abort instead), no redirects, no proxies."""
        timeout = httpx.Timeout(connect=self._connect_timeout, read=None, write=WRITE_TIMEOUT,
                                pool=self._connect_timeout)
        return httpx.Client(transport=_PinnedTransport(httpx.create_ssl_context()), timeout=timeout,
                            follow_redirects=False, trust_env=False)

    def stop(self, stdin_grace: float = 2.0) -> ExitInfo | None:
        """End the session (DELETE), close every stream, report the exit once; returns within a few seconds."""
        with self._lock:
            if not self._started:
                return None
            ending, self._ending = self._ending, True
        if ending:
            self.exited.wait(3.0)
            return self.exit_info
        self._delete_session(timeout=min(max(stdin_grace, 0.2), 2.0))
        self._fail_everything("the connection was closed before the server answered")
        self._end(ExitInfo(code=None, signal=None, reason="the connection was closed"))
        return self.exit_info

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
            if isinstance(item, _Exchange):
                item.released.set()
        self._queue.put(None)
        if self._client is not None:
            with suppress(Exception):  # closing must not stop the exit from being reported
                self._client.close()
        self.exit_info = info
        with self._callbacks:
            self._on_exit(info)
        self.exited.set()

    def _delete_session(self, timeout: float) -> None:
        """Handshake era: tell the server the session is over; a 405 (not supported) is fine."""
        with self._lock:
            session_id, version = self._session_id, self._negotiated
        if session_id is None or self.chosen_transport == "sse" or self._client is None:
            return
        headers = {"Mcp-Session-Id": session_id, **({"MCP-Protocol-Version": version} if version else {})}
        headers.update(self._user_headers)
        handle = _Abortable()
        self._track(handle)
        timer = threading.Timer(timeout, handle.abort)  # the read timeout is off: bound the wait ourselves
        timer.daemon = True
        timer.start()
        try:
            response = self._open(handle, "DELETE", self._base, headers, None, timeout=timeout)
            response.close()
            status = response.status_code
            if status != 405:
                self._emit("transport", {"note": f"ended session {session_id} with DELETE (HTTP {status})"})
        except _Failure as failure:
            self._emit("transport", {"note": f"could not end session {session_id}: {failure.error}"})
        finally:
            timer.cancel()
            self._untrack(handle)

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

    # -- sending ---------------------------------------------------------------------------------------------

    def request_meta(self, msg: Any) -> dict:
        """How `msg` will travel, for the recording, with the user's header values redacted."""
        era, version = self._era(msg)
        url = str(self._post_url if era == "sse" and self._post_url else (self._base or self.url))
        target = self._cancel_target(msg)
        if era == "modern" and target is not None:
            request_id = _params(msg)["requestId"]
            return {"method": None, "url": url, "headers": {},
                    "note": f"not POSTed: closing the response stream of request {request_id!r} is the cancellation"}
        headers = self._headers(msg, era, version)
        secret = {name.lower() for name in self._user_headers} | {"authorization"}
        return {"method": "POST", "url": url,
                "headers": {name: REDACTED if name.lower() in secret else value for name, value in headers.items()}}

    def send(self, data: bytes) -> None:
        """Queue one JSON line for POSTing; never waits for the server. BrokenPipeError once stopped."""
        if not self._started or self._ending or self.exited.is_set():
            raise BrokenPipeError("the HTTP connection is closed")
        body = bytes(data).rstrip(b"\r\n")
        msg = _parse_json(body)
        msg = None if msg is _NOT_JSON else msg
        era, version = self._era(msg)
        exchange = _Exchange(body, msg, era, version, release_on=self._release_on(msg))
        self._commit(exchange)
        if self._cancel(exchange):
            return
        self._queue.put(exchange)

    def _era(self, msg: Any) -> tuple[str, str | None]:
        """("sse" | "modern" | "handshake", the 2026-07-28+ version) for an outgoing message."""
        if self.chosen_transport == "sse":
            return "sse", None
        version = _modern_version(msg)
        if version:
            return "modern", version
        if _method(msg) == "initialize":
            return "handshake", None
        with self._lock:
            modern = self._modern
        return ("modern", modern) if modern else ("handshake", None)

    def _release_on(self, msg: Any) -> str:
        """How long the next message waits for this one: until it is "sent", its "headers" came, or its "answer".

        A request is only waited for until it is on the wire: a slow tool must not hold up the rest.
        """
        if _method(msg) == "initialize":
            return "answer"  # it brings the session id and the version the next messages must carry
        if self.chosen_transport is None:
            return "headers"  # auto: the first answer decides where everything goes
        return "sent" if isinstance(msg, dict) and _method(msg) and "id" in msg else "headers"

    def _commit(self, exchange: _Exchange) -> None:
        """Note what this message changes: the era, initialize ids, the requests now in flight."""
        with self._lock:
            if exchange.era == "modern" and exchange.version:
                self._modern = exchange.version
            elif exchange.method == "initialize":
                self._modern = None
                self._initialize_ids.update(exchange.waiting)
            self._exchanges.add(exchange)
            for key in exchange.waiting:
                self._in_flight[key] = exchange

    def _cancel_target(self, msg: Any) -> _Exchange | None:
        """For notifications/cancelled: the exchange of the request it cancels, while it can still be closed."""
        if _method(msg) != "notifications/cancelled" or self.chosen_transport == "sse":
            return None
        params = _params(msg)
        if "requestId" not in params:
            return None
        with self._lock:
            return self._in_flight.get(_id_key(params["requestId"]))

    def _cancel(self, exchange: _Exchange) -> bool:
        """Close the cancelled request's response stream; True when that replaces the POST (2026-07-28)."""
        target = self._cancel_target(exchange.msg)
        if target is None:
            return False
        request_id = _params(exchange.msg)["requestId"]
        self._emit("transport", {"note": f"cancelled request {request_id} by closing its response stream",
                                 "request_id": request_id})
        target.cancel_note = "cancelled: mcp-inspect closed its response stream"
        target.abort()
        if exchange.era != "modern":
            return False  # handshake era: the notification is the cancellation; it is POSTed as well
        self._forget(exchange)
        return True

    def _headers(self, msg: Any, era: str, version: str | None) -> dict[str, str]:
        """The headers a POST of `msg` carries now (session and version as currently known)."""
        headers = {"Content-Type": "application/json", "Accept": ACCEPT_POST}
        method = _method(msg)
        if era == "modern":
            headers["MCP-Protocol-Version"] = header_value(version or MODERN_ERA)
            if method is not None:
                headers["Mcp-Method"] = header_value(method)
            name = _params(msg).get(NAME_PARAMS.get(method or "", ""))
            if isinstance(name, str):
                headers["Mcp-Name"] = header_value(name)
        elif era == "handshake" and method != "initialize":
            with self._lock:
                session_id, negotiated = self._session_id, self._negotiated
            if session_id:
                headers["Mcp-Session-Id"] = session_id
            if negotiated:
                headers["MCP-Protocol-Version"] = negotiated
        return self._with_user_headers(headers)

    def _with_user_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """The user's headers win over ours (an inspector may want to send a wrong one on purpose)."""
        mine = {name.lower() for name in self._user_headers}
        merged = {name: value for name, value in headers.items() if name.lower() not in mine}
        merged.update(self._user_headers)
        return merged

    # -- the worker and one POST -----------------------------------------------------------------------------

    def _work(self) -> None:
        """The worker: POST the queued messages in order, each on its own thread, waiting only as order needs."""
        while True:
            exchange = self._queue.get()
            if exchange is None or self._stopping.is_set():
                return
            if exchange.aborted:  # cancelled while queued
                self._fail(exchange, exchange.cancel_note or "cancelled before it was sent")
                self._forget(exchange)
                continue
            threading.Thread(target=self._run_exchange, args=(exchange,), daemon=True,
                             name=f"mcp-http-post-{exchange.method or 'message'}").start()
            exchange.released.wait()

    def _run_exchange(self, exchange: _Exchange) -> None:
        """One message's POST from start to end; every way it can end leaves no request silently unanswered."""
        try:
            if self.chosen_transport == "sse":
                exchange.era = "sse"
                self._post_legacy(exchange)
            else:
                self._post_streamable(exchange)
        except _Failure as failure:
            if not exchange.aborted:  # an abort (cancel, stop) is no transport failure
                self._report(failure, self._post_target(exchange))
            self._settle(exchange, failure.error)
        except Exception as exc:  # noqa: BLE001 - a reader thread must never die without a word
            if not exchange.aborted:
                self._emit("transport-error", self._detail(f"internal error while sending: {exc!r}", self.url))
            self._settle(exchange, f"internal error while sending: {exc!r}")
        finally:
            exchange.released.set()
            if exchange.era != "sse":  # legacy answers come on the SSE stream, later
                self._settle(exchange, "no JSON-RPC response came for this request")
            self._forget(exchange)

    def _post_target(self, exchange: _Exchange) -> httpx.URL:
        return self._post_url if exchange.era == "sse" and self._post_url else self._base

    def _post_streamable(self, exchange: _Exchange) -> None:
        """Streamable HTTP: POST with the era's headers as they stand now (the session may be new)."""
        headers = self._headers(exchange.msg, exchange.era, exchange.version)
        exchange.session_sent = headers.get("Mcp-Session-Id")
        response = self._open(exchange, "POST", self._base, headers, exchange.body)
        with closing(response):
            if self._refused_first_post(exchange, response):
                return
            self._answered_post(exchange, response)

    def _refused_first_post(self, exchange: _Exchange, response: httpx.Response) -> bool:
        """auto: a first POST refused as the spec describes means a legacy HTTP+SSE server; switch to it."""
        if self.chosen_transport is not None or response.status_code not in (400, 404, 405):
            return False
        body = response.read()
        if _is_jsonrpc_error(_parse_json(body)):
            return False  # a JSON-RPC error: an MCP server that speaks Streamable HTTP said no
        why = (f"the server answered the first POST with HTTP {response.status_code} and no JSON-RPC error, "
               "and a GET opened an HTTP+SSE stream")
        try:
            self._connect_legacy(self._base)
        except _Failure as failure:
            raise _Failure(f"{self._base} speaks neither Streamable HTTP (the first POST got HTTP "
                           f"{response.status_code}) nor HTTP+SSE ({failure.error})",
                           status=response.status_code, content_type=response.headers.get("content-type"),
                           body=_preview(body)) from None
        self._choose("sse", why, endpoint=str(self._post_url))
        exchange.era = "sse"
        self._post_legacy(exchange)
        return True

    def _answered_post(self, exchange: _Exchange, response: httpx.Response) -> None:
        """Sort a Streamable HTTP answer: stream, JSON, 202, or a failure in words."""
        status, media_type = response.status_code, _media_type(response)
        if status == 401:
            raise self._auth_failure(response)
        if status == 404 and exchange.session_sent:
            self._session_expired(exchange, response)
            return
        ok = 200 <= status < 300
        if ok and exchange.era == "handshake":
            self._learn_session(response)  # before the next message goes: it must carry the session id
        if self.chosen_transport is not None and exchange.release_on != "answer":
            exchange.released.set()  # the answer is here: reading it must not hold up the next message
        if ok and media_type == EVENT_STREAM:
            self._mcp_answer(exchange, response, "an event stream")
            self._read_post_stream(exchange, response)
        elif ok and (status in (202, 204) or response.headers.get("content-length") == "0"):
            self._mcp_answer(exchange, response, "no body")
            _read_some(response)  # a body like "Accepted" means nothing
            self._accepted(exchange, status)
        elif _is_json_type(media_type):
            self._json_answer(exchange, response)
        else:
            raise self._not_mcp(response)
        self._settle(exchange, "the server's answer to this POST held no JSON-RPC response for it")
        if ok and exchange.method == "notifications/initialized" and exchange.era == "handshake":
            self._open_get_stream()

    def _mcp_answer(self, exchange: _Exchange, response: httpx.Response, what: str) -> None:
        """The POST got an answer an MCP server gives: auto has found its transport."""
        self._choose("streamable-http", f"the server answered the first POST with HTTP {response.status_code} "
                                        f"and {what}")
        if exchange.release_on != "answer":
            exchange.released.set()

    def _accepted(self, exchange: _Exchange, status: int) -> None:
        """A body-less answer: right for notifications and responses, a dead end for a request."""
        if exchange.waiting:
            self._fail(exchange, f"the server answered HTTP {status} with no body: no JSON-RPC response will "
                                 "come for this request")

    def _json_answer(self, exchange: _Exchange, response: httpx.Response) -> None:
        """An application/json answer: one JSON-RPC message (or batch), delivered whatever the HTTP status."""
        body = response.read()
        if not body.strip() and 200 <= response.status_code < 300:
            self._mcp_answer(exchange, response, "no body")
            self._accepted(exchange, response.status_code)
            return
        value = _parse_json(body)
        if value is _NOT_JSON or not _looks_jsonrpc(value):
            raise self._not_mcp(response, body)
        self._mcp_answer(exchange, response, "JSON-RPC")
        self._deliver(body.strip(), self._meta(response, "post"), value)
        if exchange.waiting and not 200 <= response.status_code < 300:
            error = next((item.get("error") for item in _response_items(value)), None)
            what = f": {_one_line(json.dumps(error))[:200]}" if error is not None else ""
            self._fail(exchange, f"the server answered HTTP {response.status_code} with a JSON-RPC error that "
                                 f"names no request of ours{what}")

    def _read_post_stream(self, exchange: _Exchange, response: httpx.Response) -> None:
        """A request's SSE stream: deliver each message as it comes; resume it if it ends early (handshake era)."""
        state = _StreamState()
        broke = self._pump(exchange, response, state, "post")
        if exchange.waiting and not exchange.aborted and exchange.era == "handshake" \
                and state.parser.last_event_id is not None:
            broke = self._resume(exchange, state, broke)
        self._settle(exchange, f"its response stream broke: {broke}" if broke else
                     "the server ended the response stream without answering")

    def _resume(self, exchange: _Exchange, state: _StreamState, broke: str | None) -> str | None:
        """GET with Last-Event-ID to pick up a request's stream that the server closed (2025-11-25 polling)."""
        for _ in range(MAX_RESUMES):
            if not exchange.waiting or exchange.aborted or state.parser.last_event_id is None:
                break
            last_id = state.parser.last_event_id
            delay = self._delay(state.parser.retry_ms)
            self._emit("transport", {"note": f"the response stream of request {self._ids_text(exchange)} ended "
                                             f"before its response; resuming with Last-Event-ID {last_id} "
                                             f"in {delay:g} s"})
            if self._stopping.wait(delay) or exchange.aborted:
                return broke
            headers = self._get_headers(last_id)
            try:
                response = self._open(exchange, "GET", self._base, headers, None)
            except _Failure as failure:
                return f"resuming it failed: {failure.error}"
            with closing(response):
                if not (200 <= response.status_code < 300 and _media_type(response) == EVENT_STREAM):
                    return f"resuming it with GET got HTTP {response.status_code}"
                broke = self._pump(exchange, response, state, "get-stream", resumed=True)
        return broke

    def _post_legacy(self, exchange: _Exchange) -> None:
        """HTTP+SSE: POST to the endpoint; the answer comes on the SSE stream, the POST just says 202."""
        headers = self._with_user_headers({"Content-Type": "application/json", "Accept": ACCEPT_POST})
        response = self._open(exchange, "POST", self._post_url, headers, exchange.body)
        with closing(response):
            exchange.released.set()
            status = response.status_code
            if status == 401:
                raise self._auth_failure(response)
            if not 200 <= status < 300:
                raise self._not_mcp(response)
            body = _read_some(response)
            value = _parse_json(body)
            if _looks_jsonrpc(value):  # not the usual, but a server may answer on the POST itself
                self._deliver(body.strip(), self._meta(response, "post"), value)

    # -- answers that are not messages -----------------------------------------------------------------------

    def _auth_failure(self, response: httpx.Response) -> _Failure:
        """A 401 in words; the challenge (WWW-Authenticate) is kept for the user."""
        challenge = response.headers.get("www-authenticate")
        return _Failure(f"HTTP 401 Unauthorized: {AUTH_HINT}", kind="auth", www_authenticate=challenge,
                        status=401, content_type=response.headers.get("content-type"),
                        body=_preview(_read_some(response)))

    def _not_mcp(self, response: httpx.Response, body: bytes | None = None) -> _Failure:
        """A failure in words for an answer an MCP server would not give (HTML page, 500 text, wrong type)."""
        body = _read_some(response) if body is None else body
        status, media_type = response.status_code, _media_type(response) or "no content type"
        if 200 <= status < 300:
            error = (f"not an MCP answer: HTTP {status} with {media_type} (expected application/json JSON-RPC "
                     "or text/event-stream)")
        else:
            error = f"HTTP {status} {response.reason_phrase}".rstrip() + f" ({media_type})"
            if status == 403:
                error += "; the server may reject the Host or Origin header"
        return _Failure(error, kind="http", status=status, content_type=response.headers.get("content-type"),
                        body=_preview(body))

    def _session_expired(self, exchange: _Exchange, response: httpx.Response) -> None:
        """A 404 for the session we sent: forget it, say so, and fail the request (the session re-initializes)."""
        sent = exchange.session_sent
        with self._lock:
            if self._session_id == sent:
                self._session_id, self._negotiated = None, None
            get_stream = self._get_stream
        if get_stream is not None:
            get_stream.abort()  # that stream belonged to the dead session
        body = _read_some(response)
        value = _parse_json(body)
        if _looks_jsonrpc(value):
            self._deliver(body.strip(), self._meta(response, "post"), value)
        self._emit("transport-error", self._detail(
            f"the server no longer knows session {sent} (HTTP 404): it expired or was closed; initialize again",
            self._base, response, body, kind="session-expired", session_id=sent))
        if self._on_session_expired is not None and not self._quiet:
            with self._callbacks:
                self._on_session_expired()
        self._fail(exchange, f"session {sent} expired (HTTP 404)")

    # -- opening requests: redirects by hand ------------------------------------------------------------------

    def _open(self, handle: _Abortable, method: str, url: httpx.URL, headers: dict[str, str], body: bytes | None,
              timeout: float | None = None) -> httpx.Response:
        """Send and return the streaming response, following only safe same-origin redirects. Raises _Failure."""
        for _ in range(MAX_REDIRECTS + 1):
            if handle.aborted:
                raise _Failure("cancelled before it was sent", url=str(url))
            response = self._send_once(handle, method, url, headers, body, timeout)
            if response.status_code not in REDIRECT_CODES:
                return response
            response.close()
            url, method, body = self._follow(response, url, method, body)
        raise _Failure(f"more than {MAX_REDIRECTS} redirects; stopped at {url}", kind="redirect", url=str(url))

    def _send_once(self, handle: _Abortable, method: str, url: httpx.URL, headers: dict[str, str],
                   body: bytes | None, timeout: float | None) -> httpx.Response:
        """One request without following redirects; any failure becomes a _Failure in words."""
        extra = {} if timeout is None else {"timeout": httpx.Timeout(timeout)}
        try:
            request = self._client.build_request(method, url, headers=headers, content=body,
                                                 extensions={"trace": handle.trace}, **extra)
            return self._client.send(request, stream=True)
        except Exception as exc:  # noqa: BLE001 - httpx errors, or the socket shut under us by an abort
            if handle.aborted:
                raise _Failure("the connection was closed by mcp-inspect", url=str(url)) from None
            error = _describe_exception(exc, url, self._connect_timeout)
            raise _Failure(error, kind="connect", url=str(url)) from None

    def _follow(self, response: httpx.Response, url: httpx.URL, method: str,
                body: bytes | None) -> tuple[httpx.URL, str, bytes | None]:
        """Where a redirect may lead: (url, method, body), or a _Failure saying why it was not followed."""
        status, location = response.status_code, response.headers.get("location", "")
        try:
            target = url.join(location) if location else None
        except (httpx.InvalidURL, ValueError):
            target = None
        # A non-http(s) target is shown as the server wrote it (httpx would normalise file:/// to file:/).
        web = target is not None and target.scheme in ("http", "https")
        shown = str(target) if web else (location or "(no Location header)")
        refusal = "the Location header is missing or unreadable" if target is None else self._refusal(target)
        detail = {"kind": "redirect", "location": shown, "url": str(url), "status": status}
        if refusal:
            raise _Failure(f"refused a redirect to {shown}: {refusal}", **detail)
        if method != "GET" and status in (301, 302, 303):
            raise _Failure(f"did not follow a {status} redirect to {shown}: it would turn the {method} into a "
                           "GET and drop the message (only 307/308 keep it); use that URL instead", **detail)
        self._emit("transport", {"note": f"followed a {status} redirect to {shown}", "location": shown})
        return target, method, body

    def _refusal(self, target: httpx.URL) -> str | None:
        """Why a redirect target is unsafe, or None (same origin, http(s), not our own port)."""
        if target.scheme not in ("http", "https"):
            return f"{target.scheme or 'no'} scheme: only http(s) is followed"
        if not target.host:
            return "it has no host"
        if _is_loopback(target.host) and _origin(target)[2] in self._refuse_ports:
            return "that is mcp-inspect's own port"
        if _origin(target) != _origin(self._base):
            why = f"it leads to another origin ({_origin_text(target)})"
            if _is_link_local(target.host):
                why += ", a link-local address where cloud metadata services live"
            return why + f"; only redirects within {_origin_text(self._base)} are followed"
        return None

    # -- streams ---------------------------------------------------------------------------------------------

    def _pump(self, handle: _Abortable, response: httpx.Response, state: _StreamState, via: str,
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
            return _describe_exception(exc, response.request.url, self._connect_timeout)
        return None

    def _sse_event(self, event: SseEvent, response: httpx.Response, state: _StreamState, via: str,
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

    def _get_headers(self, last_event_id: str | None = None) -> dict[str, str]:
        """Headers for a GET stream (standalone or a resumed request stream)."""
        headers = {"Accept": EVENT_STREAM}
        with self._lock:
            if self._session_id:
                headers["Mcp-Session-Id"] = self._session_id
            if self._negotiated:
                headers["MCP-Protocol-Version"] = self._negotiated
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return self._with_user_headers(headers)

    def _open_get_stream(self) -> None:
        """Handshake era: the standalone GET stream for server-initiated messages, once per session."""
        with self._lock:
            if self._quiet or (self._get_stream is not None and not self._get_stream.aborted):
                return  # one per session: a new session's initialized finds the old stream aborted
            handle = self._get_stream = _Abortable()
            self._streams.add(handle)
        threading.Thread(target=self._run_get_stream, args=(handle,), daemon=True, name="mcp-http-get-stream").start()

    def _run_get_stream(self, handle: _Abortable) -> None:
        """The GET stream's thread: reconnect after a `retry:`, but give up after two that bring nothing."""
        state, last_id, failures, attempt = _StreamState(), None, 0, 0
        try:
            while not handle.aborted:
                outcome = self._get_stream_once(handle, state, last_id, first=attempt == 0)
                attempt += 1
                if outcome is None or handle.aborted:
                    return
                last_id = state.parser.last_event_id
                failures = 0 if state.delivered else failures + 1  # reconnects in a row that brought nothing
                if state.parser.retry_ms is None or failures >= MAX_RESUMES:
                    self._emit("transport", {"note": f"the GET stream ended ({outcome}); not reconnecting"})
                    return
                delay = self._delay(state.parser.retry_ms)
                self._emit("transport", {"note": f"the GET stream ended ({outcome}); reconnecting in {delay:g} s"
                                                 + (f" with Last-Event-ID {last_id}" if last_id else "")})
                if self._stopping.wait(delay):
                    return
                state = _StreamState(parser=_carry_over(state.parser))
        finally:
            self._untrack(handle)
            with self._lock:
                if self._get_stream is handle:
                    self._get_stream = None

    def _get_stream_once(self, handle: _Abortable, state: _StreamState, last_id: str | None,
                         first: bool) -> str | None:
        """One GET; returns None when there is nothing to reconnect to, else how the stream ended."""
        try:
            response = self._open(handle, "GET", self._base, self._get_headers(last_id), None)
        except _Failure as failure:
            if not handle.aborted:
                self._report(failure, self._base, get_stream=True)
            return None
        with closing(response):
            status = response.status_code
            if status == 405:
                self._note_once("get-405", {"note": "the server offers no GET stream (HTTP 405): it can send "
                                                    "messages only on request streams"})
                return None
            if not (200 <= status < 300 and _media_type(response) == EVENT_STREAM):
                if not handle.aborted:
                    self._report(self._not_mcp(response), self._base, get_stream=True)
                return None
            if first:
                self._emit("transport", {"note": "opened the GET stream for server-initiated messages",
                                         "status": status})
            broke = self._pump(handle, response, state, "get-stream")
        return broke or "closed by the server"

    @staticmethod
    def _delay(retry_ms: int | None) -> float:
        """The reconnect delay the server asked for, kept between 0.25 s (no hot loop) and 10 s."""
        return min(max((retry_ms if retry_ms is not None else 1000) / 1000.0, 0.25), 10.0)

    # -- legacy HTTP+SSE ---------------------------------------------------------------------------------------

    def _connect_legacy(self, sse_url: httpx.URL) -> None:
        """GET the SSE stream and wait for its endpoint event; raises _Failure in words."""
        handle = _Abortable()
        self._track(handle)
        ready, outcome = threading.Event(), {}
        threading.Thread(target=self._run_legacy_stream, args=(handle, sse_url, ready, outcome), daemon=True,
                         name="mcp-http-sse-stream").start()
        wait = self._connect_timeout + 2.0
        if not ready.wait(wait):
            handle.abort()
            raise _Failure(f"the SSE stream at {sse_url} sent no endpoint event within {wait:g} s", url=str(sse_url))
        if "failure" in outcome:
            handle.abort()
            raise outcome["failure"]
        self._emit("transport", {"note": f"HTTP+SSE endpoint: {self._post_url}", "endpoint": str(self._post_url)})

    def _run_legacy_stream(self, handle: _Abortable, sse_url: httpx.URL, ready: threading.Event,
                           outcome: dict) -> None:
        """The legacy stream's thread: report the endpoint (or why there is none), then the end of the stream."""
        try:
            broke = self._legacy_stream(handle, sse_url, ready, outcome)
        except _Failure as failure:
            outcome["failure"] = failure
            ready.set()
            return
        finally:
            self._untrack(handle)
        if not ready.is_set():
            outcome["failure"] = _Failure(f"the SSE stream at {sse_url} ended before its endpoint event",
                                          url=str(sse_url))
            ready.set()
            return
        if "failure" not in outcome and not handle.aborted and not self._quiet:
            reason = "the server closed the SSE stream" if broke is None else f"the SSE stream broke: {broke}"
            self._fail_everything(reason)
            self._end(ExitInfo(code=None, signal=None, reason=reason))

    def _legacy_stream(self, handle: _Abortable, sse_url: httpx.URL, ready: threading.Event,
                       outcome: dict) -> str | None:
        """GET the HTTP+SSE stream and read it to its end; returns None or why it broke."""
        response = self._open(handle, "GET", sse_url, self._with_user_headers({"Accept": EVENT_STREAM}), None)
        with closing(response):
            status = response.status_code
            if status == 401:
                raise self._auth_failure(response)
            if not (200 <= status < 300 and _media_type(response) == EVENT_STREAM):
                failure = self._not_mcp(response)
                raise _Failure(f"{sse_url} is not an HTTP+SSE endpoint: {failure.error}", **failure.detail)

            def on_endpoint(event: SseEvent) -> None:
                if ready.is_set():
                    self._note_once("endpoint-again", {"note": "ignored a second endpoint event"})
                    return
                try:
                    self._post_url = self._endpoint_url(response.request.url, event.data)
                except _Failure as failure:
                    outcome["failure"] = failure
                    handle.abort()
                ready.set()

            return self._pump(handle, response, _StreamState(), "sse-stream", on_endpoint=on_endpoint)

    def _endpoint_url(self, sse_url: httpx.URL, data: str) -> httpx.URL:
        """The endpoint event's URL resolved against the stream's; it must stay on the same origin."""
        try:
            target = sse_url.join(data.strip())
        except (httpx.InvalidURL, ValueError):
            raise _Failure(f"the SSE endpoint event holds no usable URL: {data[:200]!r}", url=str(sse_url)) from None
        refusal = self._refusal(target)
        if refusal:
            raise _Failure(f"refused the SSE endpoint {target}: {refusal}", kind="redirect", url=str(sse_url))
        return target

    # -- incoming messages -----------------------------------------------------------------------------------

    def _meta(self, response: httpx.Response, via: str, event_id: str | None = None) -> dict:
        """The http meta that goes with an incoming message."""
        meta = {"status": response.status_code,
                "headers": {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers},
                "via": via}
        if event_id is not None:
            meta["event_id"] = event_id
        return meta

    def _deliver(self, raw: bytes, meta: dict, value: Any = _NOT_JSON) -> None:
        """Hand one message to the session, after noting the requests it answers."""
        if value is _NOT_JSON:
            value = _parse_json(raw)
        for item in _response_items(value):
            self._answered(item)
        if self._quiet:
            return
        with self._callbacks:
            self._on_message(raw, meta)

    def _answered(self, response: dict) -> None:
        """A response arrived: its request waits no more; an initialize answer gives the negotiated version."""
        key = _id_key(response.get("id"))
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

    def _learn_session(self, response: httpx.Response) -> None:
        """Keep the Mcp-Session-Id a response carries; a new one retires the old session's GET stream."""
        session_id = response.headers.get("mcp-session-id")
        if not session_id:
            return
        with self._lock:
            old, self._session_id = self._session_id, session_id
            get_stream = self._get_stream if old and old != session_id else None
        if get_stream is not None:
            get_stream.abort()  # a new session: the old one's GET stream is of no use

    # -- bookkeeping and callbacks ---------------------------------------------------------------------------

    def _choose(self, transport: str, why: str, **extra: Any) -> None:
        """auto: the transport is known; said once."""
        with self._lock:
            if self.chosen_transport is not None:
                return
            self.chosen_transport = transport
        self._emit("transport", {"chosen": transport, "why": why, **extra})

    def _settle(self, exchange: _Exchange, reason: str) -> None:
        """Fail the exchange's unanswered requests: with the cancel note if we closed it, else with `reason`."""
        if exchange.waiting:
            self._fail(exchange, exchange.cancel_note if exchange.aborted and exchange.cancel_note else reason)

    def _fail(self, exchange: _Exchange, reason: str) -> None:
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

    def _forget(self, exchange: _Exchange) -> None:
        """The exchange's thread is done (its requests may still wait for an answer on the SSE stream)."""
        with self._lock:
            self._exchanges.discard(exchange)

    def _track(self, handle: _Abortable) -> None:
        with self._lock:
            self._streams.add(handle)

    def _untrack(self, handle: _Abortable) -> None:
        with self._lock:
            self._streams.discard(handle)

    def _ids_text(self, exchange: _Exchange) -> str:
        return ", ".join(str(value) for value in exchange.waiting.values()) or "?"

    def _detail(self, error: str, url: Any, response: httpx.Response | None = None, body: bytes | None = None,
                **extra: Any) -> dict:
        detail = {"error": error, "url": str(url),
                  "status": response.status_code if response is not None else None,
                  "content_type": response.headers.get("content-type") if response is not None else None,
                  "body": _preview(body)}
        detail.update(extra)
        return detail

    def _report(self, failure: _Failure, url: Any, **extra: Any) -> None:
        """A _Failure as a transport-error event with the standard keys."""
        detail = {"error": failure.error, "url": str(url), "status": None, "content_type": None, "body": None}
        detail.update(failure.detail)
        detail.update(extra)
        self._emit("transport-error", detail)

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


def _carry_over(parser: SseParser) -> SseParser:
    """A fresh parser for the reconnected stream that remembers the id and the retry delay of the last."""
    fresh = SseParser()
    fresh.last_event_id, fresh.retry_ms = parser.last_event_id, parser.retry_ms
    return fresh
