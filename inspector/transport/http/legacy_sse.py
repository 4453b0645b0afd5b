"""The legacy HTTP+SSE transport (2024-11-05): one SSE stream carries every answer; its `endpoint` event says
where to POST.
"""

from __future__ import annotations

import threading
from contextlib import closing

import httpx

from inspector.transport import ExitInfo
from inspector.transport.sse import SseEvent
from inspector.transport.http.core import ACCEPT_POST, ConnectionCore, Exchange, StreamState
from inspector.transport.http.messages import EVENT_STREAM, looks_jsonrpc, media_type_of, parse_json
from inspector.transport.http.net import Abortable, Failure, read_some


class LegacySse(ConnectionCore):
    """The legacy HTTP+SSE side of `HttpConnection`."""

    def _connect_legacy(self, sse_url: httpx.URL) -> None:
        """GET the SSE stream and wait for its endpoint event; raises Failure in words."""
        handle = Abortable()
        self._track(handle)
        ready, outcome = threading.Event(), {}
        threading.Thread(target=self._run_legacy_stream, args=(handle, sse_url, ready, outcome), daemon=True,
                         name="mcp-http-sse-stream").start()
        wait = self._connect_timeout + 2.0
        if not ready.wait(wait):
            handle.abort()
            raise Failure(f"the SSE stream at {sse_url} sent no endpoint event within {wait:g} s", url=str(sse_url))
        if "failure" in outcome:
            handle.abort()
            raise outcome["failure"]
        self._emit("transport", {"note": f"HTTP+SSE endpoint: {self._post_url}", "endpoint": str(self._post_url)})

    def _run_legacy_stream(self, handle: Abortable, sse_url: httpx.URL, ready: threading.Event,
                           outcome: dict) -> None:
        """The legacy stream's thread: report the endpoint (or why there is none), then the end of the stream."""
        try:
            broke = self._legacy_stream(handle, sse_url, ready, outcome)
        except Failure as failure:
            outcome["failure"] = failure
            ready.set()
            return
        finally:
            self._untrack(handle)
        if not ready.is_set():
            outcome["failure"] = Failure(f"the SSE stream at {sse_url} ended before its endpoint event",
                                         url=str(sse_url))
            ready.set()
            return
        if "failure" not in outcome and not handle.aborted and not self._quiet:
            reason = "the server closed the SSE stream" if broke is None else f"the SSE stream broke: {broke}"
            self._fail_everything(reason)
            self._end(ExitInfo(code=None, signal=None, reason=reason))

    def _legacy_stream(self, handle: Abortable, sse_url: httpx.URL, ready: threading.Event,
                       outcome: dict) -> str | None:
        """GET the HTTP+SSE stream and read it to its end; returns None or why it broke."""
        response = self._net.open(handle, "GET", sse_url, self._with_user_headers({"Accept": EVENT_STREAM}), None)
        with closing(response):
            status = response.status_code
            if status == 401:
                raise self._auth_failure(response)
            if not (200 <= status < 300 and media_type_of(response) == EVENT_STREAM):
                failure = self._not_mcp(response)
                raise Failure(f"{sse_url} is not an HTTP+SSE endpoint: {failure.error}", **failure.detail)

            def on_endpoint(event: SseEvent) -> None:
                if ready.is_set():
                    self._note_once("endpoint-again", {"note": "ignored a second endpoint event"})
                    return
                try:
                    self._post_url = self._endpoint_url(response.request.url, event.data)
                except Failure as failure:
                    outcome["failure"] = failure
                    handle.abort()
                ready.set()

            return self._pump(handle, response, StreamState(), "sse-stream", on_endpoint=on_endpoint)

    def _endpoint_url(self, sse_url: httpx.URL, data: str) -> httpx.URL:
        """The endpoint event's URL resolved against the stream's; it must stay on the same origin."""
        try:
            target = sse_url.join(data.strip())
        except (httpx.InvalidURL, ValueError):
            raise Failure(f"the SSE endpoint event holds no usable URL: {data[:200]!r}", url=str(sse_url)) from None
        refusal = self._net.refusal(target)
        if refusal:
            raise Failure(f"refused the SSE endpoint {target}: {refusal}", kind="redirect", url=str(sse_url))
        return target

    def _post_legacy(self, exchange: Exchange) -> None:
        """HTTP+SSE: POST to the endpoint; the answer comes on the SSE stream, the POST just says 202."""
        headers = self._with_user_headers({"Content-Type": "application/json", "Accept": ACCEPT_POST})
        response = self._net.open(exchange, "POST", self._post_url, headers, exchange.body)
        with closing(response):
            exchange.released.set()
            status = response.status_code
            if status == 401:
                raise self._auth_failure(response)
            if not 200 <= status < 300:
                raise self._not_mcp(response)
            body = read_some(response)
            value = parse_json(body)
            if looks_jsonrpc(value):  # not the usual, but a server may answer on the POST itself
                self._deliver(body.strip(), self._meta(response, "post"), value)
