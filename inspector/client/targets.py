"""What the inspector talks to, as values: a command over stdio or a URL over HTTP, and the header text the page
edits. Pure: no transport is built here (client/connect.py does that), so the page may use these freely. The user's
header values stay in these values and in the connection: recordings and the page only ever see their names.
"""

from __future__ import annotations

from collections.abc import Iterable

from inspector.protocol.json import REDACTED
from inspector.protocol.plain import Plain

HTTP_TRANSPORTS = ("auto", "streamable-http", "sse")


class TargetError(ValueError):
    """A --url or --header value that cannot be used; one line for the user."""


class HeaderError(TargetError):
    """A --header value that is not `Name: value`."""


def check_url(url: str) -> str:
    """The --url value, if it is http(s) with a host; raises TargetError."""
    from urllib.parse import urlsplit  # for URLs only: a command over stdio never needs it

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetError(f"--url takes an http:// or https:// URL with a host, got {url!r}")
    return url


def parse_headers(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Every --header value as (name, value); raises HeaderError on the first bad one."""
    return tuple(parse_header(item) for item in items)


class HttpTarget(Plain):
    """A server reached over HTTP: --url, --transport and --header as one value."""

    __slots__ = ("url", "transport", "headers")
    __hash__ = Plain.field_hash

    def __init__(self, url: str, transport: str = "auto", headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.url, self.transport, self.headers = url, transport, headers

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
    if not value:  # most often an unset shell variable ("Authorization: $TOKEN"): sent, it fails far from here
        raise HeaderError(f"--header {name}: the value is empty (is the shell variable in it set?)")
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
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return "-".join(part for part in (parts.hostname or "server", str(parts.port or ""), parts.path.strip("/"))
                    if part)


class StdioTarget(Plain):
    """A server command run over stdio."""

    __slots__ = ("command", "cwd", "env")
    __hash__ = Plain.field_hash

    def __init__(self, command: tuple[str, ...], cwd: str | None = None, env: dict | None = None) -> None:
        self.command, self.cwd, self.env = command, cwd, env
