"""What the server offers: its state as the page's Server panel shows it, the paginated lists, and the modern
era's subscriptions/listen stream."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import eras
from inspector.transport.stdio import ExitInfo
from inspector.client.rpc import Client, Pending, RequestFailed

LIST_METHODS = (  # (capability, method, result key, state attribute)
    ("tools", "tools/list", "tools", "tools"),
    ("resources", "resources/list", "resources", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates", "resource_templates"),
    ("prompts", "prompts/list", "prompts", "prompts"),
)
MAX_LIST_PAGES = 1000  # a server that returns a nextCursor forever must not keep us busy forever
REOPEN_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0)
"""Seconds before each re-open of a dropped listen stream in a row (about a minute in all), then it stays closed
until the next connect: a server that is gone for good gets no endless retries."""


@dataclass
class ServerState:
    """What the page's server panel shows."""

    state: str = "idle"
    """idle, starting, initializing, running, unreachable (HTTP: the connection failed), exited, stopped, failed."""
    pid: int | None = None
    exit: ExitInfo | None = None
    error: str = ""
    protocol_version: str | None = None
    era: str | None = None
    """legacy (initialize handshake) or modern (2026-07-28: server/discover, per-request _meta)."""
    era_reason: str = ""
    """Why this era: what the server/discover probe saw, or that --protocol forced it."""
    supported_versions: list = field(default_factory=list)
    server_info: dict = field(default_factory=dict)
    capabilities: dict = field(default_factory=dict)
    instructions: str | None = None
    tools: list = field(default_factory=list)
    resources: list = field(default_factory=list)
    resource_templates: list = field(default_factory=list)
    prompts: list = field(default_factory=list)
    starts: int = 0
    log_level: str = "info"
    """The level last sent with logging/setLevel (the page's selector shows it)."""

    def snapshot(self) -> dict:
        """What the server offers, in the shape diff.diff_servers compares."""
        return {"serverInfo": self.server_info, "capabilities": self.capabilities,
                "instructions": self.instructions, "tools": self.tools, "resources": self.resources,
                "resourceTemplates": self.resource_templates, "prompts": self.prompts}

    def tool(self, name: str) -> dict | None:
        """The listed tool of that name."""
        for tool in self.tools:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool
        return None


def list_all(client: Client, method: str, key: str) -> list | None:
    """Every page of a list method (None when even the first page failed)."""
    items: list = []
    cursor = None
    for _ in range(MAX_LIST_PAGES):
        try:
            result = client.request(method, {"cursor": cursor} if cursor is not None else None).wait()
        except RequestFailed:
            return items or None
        if not isinstance(result, dict):
            return items
        page = result.get(key)
        if isinstance(page, list):
            items.extend(page)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return items
    return items


class Listener:
    """Modern era: the one open subscriptions/listen request, for list changes and the subscribed resources."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.resource_subscriptions: set[str] = set()
        """The resource URIs that subscriptions/listen asks updates for."""
        self.current: Pending | None = None
        self._generation = 0  # which listen is current: a drop or a re-open timer of an older one is ignored
        self._reopens = 0  # re-opens in a row since the server last showed it is alive
        client.on_notification.append(self._heard)

    def listen(self, server: ServerState, reopening: bool = False) -> Pending | None:
        """(Re)open the listen request; it stays open for the life of the connection (no timeout), and a new
        one replaces the old, which is cancelled. A stream that drops (the server restarted, the connection
        broke) is re-opened after a pause, with a row saying so."""
        if not reopening:
            self._reopens = 0
        self._generation += 1
        generation = self._generation
        capabilities = server.capabilities
        wanted: dict[str, Any] = {}
        for capability, flag in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                                 ("resources", "resourcesListChanged")):
            declared = capabilities.get(capability)
            if isinstance(declared, dict) and declared.get("listChanged"):
                wanted[flag] = True
        resources = capabilities.get("resources")
        if isinstance(resources, dict) and resources.get("subscribe") and self.resource_subscriptions:
            wanted["resourceSubscriptions"] = sorted(self.resource_subscriptions)
        old, self.current = self.current, None
        if old is not None and not old.done.is_set():
            if self.client.forget(old):
                self.client.cancel(old.id, "replaced by a new listen")
            self.client.finish(old, failure=RequestFailed("subscriptions/listen: replaced", reason="cancelled"))
        if not wanted or server.era != eras.MODERN:
            return None
        self.current = self.client.request("subscriptions/listen", {"notifications": wanted}, timeout=float("inf"),
                                           on_done=lambda pending: self._ended(pending, server, generation))
        return self.current

    def _ended(self, pending: Pending, server: ServerState, generation: int) -> None:
        """The listen request ended: a transport failure (not a stop, a restart or a replacement) re-opens it."""
        failure = pending.failure
        if generation != self._generation or failure is None or failure.reason != "transport":
            return
        if self._reopens >= len(REOPEN_DELAYS):
            self.client.event("transport", {"note": f"the subscriptions/listen stream dropped ({failure}); not "
                                                    f"re-opening it after {len(REOPEN_DELAYS)} tries: Restart "
                                                    "connects again"})
            return
        delay = REOPEN_DELAYS[self._reopens]
        self._reopens += 1
        self.client.event("transport", {"note": f"the subscriptions/listen stream dropped ({failure}); re-opening "
                                                f"it in {delay:g} s, so list changes keep coming"})
        timer = threading.Timer(delay, self._reopen, args=(server, generation))
        timer.daemon = True
        timer.start()

    def _reopen(self, server: ServerState, generation: int) -> None:
        if generation == self._generation:  # not replaced (a restart, a new subscription) in the meantime
            self.listen(server, reopening=True)

    def _heard(self, msg: dict) -> None:
        """A notification: the server is alive, so a later drop starts the re-open pauses afresh."""
        self._reopens = 0
