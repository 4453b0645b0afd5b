"""The network side of the HTTP transport: the safety rules of security.md row 29, in one place.

Redirects are handled here, never by httpx: only same-origin ones are followed, so nothing (the user's headers
least of all) is sent to another origin; mcp-inspect's own port is never a target; the first address a host name
resolves to is pinned for the life of the connection, so a DNS rebinding cannot move a later request elsewhere;
proxies from the environment are not used. Every exchange can be aborted from another thread by shutting its
socket down.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

from inspector.transport.http.messages import one_line

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
ERROR_BODY_BYTES = 64 * 1024
WRITE_TIMEOUT = 30.0


class Failure(Exception):
    """A transport failure, already put in words; `detail` adds keys to the transport-error event."""

    def __init__(self, error: str, **detail: Any) -> None:
        super().__init__(error)
        self.error = error
        self.detail = detail


def read_some(response: httpx.Response, limit: int = ERROR_BODY_BYTES) -> bytes:
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
    """The origin as scheme://host:port, for messages."""
    scheme, host, port = _origin(url)
    return f"{scheme}://{host}:{port}"


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names literally, in every form the resolver takes: 127.1, 2130706433 and 0x7f000001 are
    127.0.0.1 to getaddrinfo (inet_aton's forms), and ::ffff:127.0.0.1 is 127.0.0.1 too (security findings, 12)."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(host))
        except (OSError, ValueError):
            return None
    return getattr(ip, "ipv4_mapped", None) or ip


def _is_loopback(host: str) -> bool:
    """localhost, 127/8, ::1, or 0.0.0.0 (which reaches this machine too)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    ip = _ip(host)
    return ip is not None and (ip.is_loopback or ip.is_unspecified)


def _is_own_port(url: httpx.URL, refuse_ports: frozenset[int]) -> bool:
    """Does the URL lead to mcp-inspect's own port on this machine?"""
    return _is_loopback(url.host) and _origin(url)[2] in refuse_ports


def _is_link_local(host: str) -> bool:
    ip = _ip(host)
    return ip is not None and ip.is_link_local


def describe_exception(exc: BaseException, url: httpx.URL, connect_timeout: float) -> str:
    """One line in words for an httpx failure: refused, TLS, timeout, name resolution, a broken connection."""
    chain, seen = [], exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    where = f"{url.host}:{_origin(url)[2]}"
    tls = next((item for item in chain if isinstance(item, ssl.SSLError)), None)
    if tls is not None:
        why = getattr(tls, "verify_message", None) or getattr(tls, "reason", None) or str(tls)
        return one_line(f"TLS error with {where}: {why}")
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect to {where} within {connect_timeout:g} s (connect timeout)"
    if any(isinstance(item, ConnectionRefusedError) for item in chain):
        return f"connection refused: nothing is listening at {where}"
    if any(isinstance(item, socket.gaierror) for item in chain):
        return f"cannot resolve the host name {url.host}"
    if isinstance(exc, httpx.ConnectError):
        return one_line(f"cannot connect to {where}: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return one_line(f"the server at {where} broke the HTTP exchange: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return one_line(f"timed out talking to {where}: {type(exc).__name__}")
    return one_line(f"HTTP exchange with {where} failed: {type(exc).__name__}: {exc}")


def _shutdown(sock: socket.socket | None) -> None:
    """Wake a thread blocked reading this socket (close() alone would not) by shutting it down."""
    if sock is None:
        return
    try:
        # The plain socket method: SSLSocket.shutdown would also drop its SSL object under the reading thread.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


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


class Abortable:
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


def check_url(url: str, refuse_ports: frozenset[int]) -> httpx.URL:
    """The URL parsed, or a Failure: http(s) with a host, and not mcp-inspect's own port."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise Failure(f"not a usable URL: {url} ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise Failure(f"not an http(s) URL with a host: {url}")
    if _is_own_port(parsed, refuse_ports):
        raise Failure(f"refusing to connect to {url}: that is mcp-inspect's own port")
    return parsed


class SameOriginClient:
    """One connection's httpx client: requests that follow only safe same-origin redirects, by hand."""

    def __init__(self, base: httpx.URL, *, refuse_ports: frozenset[int], connect_timeout: float,
                 on_note: Callable[[dict], None]) -> None:
        self.base = base
        """The server's URL: the one origin requests may go to."""
        self._refuse_ports = refuse_ports
        self._connect_timeout = connect_timeout
        self._on_note = on_note
        # No read timeout (streams may be quiet for long; cancel and stop abort instead), no redirects, no proxies.
        timeout = httpx.Timeout(connect=connect_timeout, read=None, write=WRITE_TIMEOUT, pool=connect_timeout)
        self._client = httpx.Client(transport=_PinnedTransport(httpx.create_ssl_context()), timeout=timeout,
                                    follow_redirects=False, trust_env=False)

    def close(self) -> None:
        """Close the client and its pool."""
        self._client.close()

    def open(self, handle: Abortable, method: str, url: httpx.URL, headers: dict[str, str], body: bytes | None,
             timeout: float | None = None) -> httpx.Response:
        """Send and return the streaming response, following only safe same-origin redirects. Raises Failure."""
        for _ in range(MAX_REDIRECTS + 1):
            if handle.aborted:
                raise Failure("cancelled before it was sent", url=str(url))
            response = self._send_once(handle, method, url, headers, body, timeout)
            if response.status_code not in REDIRECT_CODES:
                return response
            response.close()
            url, method, body = self._follow(response, url, method, body)
        raise Failure(f"more than {MAX_REDIRECTS} redirects; stopped at {url}", kind="redirect", url=str(url))

    def _send_once(self, handle: Abortable, method: str, url: httpx.URL, headers: dict[str, str],
                   body: bytes | None, timeout: float | None) -> httpx.Response:
        """One request without following redirects; any failure becomes a Failure in words."""
        extra = {} if timeout is None else {"timeout": httpx.Timeout(timeout)}
        try:
            request = self._client.build_request(method, url, headers=headers, content=body,
                                                 extensions={"trace": handle.trace}, **extra)
            return self._client.send(request, stream=True)
        except Exception as exc:  # noqa: BLE001 - httpx errors, or the socket shut under us by an abort
            if handle.aborted:
                raise Failure("the connection was closed by mcp-inspect", url=str(url)) from None
            error = describe_exception(exc, url, self._connect_timeout)
            raise Failure(error, kind="connect", url=str(url)) from None

    def _follow(self, response: httpx.Response, url: httpx.URL, method: str,
                body: bytes | None) -> tuple[httpx.URL, str, bytes | None]:
        """Where a redirect may lead: (url, method, body), or a Failure saying why it was not followed."""
        status, location = response.status_code, response.headers.get("location", "")
        try:
            target = url.join(location) if location else None
        except (httpx.InvalidURL, ValueError):
            target = None
        # A non-http(s) target is shown as the server wrote it (httpx would normalise file:/// to file:/).
        web = target is not None and target.scheme in ("http", "https")
        shown = str(target) if web else (location or "(no Location header)")
        refusal = "the Location header is missing or unreadable" if target is None else self.refusal(target)
        detail = {"kind": "redirect", "location": shown, "url": str(url), "status": status}
        if refusal:
            raise Failure(f"refused a redirect to {shown}: {refusal}", **detail)
        if method != "GET" and status in (301, 302, 303):
            raise Failure(f"did not follow a {status} redirect to {shown}: it would turn the {method} into a "
                          "GET and drop the message (only 307/308 keep it); use that URL instead", **detail)
        self._on_note({"note": f"followed a {status} redirect to {shown}", "location": shown})
        return target, method, body

    def refusal(self, target: httpx.URL) -> str | None:
        """Why a redirect target is unsafe, or None (same origin, http(s), not our own port)."""
        if target.scheme not in ("http", "https"):
            return f"{target.scheme or 'no'} scheme: only http(s) is followed"
        if not target.host:
            return "it has no host"
        if _is_own_port(target, self._refuse_ports):
            return "that is mcp-inspect's own port"
        if _origin(target) != _origin(self.base):
            why = f"it leads to another origin ({_origin_text(target)})"
            if _is_link_local(target.host):
                why += ", a link-local address where cloud metadata services live"
            return why + f"; only redirects within {_origin_text(self.base)} are followed"
        return None
