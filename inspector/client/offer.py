"""What the server offers: its state as the page's Server panel shows it, the paginated lists, and the modern
era's subscriptions/listen stream."""

from __future__ import annotations

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

    def listen(self, server: ServerState) -> Pending | None:
        """(Re)open the listen request; it stays open for the life of the connection (no timeout), and a new
        one replaces the old, which is cancelled."""
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
        self.current = self.client.request("subscriptions/listen", {"notifications": wanted}, timeout=float("inf"))
        return self.current
