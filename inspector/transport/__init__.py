"""Transport: what carries JSON-RPC lines between the inspector and one server, stdio or HTTP.

Every transport has the surface of `Transport`, so the one Client (inspector/client/) drives a server process
and an HTTP connection the same way. The shared types live here, so that no transport imports another.
"""

from __future__ import annotations

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


def __getattr__(name: str):
    """`Transport` and `HttpTransport` (transport/surface.py), loaded on first use: they are typing.Protocols, and
    typing is an import every start would pay for what only readers, type checkers and a few tests look at."""
    if name in ("Transport", "HttpTransport"):
        from inspector.transport import surface

        return getattr(surface, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
