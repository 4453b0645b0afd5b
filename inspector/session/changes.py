"""What changed: the typed events the page's services put on the store's change feed (`Store.signal`).

The services say *what* changed (the server's offer, one tool call, the asks ...), never *where* it is shown: the
web layer (web/regions.py) maps each Change to the page regions that show it, so nothing below inspector/web/
knows a region's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Part(Enum):
    """A part of the session the page shows."""

    SERVER = "server"
    """The connection, the handshake, or the server's whole offer."""
    TOOLS = "tools"
    RESOURCES = "resources"
    RESOURCE_TEMPLATES = "resource_templates"
    PROMPTS = "prompts"
    ASKS = "asks"
    """Server requests waiting for the user (sampling, elicitation, input rounds)."""
    PROBLEMS = "problems"
    WATCH = "watch"
    """The file watcher and the restarter's state."""
    REPLAY = "replay"
    TASKS = "tasks"
    CALL = "call"
    """One of the page's tool calls: `id` is its number."""
    TASK_CALL = "task_call"
    """One call run as a task: `id` is its number."""


@dataclass(frozen=True)
class Change:
    """One change: the part, and which one of it where a part has many."""

    part: Part
    id: int | None = None


SERVER = Change(Part.SERVER)
TOOLS = Change(Part.TOOLS)
RESOURCES = Change(Part.RESOURCES)
PROMPTS = Change(Part.PROMPTS)
ASKS = Change(Part.ASKS)
PROBLEMS = Change(Part.PROBLEMS)
WATCH = Change(Part.WATCH)
REPLAY = Change(Part.REPLAY)
TASKS = Change(Part.TASKS)


def call(call_id: int) -> Change:
    """One tool call changed (progress, an answer, a cancel)."""
    return Change(Part.CALL, call_id)


def task_call(call_id: int) -> Change:
    """One task call changed."""
    return Change(Part.TASK_CALL, call_id)


def listed(attribute: str) -> Change:
    """A list of the server's offer changed: "tools", "resources", "resource_templates" or "prompts"."""
    return Change(Part(attribute))
