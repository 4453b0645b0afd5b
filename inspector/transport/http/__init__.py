"""MCP over HTTP with the `Transport` surface: Streamable HTTP (both eras) and the legacy HTTP+SSE transport.

The inspector speaks raw JSON-RPC, so this package moves bytes and never builds or repairs messages. It looks
inside them only to choose headers (the era, the method, the name), to learn the session and the negotiated
version, and to tell the session when a request will never be answered.

Every thread is a daemon: a worker for the POSTs in order, one per POST, one for the GET stream (handshake
era) and one for the legacy SSE stream. Nothing blocks forever: every connection can be aborted by shutting
its socket down, which is how cancellation (2026-07-28: closing the response stream IS the cancellation) and
stop() work.

What it reports, besides messages (`on_message(body, meta)`, meta = status, MCP-relevant headers, via
"post" | "get-stream" | "sse-stream", event_id, and resumed=True on a stream picked up with Last-Event-ID):

- on_event("transport-error", {error, url, status, content_type, body, ...}): a failure in one line; extra keys
  say more: kind ("connect", "http", "auth", "redirect", "session-expired"), location (redirects),
  www_authenticate (401), session_id (session-expired), get_stream=True (the GET stream failed);
- on_event("transport", {chosen, why[, endpoint]}): auto found the transport;
- on_event("transport", {note, ...}): what the transport did on its own: the GET stream opened, or a 405 said
  there is none; a stream reconnects or gives up; a redirect was followed; a request was cancelled by closing
  its stream (request_id); the legacy endpoint (endpoint); the session was ended with DELETE.

The parts: `net` (the safety rules of security.md row 29), `messages` (pure peeking), `core` (shared state and
SSE reading), `streamable`, `legacy_sse`, and `connection` (lifecycle, sending order, the worker).
"""

from inspector.transport.http.connection import ConnectError, HttpConnection
from inspector.transport.http.core import AUTH_HINT
from inspector.transport.http.messages import header_value

__all__ = ["AUTH_HINT", "ConnectError", "HttpConnection", "header_value"]
