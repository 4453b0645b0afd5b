"""REGIONS: each page region the server re-renders and pushes, and the signal names that ask for it.

A region is (target id, partial, context builder). The websocket (live.py) and the views push only through this
table, keyed by the part of a typed Change (session/changes.py) that the services put on the store's feed; a
change with an id (a call, a task call) hands it to the context builder. A context builder returns None when there
is nothing to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from flask import render_template

from inspector.inspector import Inspector
from inspector.session import changes
from inspector.session.changes import Change, Part
from inspector.web import get_inspector
from inspector.web.present import slug

HISTORY = 20


@dataclass(frozen=True)
class Region:
    """One swappable place in the page."""

    target: str
    """The CSS selector, formatted with the context (e.g. "#call-{call.id}")."""
    partial: str
    context: Callable[[Inspector, str], dict | None]
    """(services, the signal's id or "") → the partial's context, or None to push nothing."""


def history_of(calls, name: str) -> list:
    """A tool's finished calls, newest first (a pending one is shown above the list, and pushed when done)."""
    finished = [c for c in calls.calls.values() if c.tool == name and c.state != "pending"]
    return sorted(finished, key=lambda c: c.id, reverse=True)[:HISTORY]


def _call(inspector: Inspector, key: str) -> dict | None:
    call = inspector.calls.calls.get(int(key)) if key.isdigit() else None
    return None if call is None else {"call": call, "poll": False}


def _history(inspector: Inspector, key: str) -> dict | None:
    call = inspector.calls.calls.get(int(key)) if key.isdigit() else None
    if call is None:
        return None
    return {"tool_name": call.tool, "tool_slug": slug(call.tool), "history": history_of(inspector.calls, call.tool)}


def _task_call(inspector: Inspector, key: str) -> dict | None:
    call = inspector.tasks.call(int(key)) if key.isdigit() else None
    return None if call is None else {"tasks_part": "call", "task_call": call}


def _server(inspector: Inspector, key: str) -> dict:
    return {"server": inspector.session.server, "command": inspector.session.command}


def _lists(inspector: Inspector, key: str) -> dict:
    return {"server": inspector.session.server}


SERVER = Region("#server-panel", "partials/_server.html", _server)
TOOLS = Region("#tools-list", "partials/_tools.html", lambda i, _: {"tools": i.session.server.tools})
WATCH = Region("#watch-status", "partials/_watch.html", lambda i, _: {})
ASKS = Region("#asks-panel", "partials/_asks.html", lambda i, _: {})
ASK_BANNER = Region("#ask-banner", "partials/_ask_banner.html", lambda i, _: {})
PROBLEMS = Region("#problems", "partials/_problems.html", lambda i, _: {})
REPLAY = Region("#replay-report", "partials/_replay.html",
                lambda i, _: {"run": i.sharing.replay if i.sharing else None})
CALL = Region("#call-{call.id}", "partials/_call.html", _call)
CALL_HISTORY = Region("#history-{tool_slug}", "partials/_history.html", _history)
RESOURCES = Region("#resources-list", "partials/_resources_list.html", _lists)
RESOURCE_TEMPLATES = Region("#resource-templates-list", "partials/_resource_templates_list.html", _lists)
PROMPTS = Region("#prompts-list", "partials/_prompts_list.html", _lists)
TASKS = Region("#tasks-panel", "partials/_tasks.html", lambda i, _: {"tasks_part": "panel"})
TASK_CALL = Region("#task-call-{task_call.id}", "partials/_tasks.html", _task_call)

REGIONS: dict[Part, tuple[Region, ...]] = {
    # The server re-renders everything that shows what it offers (the Tasks panel shows once it offers tasks).
    Part.SERVER: (SERVER, RESOURCES, RESOURCE_TEMPLATES, PROMPTS, TASKS),
    Part.TOOLS: (TOOLS,),
    Part.WATCH: (WATCH,),
    Part.ASKS: (ASKS, ASK_BANNER),
    Part.PROBLEMS: (PROBLEMS,),
    Part.REPLAY: (REPLAY,),
    Part.RESOURCES: (RESOURCES,),
    Part.RESOURCE_TEMPLATES: (RESOURCE_TEMPLATES,),
    Part.PROMPTS: (PROMPTS,),
    Part.TASKS: (TASKS,),
    Part.CALL: (CALL, CALL_HISTORY),
    Part.TASK_CALL: (TASK_CALL,),
}

PAGE_LOAD = (changes.SERVER, changes.TOOLS, changes.WATCH, changes.PROBLEMS, changes.ASKS)
"""What a (re)connected websocket re-renders besides the rows."""
CATCH_UP = (changes.SERVER, changes.TOOLS, changes.WATCH)
"""What a connection re-renders when it fell so far behind that some changes were dropped."""


def push(region: Region, key: str = "", **context) -> str:
    """One region re-rendered and wrapped for htmx 4 to swap in place of its target ("" when nothing to show)."""
    built = region.context(get_inspector(), key)
    if built is None:
        return ""
    built.update(context)
    return render_template("partials/_push.html", target=region.target.format(**built), swap="outerHTML",
                           partial=region.partial, **built)


def pushes(change: Change) -> list[str]:
    """Every push a change asks for (none for what this page does not show)."""
    key = "" if change.id is None else str(change.id)
    return [html for html in (push(region, key) for region in REGIONS.get(change.part, ())) if html]
