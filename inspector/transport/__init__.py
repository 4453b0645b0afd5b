"""Transport: what carries JSON-RPC lines between the inspector and one server, stdio or HTTP.

Every transport has the surface of `Transport`, so the one Client (inspector/client/) drives a server process
and an HTTP connection the same way. The shared types live here, so that no transport imports another.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from inspector.protocol.plain import Plain


class SpawnError(Exception):
    """The transport could not start: the server command cannot run, or the server's URL cannot be reached.

    One line in words, for the user. Callers catch this one type for both transports.
    """


class ExitInfo(Plain):
    """How the server process ended."""

    __slots__ = ("code", "signal", "stderr_tail", "reason")

    def __init__(self, code: int | None, signal: str | None, stderr_tail: list[str] | None = None,
                 reason: str = "") -> None:
        self.code, self.signal = code, signal
        self.stderr_tail = [] if stderr_tail is None else stderr_tail
        self.reason = reason
        """How a connection without a process ended (HTTP), in words; empty for a process."""

    def describe(self) -> str:
        """'exited with code 3', 'killed by SIGSEGV', or the reason when one is set."""
        if self.reason:
            return self.reason
        return f"killed by {self.signal}" if self.signal else f"exited with code {self.code}"


@runtime_checkable
class Transport(Protocol):
    """One run of a server, as the one Client drives it (`StdioProcess`, `HttpConnection`).

    Incoming lines, stderr and the exit are reported through callbacks given to the constructor; on_exit is
    called once, before `exited` is set.
    """

    @property
    def pid(self) -> int | None:
        """The server's process id (also its process group id); None when there is no process (HTTP)."""

    exited: threading.Event
    """Set once the server is gone and its exit has been reported."""
    exit_info: ExitInfo | None
    """How it ended; None while it runs."""

    def start(self) -> int | None:
        """Spawn or connect; returns the pid (None without a process). Raises SpawnError in one line."""

    def send(self, data: bytes) -> None:
        """Hand one JSON-RPC line to the server and return at once: it is written (or POSTed) later if it cannot
        be now, so a server that stops reading never blocks the caller. Raises BrokenPipeError once the server
        is gone, or another OSError when it cannot take more (a stdio server that stopped reading its stdin)."""

    def stop(self, stdin_grace: float = 2.0) -> ExitInfo | None:
        """End the run (the shutdown ladder, or closing the connection); returns how it ended.

        Never waits on an unfinished send: a stdio server's stdin is closed at once, whatever is still queued."""


@runtime_checkable
class HttpTransport(Transport, Protocol):
    """A transport to a URL: what the callers ask of it besides the `Transport` surface (they test with hasattr)."""

    url: str
    """The URL the user gave."""
    chosen_transport: str | None
    """streamable-http or sse once known; None while auto has not decided."""

    def request_meta(self, msg: Any) -> dict:
        """How `msg` will travel (method, URL, headers with the user's values redacted), for the recording."""
