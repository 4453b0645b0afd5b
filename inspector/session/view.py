"""SessionView: what the page reads of a session, offered by the live `Session` and by a viewed recording.

The views and the templates' context builders read only these names, so a read-only `RecordedSession` can stand
in for a live `Session` without the views guessing (no `getattr(session, name, default)`). Actions (call, stop,
restart, ...) need the live `Session`: the page refuses every POST while viewing a recording (web/views/page.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from inspector.recording.store import Store
    from inspector.client.offer import ServerState
    from inspector.session.calls import Call


class SessionView(Protocol):
    """The read side of a session, as the page shows it."""

    store: Store
    server: ServerState
    command: list[str]
    cwd: str | None
    timeout: float
    advertise: dict[str, bool]
    roots: list[dict]
    url: str | None
    """The server's URL when it is reached over HTTP, else None."""
    http_headers: list[tuple[str, str]]
    auth_needed: dict | None

    @property
    def http_transport(self) -> str | None: ...

    def tool(self, name: str) -> dict | None: ...



class CallsView(Protocol):
    """The read side of the page's tool calls: the live `Calls` service, or a viewed recording's calls."""

    calls: dict[int, Call]
    last_arguments: dict[str, str]
    """Per tool, the arguments last typed (inputs survive reloads)."""
    tool_modes: dict[str, str]
    """Per tool, "form" or "json"."""
