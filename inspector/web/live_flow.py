"""When a tab may get its next live frame: flow control for the websocket, apart from the I/O.

A browser reads websocket frames as fast as they come and queues them without limit, however slowly it renders
them; a flood then leaves the page minutes behind the server (performance.md, finding 1). So the page acknowledges
each frame once it has swapped and painted it, and a tab gets its next frame only when the previous one is
acknowledged and FRAME_SECONDS have passed since it was sent. Everything new in between goes into that one frame,
so a slow tab gets fewer, larger frames instead of a backlog.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

FRAME_SECONDS = 0.15
"""At most one frame this often (the page follows a flood at about 6 frames a second, each with all that is new)."""


class FrameFlow:
    """A tab's frames sent and acknowledged, and when the last went out. Thread-safe: frames are sent by the
    connection's thread, acknowledgements counted by its receiving thread."""

    def __init__(self, frame_seconds: float = FRAME_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.frame_seconds = frame_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self.sent = 0
        self.acknowledged = 0
        self._last_sent = float("-inf")
        self._waiting_since: float | None = None

    def sending(self) -> None:
        """A frame is about to be written. Counted before the write: its acknowledgement may come back before the
        write returns."""
        with self._lock:
            self.sent += 1

    def written(self) -> None:
        """The frame is on the wire. The pace and the wait for its acknowledgement count from here: a slow write
        is the network's (the keep-alive Ping judges that), not the page's."""
        with self._lock:
            self._last_sent = self._clock()
            if self._waiting_since is None and self.acknowledged < self.sent:
                self._waiting_since = self._last_sent

    def acknowledge(self) -> bool:
        """The page has painted a frame. False (and ignored) when no frame is waiting for one."""
        with self._lock:
            if self.acknowledged >= self.sent:
                return False
            self.acknowledged += 1
            if self.acknowledged == self.sent:
                self._waiting_since = None
            return True

    def in_flight(self) -> bool:
        """A frame is sent and not yet acknowledged: the tab is still working through it."""
        with self._lock:
            return self.acknowledged < self.sent

    def until_next(self) -> float:
        """Seconds before the next frame may go out (0: now), pacing aside from the acknowledgement."""
        with self._lock:
            return max(0.0, self._last_sent + self.frame_seconds - self._clock())

    def unacknowledged_for(self) -> float:
        """Seconds since the tab last owed no acknowledgement (0 when it owes none now)."""
        with self._lock:
            return 0.0 if self._waiting_since is None else self._clock() - self._waiting_since
