"""What the inspector talks to: a command over stdio or a URL over HTTP, and the one place a target becomes a
transport.

The page's Session and the headless commands drive a transport with the surface of StdioProcess through a
Client; `transport_for` builds either one wired to the client's public callbacks. The user's header values stay here and in the connection:
recordings and the page only ever see their names.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import urlsplit

from inspector.protocol.json import REDACTED

if TYPE_CHECKING:
    from inspector.client.rpc import Client

HTTP_TRANSPORTS = ("auto", "streamable-http", "sse")


class TargetError(ValueError):
    """A --url or --header value that cannot be used; one line for the user."""


class HeaderError(TargetError):
    """A --header value that is not `Name: value`."""


def check_url(url: str) -> str:
    """The --url value, if it is http(s) with a host; raises TargetError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetError(f"--url takes an http:// or https:// URL with a host, got {url!r}")
    return url


def parse_headers(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Every --header value as (name, value); raises HeaderError on the first bad one."""
    return tuple(parse_header(item) for item in items)


@dataclass(frozen=True)
class HttpTarget:
    """A server reached over HTTP: --url, --transport and --header as one value."""

    url: str
    transport: str = "auto"
    headers: tuple[tuple[str, str], ...] = ()

    def recorded(self) -> dict:
        """The recording header's `target`: the header names only, their values redacted."""
        return {"transport": self.transport if self.transport != "auto" else "http", "url": self.url,
                "headers": redacted(self.headers)}


def parse_header(text: str) -> tuple[str, str]:
    """`Name: value` (as curl takes it) into (name, value); raises HeaderError."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name or any(c in name for c in " \t\r\n()<>@,;\\\"/[]?={}"):
        raise HeaderError(f"--header takes 'Name: value', got {text!r}")
    value = value.strip()
    if "\r" in value or "\n" in value:
        raise HeaderError(f"--header {name}: the value may not contain a line break")
    return name, value


def parse_headers_text(text: str, current: Iterable[tuple[str, str]] = ()) -> tuple[list[tuple[str, str]], list[str]]:
    """The page's header editor: one `Name: value` per line; a value left as [REDACTED] keeps the current one."""
    known = {name.lower(): value for name, value in current}
    headers: list[tuple[str, str]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            name, value = parse_header(line)
        except HeaderError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if value == REDACTED:
            if name.lower() not in known:
                problems.append(f"line {number}: {name} has no value yet (type it instead of {REDACTED})")
                continue
            value = known[name.lower()]
        headers.append((name, value))
    return headers, problems


def headers_text(headers: Iterable[tuple[str, str]]) -> str:
    """The editor's text: names with their values hidden."""
    return "\n".join(f"{name}: {REDACTED}" for name, _ in headers)


def redacted(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header names with the values hidden, for recordings and the page."""
    return {name: REDACTED for name, _ in headers}


def url_name(url: str) -> str:
    """A short name for an HTTP target (the recording's file name): host, port and path."""
    parts = urlsplit(url)
    return "-".join(part for part in (parts.hostname or "server", str(parts.port or ""), parts.path.strip("/"))
                    if part)


def http_connection(url: str, *, transport: str, headers: Iterable[tuple[str, str]],
                    on_message: Callable[[bytes, dict], None], on_event: Callable[[str, dict], None],
                    on_send_failed: Callable[[Any, str], None], on_exit: Callable[[Any], None],
                    on_session_expired: Callable[[], None] | None = None, refuse_ports: Iterable[int] = ()):
    """An HttpConnection (imported here, late: stdio-only runs never load httpx)."""
    from inspector.transport.http import HttpConnection

    return HttpConnection(url, headers=dict(headers), transport=transport, on_message=on_message,
                          on_event=on_event, on_send_failed=on_send_failed, on_exit=on_exit,
                          on_session_expired=on_session_expired, refuse_ports=refuse_ports)


@dataclass(frozen=True)
class StdioTarget:
    """A server command run over stdio."""

    command: tuple[str, ...]
    cwd: str | None = None
    env: dict | None = None


def transport_for(target: "StdioTarget | HttpTarget", client: "Client", *, on_exit: Callable[[Any, Any], None],
                  on_event: Callable[[str, dict], None] | None = None,
                  on_session_expired: Callable[[], None] | None = None, refuse_ports: Iterable[int] = (),
                  headers: Iterable[tuple[str, str]] | None = None):
    """The transport for a target, wired to the client's public callbacks; `on_exit(transport, info)`.

    Not started: the caller starts it (and records a spawn failure its own way).
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
                                 on_stderr=client.on_stderr_line, on_exit=exited,
                                 on_spawn=lambda pid: client.event("spawn", {"pid": pid}))
    holder.append(transport)
    return transport


class Connection:
    """A headless command's server: one target started and stopped under a Client, each exit recorded."""

    def __init__(self, client: "Client", target: "StdioTarget | HttpTarget",
                 note: Callable[[str], None] | None = None) -> None:
        self.client, self.target = client, target
        self.note = note
        """Told in one line when the era probe falls back (a headless command prints it on stderr)."""
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
        transport = transport_for(self.target, self.client, on_exit=self._on_exit)
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
