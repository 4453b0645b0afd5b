"""`HttpConnection`: one MCP server over HTTP with the `Transport` surface, and the order its messages go in.

One worker POSTs the queued messages in order; every POST then runs on a thread of its own, and the worker
waits for it only as long as order needs: a request until its body is on the wire, a notification or response
until its response headers came, and `initialize` until its answer (it brings the session id and the negotiated
version that every later message carries). Reading a response, a long SSE stream included, never holds up the
next POST.
"""

from __future__ import annotations

import threading
from contextlib import closing
from typing import Any

import httpx

from inspector.protocol import eras
from inspector.transport import ExitInfo, SpawnError
from inspector.protocol.json import REDACTED
from inspector.transport.http.core import ACCEPT_POST, Exchange
from inspector.transport.http.legacy_sse import LegacySse
from inspector.transport.http.messages import (
    NAME_PARAMS, NOT_JSON, header_value, id_key, is_jsonrpc_error, method_of, modern_version, params_of,
    parse_json, preview,
)
from inspector.transport.http.net import Abortable, Failure, SameOriginClient, check_url
from inspector.transport.http.streamable import StreamableHttp



class ConnectError(SpawnError):
    """The HTTP server could not be reached, or did not answer as an MCP server (one line, in words)."""


class HttpConnection(StreamableHttp, LegacySse):
    """One MCP server reached over HTTP; drive it like a `StdioProcess` (see `inspector.transport.Transport`)."""

    pid = None

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Check the URL; for legacy SSE also open the stream and wait for its endpoint. Raises ConnectError."""
        try:
            self._base = check_url(self.url, self._refuse_ports)
        except Failure as failure:
            raise ConnectError(failure.error) from None
        self._net = SameOriginClient(self._base, refuse_ports=self._refuse_ports,
                                     connect_timeout=self._connect_timeout,
                                     on_note=lambda detail: self._emit("transport", detail))
        if self._mode == "sse":
            try:
                self._connect_legacy(self._base)
            except Failure as failure:
                self._net.close()
                raise ConnectError(failure.error) from None
        self._started = True
        threading.Thread(target=self._work, name="mcp-http-worker", daemon=True).start()

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

    def _delete_session(self, timeout: float) -> None:
        """Handshake era: tell the server the session is over; a 405 (not supported) is fine."""
        with self._lock:
            session_id, version = self._session_id, self._negotiated
        if session_id is None or self.chosen_transport == "sse" or self._net is None:
            return
        headers = {"Mcp-Session-Id": session_id, **({"MCP-Protocol-Version": version} if version else {})}
        headers.update(self._user_headers)
        handle = Abortable()
        self._track(handle)
        timer = threading.Timer(timeout, handle.abort)  # the read timeout is off: bound the wait ourselves
        timer.daemon = True
        timer.start()
        try:
            response = self._net.open(handle, "DELETE", self._base, headers, None, timeout=timeout)
            response.close()
            status = response.status_code
            if status != 405:
                self._emit("transport", {"note": f"ended session {session_id} with DELETE (HTTP {status})"})
        except Failure as failure:
            self._emit("transport", {"note": f"could not end session {session_id}: {failure.error}"})
        finally:
            timer.cancel()
            self._untrack(handle)

    # -- sending ---------------------------------------------------------------------------------------------

    def request_meta(self, msg: Any) -> dict:
        """How `msg` will travel, for the recording, with the user's header values redacted."""
        era, version = self._era(msg)
        url = str(self._post_url if era == "sse" and self._post_url else (self._base or self.url))
        target = self._cancel_target(msg)
        if era == "modern" and target is not None:
            request_id = params_of(msg)["requestId"]
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
        msg = parse_json(body)
        msg = None if msg is NOT_JSON else msg
        era, version = self._era(msg)
        exchange = Exchange(body, msg, era, version, release_on=self._release_on(msg))
        self._commit(exchange)
        if self._cancel(exchange):
            return
        self._queue.put(exchange)

    def _era(self, msg: Any) -> tuple[str, str | None]:
        """("sse" | "modern" | "handshake", the 2026-07-28+ version) for an outgoing message."""
        if self.chosen_transport == "sse":
            return "sse", None
        version = modern_version(msg)
        if version:
            return "modern", version
        if method_of(msg) == "initialize":
            return "handshake", None
        with self._lock:
            modern = self._modern
        return ("modern", modern) if modern else ("handshake", None)

    def _release_on(self, msg: Any) -> str:
        """How long the next message waits for this one: until it is "sent", its "headers" came, or its "answer".

        A request is only waited for until it is on the wire: a slow tool must not hold up the rest.
        """
        if method_of(msg) == "initialize":
            return "answer"  # it brings the session id and the version the next messages must carry
        if self.chosen_transport is None:
            return "headers"  # auto: the first answer decides where everything goes
        return "sent" if isinstance(msg, dict) and method_of(msg) and "id" in msg else "headers"

    def _commit(self, exchange: Exchange) -> None:
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

    def _cancel_target(self, msg: Any) -> Exchange | None:
        """For notifications/cancelled: the exchange of the request it cancels, while it can still be closed."""
        if method_of(msg) != "notifications/cancelled" or self.chosen_transport == "sse":
            return None
        params = params_of(msg)
        if "requestId" not in params:
            return None
        with self._lock:
            return self._in_flight.get(id_key(params["requestId"]))

    def _cancel(self, exchange: Exchange) -> bool:
        """Close the cancelled request's response stream; True when that replaces the POST (2026-07-28)."""
        target = self._cancel_target(exchange.msg)
        if target is None:
            return False
        request_id = params_of(exchange.msg)["requestId"]
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
        method = method_of(msg)
        if era == "modern":
            headers["MCP-Protocol-Version"] = header_value(version or eras.MODERN_VERSION)
            if method is not None:
                headers["Mcp-Method"] = header_value(method)
            name = params_of(msg).get(NAME_PARAMS.get(method or "", ""))
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

    def _run_exchange(self, exchange: Exchange) -> None:
        """One message's POST from start to end; every way it can end leaves no request silently unanswered."""
        try:
            if self.chosen_transport == "sse":
                exchange.era = "sse"
                self._post_legacy(exchange)
            else:
                self._post_streamable(exchange)
        except Failure as failure:
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

    def _post_target(self, exchange: Exchange) -> httpx.URL:
        return self._post_url if exchange.era == "sse" and self._post_url else self._base

    def _post_streamable(self, exchange: Exchange) -> None:
        """Streamable HTTP: POST with the era's headers as they stand now (the session may be new)."""
        headers = self._headers(exchange.msg, exchange.era, exchange.version)
        exchange.session_sent = headers.get("Mcp-Session-Id")
        response = self._net.open(exchange, "POST", self._base, headers, exchange.body)
        with closing(response):
            if self._refused_first_post(exchange, response):
                return
            self._answered_post(exchange, response)

    def _refused_first_post(self, exchange: Exchange, response: httpx.Response) -> bool:
        """auto: a first POST refused as the spec describes means a legacy HTTP+SSE server; switch to it."""
        if self.chosen_transport is not None or response.status_code not in (400, 404, 405):
            return False
        body = response.read()
        if is_jsonrpc_error(parse_json(body)):
            return False  # a JSON-RPC error: an MCP server that speaks Streamable HTTP said no
        why = (f"the server answered the first POST with HTTP {response.status_code} and no JSON-RPC error, "
               "and a GET opened an HTTP+SSE stream")
        try:
            self._connect_legacy(self._base)
        except Failure as failure:
            raise Failure(f"{self._base} speaks neither Streamable HTTP (the first POST got HTTP "
                          f"{response.status_code}) nor HTTP+SSE ({failure.error})",
                          status=response.status_code, content_type=response.headers.get("content-type"),
                          body=preview(body)) from None
        self._choose("sse", why, endpoint=str(self._post_url))
        exchange.era = "sse"
        self._post_legacy(exchange)
        return True
