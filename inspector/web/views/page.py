"""What every page and partial shares: the template context, the read-only gate, and the error bodies."""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request

from inspector.protocol.diagnostics.review import review_tools
from inspector.protocol.roots import roots_text
from inspector.client.targets import headers_text
from inspector.web import get_inspector

bp = Blueprint("page", __name__)

ERROR_MESSAGES = {
    404: "not found",
    405: "method not allowed",
    413: "request too large",
    500: "internal error in mcp-inspect (see its terminal)",
}


def error_partial(message: str, status: int) -> Response:
    """A small text partial: htmx 4 swaps error bodies into the page, so they must be fit to show."""
    return Response(render_template("partials/_error.html", message=message), status=status)


@bp.app_context_processor
def page_context() -> dict:
    inspector = get_inspector()
    session, config, restarter = inspector.session, inspector.config, inspector.restarter
    return {"readonly": inspector.readonly, "restarter": restarter, "asks": inspector.asks, "ask_errors": {},
            "advertise": session.advertise, "roots_text": roots_text(session.roots),
            "target_url": session.url, "target_transport": session.http_transport,
            "headers_text": headers_text(session.http_headers), "auth_needed": session.auth_needed,
            "inspector_config": config,
            "current_entry": inspector.current_entry,
            "tool_marks": restarter.tool_marks if restarter else {},
            # a viewed recording has no checker: its Problems are the warnings it holds
            "problems_found": inspector.problems.found if inspector.problems else getattr(session, "warnings", []),
            "disabled_rules": config.disabled_rules, "task_tracker": inspector.tasks}


@bp.app_template_global()
def tool_review(tools) -> dict:
    """Description advice per tool name (the review of issue 8), computed only where a template asks."""
    advice = review_tools([t for t in tools if isinstance(t, dict)], get_inspector().config.disabled_rules)
    by_tool: dict[str, list] = {}
    for item in advice:
        by_tool.setdefault(item.tool or "", []).append(item)
    return by_tool


@bp.before_app_request
def refuse_actions_when_viewing():
    # A viewed recording never runs or sends anything, whatever the browser posts.
    if request.method == "POST" and get_inspector().readonly:
        return error_partial("this is a recording, opened read-only: nothing can be run or sent", 403)
    return None


def _own_description(exc) -> str | None:
    """The description given to abort(), if any (not werkzeug's generic text)."""
    description = getattr(exc, "description", None)
    return description if description and description != type(exc).description else None


# Error bodies are small text partials: htmx 4 swaps them into the page, and no traceback may reach it.
for _code, _message in ERROR_MESSAGES.items():
    bp.app_errorhandler(_code)(lambda exc, message=_message, code=_code: error_partial(
        _own_description(exc) or message, code))
