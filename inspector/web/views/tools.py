"""The Tools workbench: a form generated from each tool's inputSchema (or its JSON), calls, history, re-runs.

The form posts urlencoded pairs named by the forms package's contract; the order of the pairs matters (array rows are
taken in the order they appear), so the raw body is parsed here rather than through Flask's MultiDict.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import parse_qsl

from flask import Blueprint, abort, render_template, request

from inspector.protocol import forms
from inspector.protocol.json import loads
from inspector.web import get_inspector
from inspector.web.regions import history_of
from inspector.web.views import tasks as task_views

bp = Blueprint("tools", __name__)

TASK_CALL_WAIT = 0.3
"""A CreateTaskResult comes at once: usually the answer to a task call can already show the task."""


def _pairs() -> list[tuple[str, str]]:
    return parse_qsl(request.get_data(as_text=True), keep_blank_values=True)


def _schema(tool: dict) -> dict:
    schema = tool.get("inputSchema")
    return schema if isinstance(schema, dict) else {"type": "object"}


def _dump(arguments) -> str:
    return json.dumps(arguments, ensure_ascii=False, indent=2)


def render_tool(tool: dict, *, mode: str | None = None, arguments=None, text: str | None = None,
                errors: dict | None = None, problem: str | None = None, call=None, task_call=None,
                status: int = 200):
    """The tool's workbench: form or JSON editor pre-filled with the given (or the last) arguments."""
    session, calls = get_inspector().session, get_inspector().calls
    name = tool["name"]
    mode = mode or calls.tool_modes.get(name, "form")
    calls.tool_modes[name] = mode
    if arguments is None and text is None:
        text = calls.last_arguments.get(name)
        try:
            arguments = loads(text) if text else None
        except ValueError:
            arguments = None
    schema = _schema(tool)
    form = None
    if mode == "form":
        form = forms.form_from_arguments(schema, arguments) if isinstance(arguments, dict) \
            else forms.build_form(schema)
    elif text is None:
        text = _dump(arguments if arguments is not None else {})
    # Decided before the history is read: if the call finishes in between, the page still polls it once, and
    # the poll's answer brings the history with this call in it.
    call_was_pending = call is not None and call.state == "pending"
    history = history_of(calls, name)
    return render_template("partials/_tool_detail.html", tool=tool, mode=mode, form=form, arguments_text=text or "{}",
                           errors=errors or {}, problem=problem, call=call, history=history,
                           call_was_pending=call_was_pending, session_timeout=f"{session.timeout:g}",
                           session_tools=session.server.tools, task_call=task_call,
                           task_form=task_views.task_form(tool)), status


def _read_arguments(tool: dict, mode: str, pairs) -> tuple[object, str | None, dict]:
    """(arguments, problem, conversion errors) from a posted form or JSON editor."""
    if mode == "form":
        result = forms.arguments_from_form(_schema(tool), pairs)
        return result.arguments, None, dict(result.errors)
    text = dict(pairs).get("arguments", "")
    try:
        arguments = loads(text) if text.strip() else {}
    except ValueError as exc:
        return None, f"Arguments (JSON) is not valid JSON: {exc}", {}
    if not isinstance(arguments, dict):
        return None, "Arguments (JSON) must be a JSON object, like {\"text\": \"hello\"}", {}
    return arguments, None, {}


def _timeout(text: str | None) -> float | None:
    """The per-call timeout typed in the page (blank or nonsense: the global --timeout)."""
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and 0 < value <= 86400 else None


def _posted(tool: dict) -> tuple[str, str, object, str | None]:
    """(mode, the JSON editor's text, arguments, problem) of a posted tool form (the toggle and the draft saver)."""
    pairs = _pairs()
    values = dict(pairs)
    mode = values.get("mode", "form")
    arguments, problem, _ = _read_arguments(tool, mode, pairs)
    return mode, values.get("arguments", ""), arguments, problem


def tool_or_404(name: str) -> dict:
    tool = get_inspector().session.tool(name)
    if tool is None:
        abort(404, description=f"the server lists no tool named {name!r}")
    return tool


# Each tool route has two addresses. The page uses /tool...?name=<url_part>: a server-given name in a query value
# cannot become another path (a name of "../export", "..", "a/b" or "x/call" in a path segment can: the browser
# resolves dot segments, even percent-encoded ones, and Werkzeug decodes %2F before routing). The path form
# /tools/<name>... stays for API clients and scripts with plain names.
NAMED = {"defaults": {"name": None}}


def _name(name: str | None) -> str:
    """The tool's name: from the path, or (the page's form) from the query."""
    return request.args.get("name", "") if name is None else name


@bp.get("/tools/<path:name>")
@bp.get("/tool", **NAMED)
def tool_detail(name: str | None):
    if name is not None and name.endswith(("/call", "/form", "/draft")):
        abort(405)  # actions are POST only; without this the GET would look up a tool named "x/call"
    name = _name(name)
    tool = tool_or_404(name)
    restarter = get_inspector().restarter
    if restarter and request.args.get("auto") != "1":  # re-opened by the page itself: not yet looked at
        restarter.seen(name)
    # The tool's latest call comes back with it: a reload during a call shows it pending, then its result.
    return render_tool(tool, call=latest_call(get_inspector().calls, name))


@bp.get("/tool/version")
def tool_version_of():
    """The version of a tool's definition: the page re-opens an open tool when it changed (after a restart)."""
    return tool_version(tool_or_404(request.args.get("name", ""))), 200, {"Content-Type": "text/plain"}


def latest_call(calls, name: str):
    """The newest call of a tool made from the page, if any."""
    mine = [c for c in list(calls.calls.values()) if c.tool == name]
    return max(mine, key=lambda c: c.id) if mine else None


@bp.app_template_filter()
def tool_version(tool: dict) -> str:
    """A short digest of everything the server says about a tool (name, description, schemas, annotations)."""
    text = json.dumps(tool, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


@bp.post("/tools/<path:name>/form")
@bp.post("/tool/form", **NAMED)
def tool_toggle(name: str | None):
    """The JSON toggle: form → JSON editor and back, without losing input."""
    name = _name(name)
    tool = tool_or_404(name)
    task_views.posted_task(tool, dict(_pairs()))  # keeps "Run as a task" and its TTL across the toggle
    mode, text, arguments, problem = _posted(tool)
    if problem:  # invalid JSON cannot become a form: stay in the editor and say why
        return render_tool(tool, mode="json", text=text, problem=problem, status=422)
    get_inspector().calls.last_arguments[name] = json.dumps(arguments, ensure_ascii=False)
    return render_tool(tool, mode="json" if mode == "form" else "form", arguments=arguments)


@bp.post("/tools/<path:name>/draft")
@bp.post("/tool/draft", **NAMED)
def tool_draft(name: str | None):
    """Keep what the user typed, so switching tools or reloading does not lose it."""
    name = _name(name)
    tool = tool_or_404(name)
    task_views.posted_task(tool, dict(_pairs()))
    _, text, arguments, problem = _posted(tool)
    get_inspector().calls.last_arguments[name] = text if problem else json.dumps(arguments, ensure_ascii=False)
    return "", 204


@bp.post("/tools/<path:name>/call")
@bp.post("/tool/call", **NAMED)
def tool_call(name: str | None):
    name = _name(name)
    tool = tool_or_404(name)
    calls = get_inspector().calls
    if request.mimetype == "application/json":
        body = request.get_json(silent=True) or {}
        pairs = [("mode", "api"), ("arguments", json.dumps(body.get("arguments", {})))]
        task = body.get("task")
        if isinstance(task, dict):  # an API call asks for a task as the wire does: {"task": {"ttl": ms}}
            pairs += [("task", "on"), ("task_ttl", str(task.get("ttl", "")))]
    else:
        pairs = _pairs()
    values = dict(pairs)
    # The page always says its mode; a bare {"arguments": ...} post is an API call, sent as it is.
    mode = values.get("mode", "api")
    arguments, problem, errors = _read_arguments(tool, "form" if mode == "form" else "json", pairs)
    shown_mode = "form" if mode == "form" else "json"
    if problem:
        return render_tool(tool, mode="json", text=values.get("arguments", ""), problem=problem, status=422)
    if mode != "api":
        errors = {**forms.problems(_schema(tool), arguments), **errors}
        if errors and values.get("action") != "send-anyway":
            calls.last_arguments[name] = json.dumps(arguments, ensure_ascii=False)
            return render_tool(tool, mode=shown_mode, arguments=arguments, errors=errors, status=422)
    as_task, ttl, task_problem = task_views.posted_task(tool, values)
    if as_task:
        if task_problem:
            return render_tool(tool, mode=shown_mode, arguments=arguments, problem=task_problem, status=422)
        calls.last_arguments[name] = json.dumps(arguments, ensure_ascii=False)
        task_call = get_inspector().tasks.call_tool(name, arguments, ttl, timeout=_timeout(values.get("timeout")))
        task_call.wait_change(None, TASK_CALL_WAIT)
        return render_tool(tool, mode=shown_mode, arguments=arguments, task_call=task_call)
    call = calls.call_tool(name, arguments, arguments_text=json.dumps(arguments, ensure_ascii=False),
                           timeout=_timeout(values.get("timeout")))
    return render_tool(tool, mode=shown_mode, arguments=arguments, call=call)


@bp.post("/calls/<int:call_id>/rerun")
def call_rerun(call_id: int):
    calls = get_inspector().calls
    past = calls.calls.get(call_id)
    if past is None:
        abort(404, description=f"no call #{call_id}")
    tool = tool_or_404(past.tool)
    call = calls.call_tool(past.tool, past.arguments,
                           arguments_text=json.dumps(past.arguments, ensure_ascii=False))
    return render_tool(tool, arguments=past.arguments, call=call)
