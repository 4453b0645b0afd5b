"""The page's websocket, with one writer per socket: every frame goes onto the wire whole, under one lock.

simple-websocket writes from two threads: the caller's `send`, and its own background thread, which sends the
keep-alive Ping, answers the browser's Ping and Close, and closes with 1009 an over-cap message. It takes no lock,
so its Ping could land inside a 20 MB text frame still being sent to a slow tab, and the tab then reads garbage
(security.md row 16). Here the library's own pinging is off (`ping_interval=None`: `ping()` below is called by the
page's own loop instead), and the socket under the library is wrapped so that the writes left on its background
thread wait for the frame being sent to end.
"""

from __future__ import annotations

import threading

from simple_websocket import ConnectionClosed, Server
from wsproto.events import Ping, RejectConnection
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import RemoteProtocolError


class HandshakeRefused(Exception):
    """The upgrade request is not a websocket handshake we can accept (e.g. an unknown version, no key)."""

    def __init__(self, reason: str, headers: list[tuple[str, str]]) -> None:
        super().__init__(reason)
        self.headers = headers
        """Headers the answer should carry (e.g. Sec-WebSocket-Version: 13 for a wrong version)."""


class OneWriterSocket:
    """A connection's socket whose writes are serialised: a write holds the lock until its last byte is sent."""

    def __init__(self, sock, lock: threading.RLock) -> None:
        self._sock = sock
        self._lock = lock

    def send(self, data: bytes) -> int:
        # sendall: a plain send may write part of a frame and return, and the library ignores what it returns.
        with self._lock:
            self._sock.sendall(data)
        return len(data)

    def close(self) -> None:
        with self._lock:  # not in the middle of another thread's frame
            self._sock.close()

    def __getattr__(self, name: str):
        return getattr(self._sock, name)  # recv, fileno, ...: reading needs no lock


class LiveSocket(Server):
    """A server-side websocket whose frames never interleave; the owner pings it with `ping()`."""

    def __init__(self, environ: dict, max_message_size: int) -> None:
        self.write_lock = threading.RLock()
        """Held while a frame is built and written: wsproto's state and the bytes on the wire stay in one order."""
        raw = environ.get("werkzeug.socket")
        if raw is not None:
            environ = {**environ, "werkzeug.socket": OneWriterSocket(raw, self.write_lock)}
        try:
            super().__init__(environ, ping_interval=None, max_message_size=max_message_size)
        except RemoteProtocolError as error:  # nothing was written yet: the caller can still answer with a 4xx
            hint = error.event_hint.headers if isinstance(error.event_hint, RejectConnection) else []
            headers = [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in hint]
            raise HandshakeRefused(str(error), headers) from None

    def send(self, data) -> None:
        with self.write_lock:
            super().send(data)

    def close(self, reason=None, message=None) -> None:
        with self.write_lock:
            super().close(reason, message)

    def ping(self) -> bool:
        """Send a keep-alive Ping. If the last one is still unanswered the tab is gone (or frozen): close with
        1008 and return False, as simple-websocket's own keep-alive does. Also False once the socket is closed."""
        try:
            with self.write_lock:
                if not self.connected:
                    return False
                if not self.pong_received:
                    self.close(CloseReason.POLICY_VIOLATION, "Ping/Pong timeout")
                    return False
                self.pong_received = False  # set again by the background thread when the Pong comes in
                self.sock.send(self.ws.send(Ping()))
        except (ConnectionClosed, OSError):
            return False
        return True
