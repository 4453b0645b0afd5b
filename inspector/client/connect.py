"""The one place a target (client/targets.py) becomes a transport.

The page's Session and the headless commands drive a transport with the surface of `transport.Transport` through
a Client; `transport_for` builds either one wired to the client's public callbacks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from inspector.client.targets import HttpTarget, StdioTarget

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any
    from inspector.client.rpc import Client

def http_connection(url: str, *, transport: str, headers: Iterable[tuple[str, str]],
                    on_message: Callable[[bytes, dict], None], on_event: Callable[[str, dict], None],
                    on_send_failed: Callable[[Any, str], None], on_exit: Callable[[Any], None],
                    on_session_expired: Callable[[], None] | None = None, refuse_ports: Iterable[int] = ()):
    """An HttpConnection (imported here, late: stdio-only runs never load httpx)."""
    from inspector.transport.http import HttpConnection

    return HttpConnection(url, headers=dict(headers), transport=transport, on_message=on_message,
                          on_event=on_event, on_send_failed=on_send_failed, on_exit=on_exit,
                          on_session_expired=on_session_expired, refuse_ports=refuse_ports)


def transport_for(target: "StdioTarget | HttpTarget", client: "Client", *, on_exit: Callable[[Any, Any], None],
                  on_event: Callable[[str, dict], None] | None = None,
                  on_session_expired: Callable[[], None] | None = None, refuse_ports: Iterable[int] = (),
                  headers: Iterable[tuple[str, str]] | None = None, spawned: Any = None):
    """The transport for a target, wired to the client's public callbacks; `on_exit(transport, info)`.

    Not started: the caller starts it (and records a spawn failure its own way). `spawned`: what
    stdio.spawn_early gave for a command target, which the transport's start takes instead of spawning.
    """
    holder: list[Any] = []

    def exited(info) -> None:
        on_exit(holder[0], info)
    if isinstance(target, HttpTarget):
        transport = http_connection(
            target.url, transport=target.transport, headers=target.headers if headers is None else headers,
            on_message=client.on_line, on_event=on_event or client.event,
            on_send_failed=lambda request_id, why: client.give_up(request_id, why, "transport"),
            on_exit=exited, on_session_expired=on_session_expired, refuse_ports=refuse_ports)
    else:
        from inspector.transport.stdio import StdioProcess

        transport = StdioProcess(list(target.command), cwd=target.cwd, env=target.env, on_stdout=client.on_line,
                                 on_stdout_batch=client.on_lines,
                                 on_stderr=client.on_stderr_line, on_exit=exited,
                                 on_spawn=lambda pid: client.event("spawn", {"pid": pid}), spawned=spawned)
    holder.append(transport)
    return transport


class Connection:
    """A headless command's server: one target started and stopped under a Client, each exit recorded."""

    def __init__(self, client: "Client", target: "StdioTarget | HttpTarget",
                 note: Callable[[str], None] | None = None, spawned: Any = None) -> None:
        self.client, self.target = client, target
        self.note = note
        """Told in one line when the era probe falls back (a headless command prints it on stderr)."""
        self._spawned = spawned
        """What stdio.spawn_early gave for the target's command: the first start takes it; a restart spawns."""
        self.exit_info: Any = None
        self.exit_recorded = threading.Event()

    @property
    def exited(self) -> bool:
        """The server is gone (or was never started)."""
        transport = self.client.transport
        return transport is None or transport.exited.is_set()

    def start(self) -> int:
        """Spawn the server or open the connection (again, after a close); raises SpawnError in one line."""
        from inspector.transport.stdio import SpawnError

        self.exit_info = None
        self.exit_recorded.clear()
        spawned, self._spawned = self._spawned, None
        transport = transport_for(self.target, self.client, on_exit=self._on_exit, spawned=spawned)
        self.client.attach(transport)  # before it starts: its first line may be a request to answer
        if isinstance(self.target, HttpTarget):
            self.client.event("connect", {"url": self.target.url, "transport": self.target.transport})
        try:
            return transport.start() or 0
        except SpawnError as exc:
            self.client.attach(None)
            if isinstance(self.target, HttpTarget):
                self.client.event("transport-error", {"error": str(exc), "url": self.target.url})
            else:
                self.client.event("spawn-failed", {"error": str(exc), "command": list(self.target.command)})
            raise

    def fall_back(self, why: str, how: str) -> bool:
        """The era probe got no modern answer: a fresh server for initialize (handshake.Restart)."""
        from inspector.transport.stdio import SpawnError

        if self.note is not None:
            self.note(f"{why}; falling back to initialize")
        self.close(stdin_grace=0.5, reason=f"{why}; {how} for the initialize handshake")
        try:
            self.start()
        except SpawnError:
            return False
        return True

    def _on_exit(self, transport: Any, info: Any) -> None:
        masker = getattr(self.client.sink, "masker", None)
        if masker is not None:  # the stderr tail goes into failure messages and check's report
            info = masker.exit_info(info)
        detail = {"code": info.code, "signal": info.signal, "stderr_tail": info.stderr_tail}
        if info.reason:
            detail["reason"] = info.reason
        self.client.event("exit", detail)
        if transport is self.client.transport:
            self.exit_info = info
            why = f"{info.reason} before the server answered" if info.reason else \
                f"the server {info.describe()} before answering"
            self.client.fail_all(why, "exited", gone=True)
        self.exit_recorded.set()

    def close(self, stdin_grace: float = 2.0, reason: str = "done") -> None:
        """The shutdown ladder; returns once the exit is recorded (so it precedes a session-end)."""
        transport = self.client.transport
        if transport is None:
            return
        if not transport.exited.is_set():
            self.client.event("stop", {"reason": reason})
        transport.stop(stdin_grace=stdin_grace)
        self.exit_recorded.wait(5.0)
