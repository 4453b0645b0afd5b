"""The surface every transport has (`StdioProcess`, `HttpConnection`), declared as typing.Protocols so a reader
need not guess; re-exported by `inspector.transport` on first use."""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from inspector.transport import ExitInfo


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
