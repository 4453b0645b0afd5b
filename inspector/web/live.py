"""The websocket: on every (re)connect the newest rows replace the timeline, then live rows follow in batches.

Each connection keeps a cursor (the last seq it sent) instead of a queue, so nothing is lost or sent twice, and a
connection that falls far behind simply re-syncs to the newest rows (older ones page in over HTTP). Only the
connection's own thread sends frames, keep-alive Pings included (live_socket.py): two threads writing large frames
at once corrupt the stream.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping

from flask import Flask, Response, current_app, render_template, request
from simple_websocket import ConnectionClosed

from inspector.protocol.json import loads
from inspector.recording.store import Filters, Store
from inspector.web import get_inspector, regions
from inspector.web.live_socket import HandshakeRefused, LiveSocket

DOM_ROWS = 1000
"""The page never holds more rows than this; the server sends no more than it can keep."""
BATCH_ROWS = 500
WAIT_SECONDS = 0.25
MAX_INBOUND_BYTES = 1024 * 1024
"""A bigger message from the browser is refused with close 1009 (the page sends only small JSON)."""
PING_SECONDS = 25.0
"""Keep-alive: a Ping this often; a tab that has not answered the previous one by then is closed (1008)."""
PING_SECONDS_VARIABLE = "MCP_INSPECT_WS_PING_SECONDS"
"""Tests shorten the keep-alive with this variable so they need not wait 25 s; nothing else reads it."""


def ping_seconds(environ: Mapping[str, str]) -> float:
    """The keep-alive interval: PING_SECONDS, or a positive number of seconds from PING_SECONDS_VARIABLE."""
    try:
        value = float(environ.get(PING_SECONDS_VARIABLE, PING_SECONDS))
    except ValueError:
        return PING_SECONDS
    return value if math.isfinite(value) and value > 0 else PING_SECONDS


class LiveConnection:
    """One browser tab's websocket."""

    def __init__(self, ws, store: Store, ping_every: float = PING_SECONDS) -> None:
        self.ws = ws
        self.store = store
        self.ping_every = ping_every
        self._next_ping = time.monotonic() + ping_every
        self.filters = Filters()
        self._requested_filters: Filters | None = None
        self._lock = threading.Lock()
        self.cursor = 0
        self.signal_cursor = 0
        self.open = True

    def run(self) -> None:
        """Serve the connection until the browser goes away."""
        threading.Thread(target=self._receive, name="ws-receive", daemon=True).start()
        self._sync()
        while self.open:
            # Filters first: a message that came in while syncing must not wait for the next wake-up.
            with self._lock:
                requested, self._requested_filters = self._requested_filters, None
            if requested is not None:
                self.filters = requested
                self._sync()
                continue
            self.store.wait(self.cursor, self.signal_cursor, min(WAIT_SECONDS, self._until_ping()))
            with self._lock:
                if self._requested_filters is not None:
                    continue
            self._push()
            self._keep_alive()

    def _until_ping(self) -> float:
        return max(0.0, self._next_ping - time.monotonic())

    def _keep_alive(self) -> None:
        """Ping from this thread, between frames; a tab that never answered is closed, and this loop ends."""
        if self.open and self._until_ping() == 0:
            self._next_ping = time.monotonic() + self.ping_every
            if not self.ws.ping():
                self.open = False

    def _sync(self) -> None:
        """Replace the timeline with the newest rows and re-render the panels."""
        last = self.store.last_seq
        _, self.signal_cursor = self.store.signals_since(self.store.signal_seq)
        rows = self.store.newest(self.filters, DOM_ROWS, before=last + 1)
        self.cursor = last
        parts = [render_template("partials/_push_rows.html", rows=rows, swap="innerHTML",
                                 older=bool(rows) and bool(self.store.newest(self.filters, 1, before=rows[0].seq)))]
        parts += self._panels(regions.PAGE_LOAD)
        self._send("".join(parts))

    def _push(self) -> None:
        parts: list[str] = []
        if self.store.last_seq - self.cursor > DOM_ROWS:
            self._sync()  # too far behind: the page could not keep the rows anyway
            return
        rows, self.cursor = self.store.since(self.cursor, self.filters, BATCH_ROWS)
        if rows:
            parts.append(render_template("partials/_push_rows.html", rows=rows, swap="beforeend", older=False))
        changed, self.signal_cursor = self.store.signals_since(self.signal_cursor)
        parts += self._panels(regions.CATCH_UP if changed is None else changed)
        if parts:
            self._send("".join(parts))

    def _panels(self, changed) -> list[str]:
        parts = []
        for change in changed:
            try:
                parts.extend(regions.pushes(change))
            except Exception:  # a region that fails to render must not take the live connection down
                current_app.logger.exception("could not render %s for the page", change)
        return parts

    def _send(self, text: str) -> None:
        try:
            self.ws.send(text)
        except (ConnectionClosed, OSError):  # OSError: the tab went away while the frame was being written
            self.open = False

    def _receive(self) -> None:
        while self.open:
            try:
                data = self.ws.receive()
            except ConnectionClosed:
                break
            if data is None:
                continue
            try:
                message = loads(data)
            except (TypeError, ValueError):
                continue  # the browser only sends JSON; anything else is ignored, not fatal
            if isinstance(message, dict) and message.get("type") == "filters":
                with self._lock:
                    self._requested_filters = Filters.from_mapping({**message, "filtered": True})
                self.store.wake()
        self.open = False


def register_live(app: Flask, ping_every: float = PING_SECONDS) -> None:
    """Attach the /ws route (it matches websocket upgrades only; a plain GET gets Werkzeug's 400)."""

    @app.route("/ws", websocket=True)
    def live():
        try:
            ws = LiveSocket(request.environ, MAX_INBOUND_BYTES)
        except HandshakeRefused as refused:
            return Response(f"not a websocket handshake we accept: {refused}\n", status=400, mimetype="text/plain",
                            headers=refused.headers)
        try:
            LiveConnection(ws, get_inspector().store, ping_every).run()
        except ConnectionClosed:
            pass
        finally:
            try:
                ws.close()
            except (ConnectionClosed, OSError):
                pass  # already closed, by either side
        # Werkzeug needs an answer to finish the request; the browser stopped reading HTTP at the 101.
        return Response()
