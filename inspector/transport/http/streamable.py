"""Streamable HTTP (both eras): sorting a POST's answer, a request's SSE stream and its resumption, and the
standalone GET stream of the handshake era.
"""

from __future__ import annotations

import json
import threading
from contextlib import closing

import httpx

from inspector.transport.http.core import ConnectionCore, Exchange, StreamState, carry_over
from inspector.transport.http.messages import (
    EVENT_STREAM, NOT_JSON, is_json_type, looks_jsonrpc, media_type_of, names_unknown_session, one_line, parse_json,
    response_items,
)
from inspector.transport.http.net import Abortable, Failure, read_some

MAX_RESUMES = 2


class StreamableHttp(ConnectionCore):
    """The Streamable HTTP side of `HttpConnection`."""

    # -- answers to a POST -----------------------------------------------------------------------------------

    def _answered_post(self, exchange: Exchange, response: httpx.Response) -> None:
        """Sort a Streamable HTTP answer: stream, JSON, 202, or a failure in words."""
        status, media_type = response.status_code, media_type_of(response)
        self._reachable(response)
        if status == 401:
            raise self._auth_failure(response)
        if status == 404 and exchange.session_sent:
            self._session_expired(exchange, response, read_some(response))
            return
        if status == 400 and exchange.session_sent and is_json_type(media_type) \
                and names_unknown_session(parse_json(response.read())):  # read() keeps the body for below
            self._session_expired(exchange, response, response.read())
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
            read_some(response)  # a body like "Accepted" means nothing
            self._accepted(exchange, status)
        elif is_json_type(media_type):
            self._json_answer(exchange, response)
        else:
            raise self._not_mcp(response)
        self._settle(exchange, "the server's answer to this POST held no JSON-RPC response for it")
        if ok and exchange.method == "notifications/initialized" and exchange.era == "handshake":
            self._open_get_stream()

    def _mcp_answer(self, exchange: Exchange, response: httpx.Response, what: str) -> None:
        """The POST got an answer an MCP server gives: auto has found its transport."""
        self._choose("streamable-http", f"the server answered the first POST with HTTP {response.status_code} "
                                        f"and {what}")
        if exchange.release_on != "answer":
            exchange.released.set()

    def _accepted(self, exchange: Exchange, status: int) -> None:
        """A body-less answer: right for notifications and responses, a dead end for a request."""
        if exchange.waiting:
            self._fail(exchange, f"the server answered HTTP {status} with no body: no JSON-RPC response will "
                                 "come for this request")

    def _json_answer(self, exchange: Exchange, response: httpx.Response) -> None:
        """An application/json answer: one JSON-RPC message (or batch), delivered whatever the HTTP status."""
        body = response.read()
        if not body.strip() and 200 <= response.status_code < 300:
            self._mcp_answer(exchange, response, "no body")
            self._accepted(exchange, response.status_code)
            return
        value = parse_json(body)
        if value is NOT_JSON:
            raise self._not_mcp(response, body, "is not valid JSON (cut off or damaged)")
        if not looks_jsonrpc(value):
            raise self._not_mcp(response, body, "is not a JSON-RPC message")
        self._mcp_answer(exchange, response, "JSON-RPC")
        self._deliver(body.strip(), self._meta(response, "post"), value)
        if exchange.waiting and not 200 <= response.status_code < 300:
            error = next((item.get("error") for item in response_items(value)), None)
            what = f": {one_line(json.dumps(error))[:200]}" if error is not None else ""
            self._fail(exchange, f"the server answered HTTP {response.status_code} with a JSON-RPC error that "
                                 f"names no request of ours{what}")

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

    def _session_expired(self, exchange: Exchange, response: httpx.Response, body: bytes) -> None:
        """A 404 (or a 400 naming the session) for the session we sent: forget it, say so, and fail the request
        (the session re-initializes)."""
        sent, status = exchange.session_sent, response.status_code
        with self._lock:
            if self._session_id == sent:
                self._session_id, self._negotiated = None, None
            get_stream = self._get_stream
        if get_stream is not None:
            get_stream.abort()  # that stream belonged to the dead session
        value = parse_json(body)
        if looks_jsonrpc(value):
            self._deliver(body.strip(), self._meta(response, "post"), value)
        self._emit("transport-error", self._detail(
            f"the server no longer knows session {sent} (HTTP {status}): it expired or was closed, or the server "
            "restarted; initialize again", self._base, response, body, kind="session-expired", session_id=sent))
        if self._on_session_expired is not None and not self._quiet:
            with self._callbacks:
                self._on_session_expired()
        self._fail(exchange, f"session {sent} expired (HTTP {status})")

    # -- request streams and the GET stream ------------------------------------------------------------------

    def _read_post_stream(self, exchange: Exchange, response: httpx.Response) -> None:
        """A request's SSE stream: deliver each message as it comes; resume it if it ends early (handshake era)."""
        state = StreamState()
        broke = self._pump(exchange, response, state, "post")
        if exchange.waiting and not exchange.aborted and exchange.era == "handshake" \
                and state.parser.last_event_id is not None:
            broke = self._resume(exchange, state, broke)
        self._settle(exchange, f"its response stream broke: {broke}" if broke else
                     "the server ended the response stream without answering")

    def _resume(self, exchange: Exchange, state: StreamState, broke: str | None) -> str | None:
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
                response = self._net.open(exchange, "GET", self._base, headers, None)
            except Failure as failure:
                return f"resuming it failed: {failure.error}"
            with closing(response):
                if not (200 <= response.status_code < 300 and media_type_of(response) == EVENT_STREAM):
                    return f"resuming it with GET got HTTP {response.status_code}"
                broke = self._pump(exchange, response, state, "get-stream", resumed=True)
        return broke

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
            handle = self._get_stream = Abortable()
            self._streams.add(handle)
        threading.Thread(target=self._run_get_stream, args=(handle,), daemon=True, name="mcp-http-get-stream").start()

    def _run_get_stream(self, handle: Abortable) -> None:
        """The GET stream's thread: reconnect after a `retry:`, but give up after two that bring nothing."""
        state, last_id, failures, attempt = StreamState(), None, 0, 0
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
                state = StreamState(parser=carry_over(state.parser))
        finally:
            self._untrack(handle)
            with self._lock:
                if self._get_stream is handle:
                    self._get_stream = None

    def _get_stream_once(self, handle: Abortable, state: StreamState, last_id: str | None,
                         first: bool) -> str | None:
        """One GET; returns None when there is nothing to reconnect to, else how the stream ended."""
        try:
            response = self._net.open(handle, "GET", self._base, self._get_headers(last_id), None)
        except Failure as failure:
            if not handle.aborted:
                self._report(failure, self._base, get_stream=True)
            return None
        with closing(response):
            status = response.status_code
            if status == 405:
                self._note_once("get-405", {"note": "the server offers no GET stream (HTTP 405): it can send "
                                                    "messages only on request streams"})
                return None
            if not (200 <= status < 300 and media_type_of(response) == EVENT_STREAM):
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
