"""The websocket: on every (re)connect the newest rows replace the timeline, then live frames follow, paced.

Each connection keeps a cursor (the last seq it sent) instead of a queue, so nothing is lost or sent twice. Frames
are paced (live_flow.py): the page acknowledges each once painted, and the next one carries everything new since.
A tab more than a page of rows behind gets only the newest CATCH_UP_ROWS rows (the timeline replaced, with a note
of how many more came; older ones page in over HTTP), so what is rendered never grows with what a tab did not see.
Only the connection's own thread sends frames, keep-alive Pings included (live_socket.py): two threads writing
large frames at once corrupt the stream.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Mapping

from flask import Flask, Response, current_app, render_template, request
from simple_websocket import ConnectionClosed
from wsproto.frame_protocol import CloseReason

from inspector.protocol.json import loads
from inspector.recording.store import Filters, Store
from inspector.web import get_inspector, regions
from inspector.web.live_flow import FrameFlow
from inspector.web.live_socket import HandshakeRefused, LiveSocket

DOM_ROWS = 1000
"""The page never holds more rows than this; the server sends no more than it can keep."""
CATCH_UP_ROWS = 100
"""A tab more than DOM_ROWS behind gets this many of the newest rows (two screens and more of a tall window; older
ones page in): during a flood every frame is such a catch-up, and its rows are rendered here (about 0.1 ms each)
and parsed and laid out by the page on the same two cores as the relay. 250 cost a 100,000-message flood about
0.5 s of the inspector's CPU (bench/page_flood.py: result 4.6x the floor; 4.0x with 100)."""
APPEND_ROWS = 250
"""The most rows one frame appends; a backlog of more (up to DOM_ROWS) comes in that many frames, in order. The page
parses and lays out about 0.3 ms a row here, and a frame must not hold it up for 200 ms: a flood's first frame once
appended 779 rows in one and took 233 ms (bench/page_flood.py)."""
WAIT_SECONDS = 0.25
MAX_INBOUND_BYTES = 1024 * 1024
"""A bigger message from the browser is refused with close 1009 (the page sends only small JSON)."""
PING_SECONDS = 25.0
"""Keep-alive: a Ping this often; a tab that has not answered the previous one by then is closed (1008)."""
ACK_PINGS = 2
"""A frame not acknowledged for this many keep-alive intervals: the tab is stuck (or is no page of ours). It is
closed with 1013 (try again later), on which the page reconnects and gets the newest rows: nothing piles up."""
CLOSE_WAIT_SECONDS = 5.0
"""How long a closed websocket waits for the tab's answering Close before its connection is ended."""
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

    def __init__(self, ws, store: Store, ping_every: float = PING_SECONDS, flow: FrameFlow | None = None,
                 page_signal: int | None = None) -> None:
        self.ws = ws
        self.store = store
        self.page_signal = page_signal
        """The store's signal number when the page was rendered (index.html puts it in the websocket's URL): the
        first frame re-renders only the panels changed since, not panels the page has just drawn. None: all."""
        self.ping_every = ping_every
        self._next_ping = time.monotonic() + ping_every
        self.flow = flow or FrameFlow()
        self.filters = Filters()
        self._requested_filters: Filters | None = None
        self._lock = threading.Lock()
        self._news = threading.Event()
        """Set by the receiving thread: an acknowledgement, new filters, or the tab went away."""
        self.cursor = 0
        self.signal_cursor = 0
        self.open = True

    def run(self) -> None:
        """Serve the connection until the browser goes away."""
        threading.Thread(target=self._receive, name="ws-receive", daemon=True).start()
        self._sync(self.page_signal)
        while self.open:
            # Filters first: a message that came in while syncing must not wait for the next wake-up.
            requested = self._take_filters()
            if requested is not None:
                self.filters = requested
                # The user asked: not held back by an unacknowledged frame. New filters change the rows only; the
                # panels come as changed since the last frame, not re-drawn under the pointer (tool buttons).
                self._sync(self.signal_cursor)
                continue
            if self.flow.in_flight():
                self._wait_news(self._until_ping())  # the tab is still painting the last frame
            else:
                self.store.wait(self.cursor, self.signal_cursor, min(WAIT_SECONDS, self._until_ping()))
                # Coalesce: whatever else arrives before the pace allows the next frame goes into it too.
                self._wait_news(min(self.flow.until_next(), self._until_ping()))
                if self._filters_pending():
                    continue
                self._push()
            self._keep_alive()

    def _take_filters(self) -> Filters | None:
        with self._lock:
            requested, self._requested_filters = self._requested_filters, None
        return requested

    def _filters_pending(self) -> bool:
        with self._lock:
            return self._requested_filters is not None

    def _wait_news(self, timeout: float) -> None:
        if timeout > 0:
            self._news.wait(timeout)
        self._news.clear()  # the state it stood for is read after this, so no news is lost

    def _until_ping(self) -> float:
        return max(0.0, self._next_ping - time.monotonic())

    def _keep_alive(self) -> None:
        """Ping from this thread, between frames; a tab that never answered is closed, and this loop ends. So is a
        tab that has not acknowledged a frame for ACK_PINGS intervals (1013: the page reconnects and re-syncs)."""
        if self.open and self._until_ping() == 0:
            self._next_ping = time.monotonic() + self.ping_every
            if not self.ws.ping():
                self.open = False
        if self.open and self.flow.unacknowledged_for() > ACK_PINGS * self.ping_every:
            self.open = False
            try:
                self.ws.close(CloseReason.TRY_AGAIN_LATER, "frame not acknowledged")
            except (ConnectionClosed, OSError):
                pass

    def _sync(self, page_signal: int | None = None) -> None:
        """Replace the timeline with the newest rows and re-render the panels: every PAGE_LOAD one, or with
        `page_signal` (what the page shows: a first connection's page render, or this connection's last frame)
        those changed since. A panel re-rendered for nothing replaces its buttons: a click on a tool just as the
        page connected was lost with them."""
        newest = self.store.signal_seq
        changed, self.signal_cursor = self.store.signals_since(newest if page_signal is None else page_signal)
        if page_signal is None or changed is None or not 0 <= page_signal <= newest:
            changed = regions.PAGE_LOAD  # none asked, some changes dropped, or a number this store never gave
        parts = [self._newest_rows(skipped=False)]
        parts += self._panels(changed)
        self._send("".join(parts))

    def _push(self) -> None:
        """One frame: every row and change since the last frame."""
        parts = self._new_rows()
        changed, self.signal_cursor = self.store.signals_since(self.signal_cursor)
        parts += self._panels(regions.CATCH_UP if changed is None else changed)
        if parts:
            self._send("".join(parts))

    def _new_rows(self) -> list[str]:
        """The rows after the cursor, appended (APPEND_ROWS at most: the next frames bring the rest); or, more than
        the page keeps behind, the newest window."""
        if self.store.last_seq - self.cursor > DOM_ROWS:
            return [self._newest_rows(skipped=True)]
        rows, self.cursor = self.store.since(self.cursor, self.filters, APPEND_ROWS)
        return [self._rows_part(rows, "beforeend")] if rows else []

    def _newest_rows(self, skipped: bool) -> str:
        """The newest rows replacing the timeline: DOM_ROWS on a (re)sync, CATCH_UP_ROWS for a tab behind, with a
        note of how many newer rows than the page had it did not get (counted only without filters: with them,
        counting would mean reading them)."""
        last = self.store.last_seq
        rows = self.store.newest(self.filters, CATCH_UP_ROWS if skipped else DOM_ROWS, before=last + 1)
        missed = None
        if skipped:
            missed = max(0, last - self.cursor - len(rows)) if self.filters.is_default() else -1
        self.cursor = last
        older = bool(rows) and bool(self.store.newest(self.filters, 1, before=rows[0].seq))
        return self._rows_part(rows, "innerHTML", skipped=missed, older=older)

    def _rows_part(self, rows, swap: str, skipped: int | None = None, older: bool = False) -> str:
        """Rows as one <hx-partial> for the timeline (swap: beforeend appends, innerHTML replaces; `older`: rows
        older than the first passing the filters exist, so "Load older rows" has something to load)."""
        return render_template("partials/_push_rows.html", rows=rows, swap=swap, skipped=skipped, older=older)

    def _panels(self, changed) -> list[str]:
        parts = []
        for change in changed:
            try:
                parts.extend(regions.pushes(change))
            except Exception:  # a region that fails to render must not take the live connection down
                current_app.logger.exception("could not render %s for the page", change)
        return parts

    def _send(self, text: str) -> None:
        self.flow.sending()
        try:
            self.ws.send(text)
        except (ConnectionClosed, OSError):  # OSError: the tab went away while the frame was being written
            self.open = False
        self.flow.written()

    def _receive(self) -> None:
        try:
            while self.open:
                try:
                    data = self.ws.receive()
                except ConnectionClosed:
                    break
                if data is not None:
                    self._take(data)
        finally:
            self.open = False
            self._news.set()

    def _take(self, data) -> None:
        """One message from the page: an acknowledgement of a frame, or new filters."""
        try:
            message = loads(data)
        except (TypeError, ValueError):
            return  # the browser only sends JSON; anything else is ignored, not fatal
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "ack":
            if self.flow.acknowledge():
                self._news.set()
        elif kind == "filters":
            with self._lock:
                self._requested_filters = Filters.from_mapping({**message, "filtered": True})
            self._news.set()
            self.store.wake()


class _AfterWebsocket(Response):
    """The view's answer once its websocket is over. The socket has carried frames since the 101, up to a Close;
    an HTTP response written now would reach the browser as one more frame, a garbled one (Chromium: "Invalid frame
    header"; a websocket library: "rsv is not implemented"). Werkzeug's server takes a ConnectionError from the
    application as a dropped connection and writes nothing; it does not end the connection (_end_connection does)."""

    def __call__(self, environ, start_response):
        raise ConnectionError("the websocket is over: no HTTP answer follows its Close")


def _end_connection(ws: LiveSocket, environ: Mapping) -> None:
    """End the connection once the websocket is over: after the tab's answering Close (the library's reading thread
    ends on it; a tab that never answers gets CLOSE_WAIT_SECONDS), shut the socket down both ways. Werkzeug would
    otherwise keep the connection for a next HTTP request and read the tab's Close frame as one, answering it with
    a 400 that, again, reaches the tab as a garbled frame; shut down before that answer, the tab could not send
    its Close and would see the websocket end abnormally (1006) instead of with the server's code."""
    ws.thread.join(CLOSE_WAIT_SECONDS)
    sock = environ.get("werkzeug.socket")
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):
        pass  # no socket (a test client), or already gone


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
            page_signal = request.args.get("since", type=int)  # None when absent or not a number
            LiveConnection(ws, get_inspector().store, ping_every, page_signal=page_signal).run()
        except ConnectionClosed:
            pass
        finally:
            try:
                ws.close()
            except (ConnectionClosed, OSError):
                pass  # already closed, by either side
            _end_connection(ws, request.environ)
        return _AfterWebsocket()
