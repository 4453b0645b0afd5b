"""The websocket: on every (re)connect the newest rows replace the timeline, then live rows follow in batches.

Each connection keeps a cursor (the last seq it sent) instead of a queue, so nothing is lost or sent twice, and a
connection that falls far behind simply re-syncs to the newest rows (older ones page in over HTTP). Only the
connection's own thread sends frames: two threads writing large frames at once corrupt the stream.
"""

from __future__ import annotations

import threading

from flask import Flask, current_app, render_template
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from inspector.protocol.json import loads
from inspector.recording.store import Filters, Store
from inspector.web import get_inspector, regions

DOM_ROWS = 1000
"""The page never holds more rows than this; the server sends no more than it can keep."""
BATCH_ROWS = 500
WAIT_SECONDS = 0.25


class LiveConnection:
    """One browser tab's websocket."""

    def __init__(self, ws, store: Store) -> None:
        self.ws = ws
        self.store = store
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
            self.store.wait(self.cursor, self.signal_cursor, WAIT_SECONDS)
            with self._lock:
                if self._requested_filters is not None:
                    continue
            self._push()

    def _sync(self) -> None:
        """Replace the timeline with the newest rows and re-render the panels."""
        last = self.store.last_seq
        _, self.signal_cursor = self.store.signals_since(self.store.signal_seq)
        rows = self.store.newest(self.filters, DOM_ROWS, before=last + 1)
        self.cursor = last
        parts = [render_template("partials/_push_rows.html", rows=rows, swap="innerHTML",
                                 older=bool(rows) and rows[0].seq > 1)]
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
        except ConnectionClosed:
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


def register_live(app: Flask) -> None:
    """Attach the /ws route."""
    sock = Sock(app)

    @sock.route("/ws")
    def live(ws):
        LiveConnection(ws, get_inspector().store).run()
