"""Request timeouts without a poll: one thread sleeps until the earliest deadline (a heap and
Condition.wait(timeout)), starts with the first deadline and ends when its owner closes."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable

FOREVER = float("inf")
DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for an answer unless told otherwise (--timeout): the page, the commands and replay alike. Here,
in a module of the standard library's imports alone: the commands' options read it before anything else loads."""


class Deadlines:
    """Wakes its callback at each deadline: a heap and Condition.wait(timeout), not a poll; ends on close()."""

    def __init__(self, expire: Callable[[float], None]) -> None:
        self._expire = expire
        self._heap: list[float] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, when: float) -> None:
        """Call back at `when` (time.monotonic); the thread starts with the first finite deadline."""
        if when == FOREVER:
            return
        with self._cond:
            if self._closed:
                return
            heapq.heappush(self._heap, when)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="request-timeouts", daemon=True)
                self._thread.start()
            self._cond.notify()

    @property
    def running(self) -> bool:
        """The thread is alive (it starts with the first deadline)."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait for the thread to end (after close())."""
        if self._thread is not None:
            self._thread.join(timeout)

    def close(self) -> None:
        """End the thread (pending deadlines are dropped)."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._heap or self._heap[0] > time.monotonic()):
                    self._cond.wait(self._heap[0] - time.monotonic() if self._heap else None)
                if self._closed:
                    return
                now = time.monotonic()
                while self._heap and self._heap[0] <= now:
                    heapq.heappop(self._heap)
            self._expire(now)
