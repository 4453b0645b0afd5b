"""The write end of a server's stdin: nobody ever waits on the pipe, so a server that stops reading blocks nothing.

The pipe is non-blocking. `put` writes what fits at once and queues the rest (up to a bound) for the one writer
thread, which sleeps in poll() until the pipe has room. The lock is held only for queue work and non-blocking
writes, never across a wait, so `close` (the first rung of the shutdown ladder) always runs at once.
"""

from __future__ import annotations

import array
import errno
import fcntl
import os
import select
import termios
import threading
from collections import deque

MAX_QUEUED_BYTES = 64 * 1024 * 1024
"""What waits for a server that reads slowly or not at all before `put` refuses more (a larger line still goes
when nothing else waits)."""


class StdinWriter:
    """One server's stdin, written in order by `put` and one writer thread of its own."""

    def __init__(self, fd: int, name: str, limit: int = MAX_QUEUED_BYTES) -> None:
        """Take over fd (it is closed by `close`)."""
        os.set_blocking(fd, False)
        self._fd, self._limit = fd, limit
        self._queue: deque[memoryview] = deque()
        self._queued = 0
        self._lost = 0
        self._lock = threading.Lock()
        self._closed = False
        self._error: OSError | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def put(self, data: bytes) -> None:
        """Write data now or queue it; never waits. BrokenPipeError once closed or gone, BlockingIOError when
        the server has left more than the bound unread."""
        with self._lock:
            if self._closed or self._error is not None:
                raise self._error or BrokenPipeError("server stdin is closed")
            if self._queued and self._queued + len(data) > self._limit:
                raise BlockingIOError(errno.EAGAIN, f"the server is not reading its stdin ({self._queued} bytes "
                                                    "are waiting)")
            idle = not self._queue
            self._queue.append(memoryview(data).cast("B"))
            self._queued += len(data)
            self._write_some()
            if self._error is not None:
                raise self._error
            if idle and self._queue:
                self._wake()  # the writer thread takes over the rest

    def unread(self) -> int | None:
        """Bytes given to `put` that the server has not read yet (queued here, in the pipe, or refused by a pipe
        it had closed); None once closed."""
        with self._lock:
            if self._closed:
                return None
            count = array.array("i", [0])
            try:
                fcntl.ioctl(self._fd, termios.FIONREAD, count)
            except OSError:
                return None
            return count[0] + self._queued + self._lost

    def close(self) -> None:
        """Write what fits without waiting, drop the rest, close the pipe (the server reads EOF); never blocks."""
        with self._lock:
            if self._closed:
                return
            self._write_some()
            self._closed = True
            self._queue.clear()
            self._queued = 0
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._wake()

    def _write_some(self) -> None:
        """Write queued bytes until the pipe is full (lock held; the fd is non-blocking, so this never waits)."""
        while self._queue and self._error is None:
            head = self._queue[0]
            try:
                written = os.write(self._fd, head)
            except BlockingIOError:
                return
            except OSError as exc:  # EPIPE: the server closed its stdin or died
                self._error = BrokenPipeError(exc.errno, f"server stdin is closed ({exc.strerror})")
                self._lost += self._queued  # never read: still counted by unread()
                self._queue.clear()
                self._queued = 0
                return
            self._queued -= written
            if written == len(head):
                self._queue.popleft()
            else:
                self._queue[0] = head[written:]

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except OSError:
            pass  # full: a wake-up is pending already

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    break
                fd, waiting = self._fd, bool(self._queue)
            poller = select.poll()
            poller.register(self._wake_r, select.POLLIN)
            if waiting:
                poller.register(fd, select.POLLOUT)
            poller.poll()
            try:
                os.read(self._wake_r, 4096)
            except BlockingIOError:
                pass
            with self._lock:
                if self._closed:
                    break
                self._write_some()
        os.close(self._wake_r)
        os.close(self._wake_w)
