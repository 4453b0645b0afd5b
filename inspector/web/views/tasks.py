"""The Tasks panel and the task controls: routes, websocket pushes, and the tool form's "Run as a task" options.

Every control is a POST that answers at once with the re-rendered place it was pressed in (the panel, a
task-augmented call's card, or a task card inside a plain call); the answers that come later are pushed over the
websocket (regions `tasks` and `task-call:<id>`). tasks/result blocks on the server until the task ends, so it is
sent with a callback and a long timeout, and the page says "waiting for the result" until it arrives.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request

from inspector.protocol import content
from inspector.session.tasks import DEFAULT_TTL_MS
from inspector.protocol.tasks import TASK_EXTENSION, task_controls, tool_task_support
from inspector.web import get_inspector, regions

bp = Blueprint("tasks", __name__)

CONTROL_WAIT = 1.0
"""How long a get or cancel POST waits for the server before answering with "waiting" (the push follows)."""
RESULT_WAIT = 0.3
"""tasks/result: just long enough to show an already finished task's result in the answer itself."""
PLACES = ("panel", "call", "entry")
MAX_TTL_MS = 7 * 24 * 3600 * 1000


# -- template helpers ----------------------------------------------------------------------------------------

def server_offers_tasks(server) -> bool:
    """Whether the server declared tasks for tool calls (2025-11-25) or the tasks extension (2026-07-28)."""
    caps = server.capabilities if isinstance(server.capabilities, dict) else {}
    extensions = caps.get("extensions")
    if isinstance(extensions, dict) and TASK_EXTENSION in extensions:
        return True
    tasks = caps.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and "call" in tools


@bp.app_template_global()
def tasks_offered() -> bool:
    """Whether the connected server offers tasks for tool calls."""
    return server_offers_tasks(get_inspector().session.server)


def task_form(tool: dict) -> dict:
    """The tool form's "Run as a task" options: shown, fixed (required), ticked, TTL, and a note."""
    session = get_inspector().session
    support = tool_task_support(tool)
    offered = server_offers_tasks(session.server)
    prefs = get_inspector().tasks.prefs.get(tool.get("name"), {})
    note = ""
    if support == "required":
        note = "This tool requires task-augmented execution."
    elif support == "forbidden" and offered:
        note = ("The tool does not declare task support (execution.taskSupport): "
                "a task request shows how the server copes.")
    elif not offered:
        note = "The server does not declare tasks for tool calls."
    return {"show": support in ("optional", "required") or offered, "support": support,
            "required": support == "required", "checked": support == "required" or bool(prefs.get("task")),
            "ttl": prefs.get("ttl", DEFAULT_TTL_MS), "note": note}


def posted_task(tool: dict, values: dict) -> tuple[bool, int | None, str | None]:
    """(run as a task, TTL in ms, problem) from a posted tool form; remembered for the next render."""
    wanted = values.get("task") == "on" or tool_task_support(tool) == "required" and values.get("mode") != "api"
    text = (values.get("task_ttl") or "").strip()
    ttl, problem = DEFAULT_TTL_MS, None
    if text:
        try:
            ttl = int(text)
        except ValueError:
            ttl = -1
        if not 0 <= ttl <= MAX_TTL_MS:
            problem = f"Task TTL must be a whole number of milliseconds from 0 to {MAX_TTL_MS}, not {text!r}"
    if "task" in values or "task_ttl" in values:
        get_inspector().tasks.prefs[tool["name"]] = {"task": wanted, "ttl": ttl if problem is None else DEFAULT_TTL_MS}
    return wanted, (ttl if problem is None else None), problem


@bp.app_template_global()
def task_controls_for(entry) -> list[str]:
    """The buttons for a task now: the connected era's controls, none for a task of an earlier server process."""
    session = get_inspector().session
    if get_inspector().readonly or session.server.era not in ("legacy", "modern"):
        return []
    if not get_inspector().tasks.current(entry):
        return []
    return task_controls(session.server.era, entry.view)


@bp.app_template_global()
def task_result_view(entry) -> dict:
    """A task's final result, in the same rich view as a tool call's result."""
    tool = get_inspector().session.tool(entry.tool) if entry.tool else None
    return content.result_view(entry.result, tool, f"/tasks/content/task/{entry.key}")


@bp.app_template_global()
def task_call_view(call) -> dict:
    """A task-augmented call that was answered with a plain result after all."""
    return content.result_view(call.result, get_inspector().session.tool(call.tool), f"/tasks/content/call/{call.id}")


@bp.app_template_global()
def call_task(call):
    """The task a plain tool call was answered with (None for an ordinary result)."""
    return get_inspector().tasks.adopt_call(call)


# -- rendering -----------------------------------------------------------------------------------------------

def render_place(place: str, entry=None, call=None) -> str:
    """The panel, a task-augmented call's card, or one task's card."""
    if place == "call" and call is not None:
        return render_template("partials/_tasks.html", tasks_part="call", task_call=call)
    if place == "entry" and entry is not None:
        return render_template("partials/_tasks.html", tasks_part="entry", entry=entry)
    return render_template("partials/_tasks.html", tasks_part="panel")


def _error(message: str, status: int) -> Response:
    return Response(render_template("partials/_error.html", message=message), status=status)


# -- routes --------------------------------------------------------------------------------------------------

@bp.get("/tasks")
def tasks_panel():
    return render_place("panel")


@bp.get("/tasks/calls/<int:call_id>")
def task_call_state(call_id: int):
    call = get_inspector().tasks.call(call_id)
    if call is None:
        return _error(f"no task call #{call_id}", 404)
    wait = min(max(request.args.get("wait", 0, type=float), 0.0), 60.0)
    if wait:
        call.wait_change(None, wait)
    return render_place("call", call=call)


@bp.post("/tasks/<int:key>/<any(get, result, cancel):control>")
def task_control(key: int, control: str):
    tasks = get_inspector().tasks
    entry = tasks.get(key)
    if entry is None:
        return _error(f"no task #{key} in this page (it may have been dropped)", 404)
    place = request.form.get("in", "panel")
    place = place if place in PLACES else "panel"
    pending = tasks.control(key, control)
    if pending is not None:
        pending.done.wait(RESULT_WAIT if control == "result" else CONTROL_WAIT)
    call = tasks.call(entry.call_id) if entry.call_id is not None else None
    html = render_place(place, entry=entry, call=call)
    if place != "panel":  # the panel shows the same task: keep it in step (an htmx 4 partial beside the swap)
        html += regions.push(regions.TASKS)
    return html


@bp.post("/tasks/lookup")
def task_lookup():
    task_id = (request.form.get("task_id") or "").strip()
    tasks = get_inspector().tasks
    if not task_id:
        tasks.problem = "type a task id to look it up"
    else:
        pending = tasks.lookup(task_id)
        if pending is not None:
            pending.done.wait(CONTROL_WAIT)
    return render_place("panel")


@bp.get("/tasks/content/<any(task, call):kind>/<int:source>/<int:index>")
def task_content(kind: str, source: int, index: int):
    """A binary content block of a task's result, served like panels.content_bytes serves a call's."""
    tasks = get_inspector().tasks
    if kind == "task":
        entry = tasks.get(source)
        result = entry.result if entry is not None else None
    else:
        call = tasks.call(source)
        result = call.result if call is not None else None
    blob = content.blob_of(content.item_at("call", result, index))
    if blob is None:
        abort(404, description="this content is no longer held by mcp-inspect")
    data, mime, name = blob
    response = Response(data, mimetype="application/octet-stream")
    if content.is_audio(mime):
        response.headers["Content-Type"] = mime
    else:
        response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response

