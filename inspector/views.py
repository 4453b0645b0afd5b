"""Pages and htmx endpoints. Actions are plain POSTs that answer at once; the websocket pushes the rest."""

from __future__ import annotations

import json
import threading
from urllib.parse import parse_qsl
import time

from flask import Flask, Response, abort, current_app, render_template, request

from . import share_views, tool_views
from .present import pretty, slug
from . import schema_form
from .session.asks import USER_REJECTED
from .diagnostics.review import review_tools
from .roots import parse_roots, roots_text
from .client.connect import headers_text, parse_headers_text
from .store import LOG_LEVELS, Filters

ERROR_MESSAGES = {
    404: "not found",
    405: "method not allowed",
    413: "request too large",
    500: "internal error in mcp-inspect (see its terminal)",
}
OLDER_ROWS = 500


def services():
    """The run's services: config, store, session, token."""
    return current_app.extensions["inspector"]


def error_partial(message: str, status: int) -> Response:
    """A small text partial: htmx 4 swaps error bodies into the page, so they must be fit to show."""
    return Response(render_template("partials/_error.html", message=message), status=status)


def wait_briefly(predicate, seconds: float = 0.3) -> None:
    """Give a state change a moment, so the answer usually shows the new state rather than the old one."""
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)


def register(app: Flask) -> None:
    """Attach the routes."""

    @app.context_processor
    def page_mode():
        restarter = services().get("restarter")
        problems = services().get("problems")
        return {"readonly": getattr(services()["session"], "readonly", False), "restarter": restarter,
                "asks": services().get("asks"), "ask_errors": {},
                "advertise": getattr(services()["session"], "advertise", {}),
                "roots_text": roots_text(getattr(services()["session"], "roots", [])),
                "target_url": getattr(services()["session"], "url", None),
                "target_transport": getattr(services()["session"], "http_transport", None),
                "headers_text": headers_text(getattr(services()["session"], "http_headers", [])),
                "auth_needed": getattr(services()["session"], "auth_needed", None),
                "inspector_config": services()["config"],
                "current_entry": services().get("current_entry") or services()["config"].entry_name,
                "tool_marks": restarter.tool_marks if restarter else {},
                "problems_found": problems.found if problems else [],
                "disabled_rules": services()["config"].disabled_rules}

    @app.template_global()
    def tool_review(tools) -> dict:
        """Description advice per tool name (the review of issue 8), computed only where a template asks."""
        advice = review_tools([t for t in tools if isinstance(t, dict)], services()["config"].disabled_rules)
        by_tool: dict[str, list] = {}
        for item in advice:
            by_tool.setdefault(item.tool or "", []).append(item)
        return by_tool

    @app.before_request
    def refuse_actions_when_viewing():
        # A viewed recording never runs or sends anything, whatever the browser posts.
        if request.method == "POST" and getattr(services()["session"], "readonly", False):
            return error_partial("this is a recording, opened read-only: nothing can be run or sent", 403)
        return None

    @app.get("/")
    def index():
        s = services()
        session = s["session"]
        return render_template("index.html", server=session.server, session=session, command=session.command,
                               tools=session.server.tools, selected=None, filters=Filters(),
                               recording=s["store"].writer.path, problems=getattr(session, "problems", []),
                               record_count=len(s["store"]))

    @app.get("/timeline/rows")
    def older_rows():
        store = services()["store"]
        filters = Filters.from_mapping(request.args)
        before = request.args.get("before", type=int)
        rows = store.newest(filters, OLDER_ROWS, before=before)
        more = bool(rows) and bool(store.newest(filters, 1, before=rows[0].seq))
        return render_template("partials/_older.html", rows=rows, more=more)

    @app.get("/records/<int:seq>")
    def record_detail(seq: int):
        store = services()["store"]
        record = store.record(seq)
        if record is None:
            return error_partial(f"no record #{seq}", 404)
        row = store.row(seq)
        value = record.to_dict()
        shown = value.get("msg", value) if record.kind == "message" else value
        text, cut = pretty(shown)
        return render_template("partials/_record.html", record=record, row=row, text=text, cut=cut)

    @app.get("/records/<int:seq>.json")
    def record_json(seq: int):
        store = services()["store"]
        record = store.record(seq)
        if record is None:
            abort(404)
        value = record.msg if record.kind == "message" else record.to_dict()
        return Response(json.dumps(value, ensure_ascii=False, indent=2), mimetype="application/json")

    @app.get("/calls/<int:call_id>")
    def call_state(call_id: int):
        call = services()["calls"].calls.get(call_id)
        if call is None:
            return error_partial(f"no call #{call_id}", 404)
        # ?wait=S long-polls: the answer then carries the final state, so it can never overwrite a result the
        # websocket pushed first with an older "pending".
        wait = min(max(request.args.get("wait", 0, type=float), 0.0), 60.0)
        if wait:
            # With ?v= (the version the page shows) any newer state answers; a later poll follows while pending.
            call.wait_change(request.args.get("v", None, type=int), wait)
        html = render_template("partials/_call.html", call=call, poll=call.state == "pending")
        if call.state != "pending":  # the tool's history gains this call too (an htmx 4 partial beside the main swap)
            html += render_template("partials/_push.html", target=f"#history-{slug(call.tool)}", swap="outerHTML",
                                    partial="partials/_history.html", tool_name=call.tool,
                                    history=tool_views.history_of(services()["calls"], call.tool))
        return html

    @app.post("/calls/<int:call_id>/cancel")
    def call_cancel(call_id: int):
        call = services()["calls"].calls.get(call_id)
        if call is None:
            return error_partial(f"no call #{call_id}", 404)
        services()["calls"].cancel_call(call_id)
        return render_template("partials/_call.html", call=call, poll=False)

    @app.template_global()
    def ask_form(ask):
        """The elicitation's requestedSchema as a form (the same form code as the tools)."""
        schema = ask.params.get("requestedSchema")
        schema = schema if isinstance(schema, dict) else {"type": "object"}
        if isinstance(ask.draft, dict):
            return schema_form.form_from_arguments(schema, ask.draft)
        return schema_form.build_form(schema)

    @app.post("/asks/<int:key>")
    def ask_answer(key: int):
        asks = services().get("asks")
        ask = asks.items.get(key) if asks else None
        if ask is None:
            return error_partial(f"no request #{key} from the server", 404)
        # Parsed from the raw body, in order (array rows are taken in the order they appear): never through
        # request.form, which would consume the body first.
        pairs = parse_qsl(request.get_data(as_text=True), keep_blank_values=True)
        form = dict(pairs)
        action = form.get("action", "")
        errors: dict = {}
        if ask.mode == "sampling":
            if action == "reject":
                asks.answer(key, error=(USER_REJECTED, "The user rejected the sampling request"), summary="rejected")
            else:
                result = {"role": "assistant", "content": {"type": "text", "text": form.get("reply", "")},
                          "model": form.get("model") or "mcp-inspect (a person)",
                          "stopReason": form.get("stopReason") or "endTurn"}
                asks.answer(key, result=result, summary="replied")
        elif action in ("decline", "cancel") or ask.mode == "url":
            asks.answer(key, result={"action": action if action in ("accept", "decline", "cancel") else "decline"},
                        summary=action)
        else:
            schema = ask.params.get("requestedSchema") if isinstance(ask.params.get("requestedSchema"), dict) else {}
            parsed = schema_form.arguments_from_form(schema, pairs)
            errors = {**schema_form.validate(schema, parsed.arguments), **parsed.errors}
            ask.draft = parsed.arguments
            if not errors:
                asks.answer(key, result={"action": "accept", "content": parsed.arguments}, summary="accepted")
        return render_template("partials/_asks.html", asks=asks, ask_errors={key: errors} if errors else {}), \
            422 if errors else 200

    @app.post("/server/advertise")
    def server_advertise():
        session = services()["session"]
        for name in session.advertise:
            session.advertise[name] = request.form.get(name) == "on"
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/log-level")
    def server_log_level():
        session = services()["session"]
        level = request.form.get("level", "")
        if level not in LOG_LEVELS:
            return error_partial(f"unknown log level {level!r}", 422)
        session.server.log_level = level
        if session.server.era != "modern":  # the modern era sends the level in every request's _meta instead
            session.request("logging/setLevel", {"level": level})  # the answer shows in the timeline
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/headers")
    def server_headers():
        session = services()["session"]
        if not getattr(session, "url", None):
            return error_partial("this server is not reached over HTTP", 400)
        headers, problems = parse_headers_text(request.form.get("headers", ""), session.http_headers)
        if problems:
            return error_partial("; ".join(problems), 422)
        session.http_headers = headers
        session.auth_needed = None
        threading.Thread(target=session.reconnect, args=("HTTP headers changed in the page",), daemon=True).start()
        wait_briefly(lambda: session.server.state == "running", 1.0)
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/roots")
    def server_roots():
        session = services()["session"]
        roots, problems = parse_roots(request.form.get("roots", ""))
        if problems:
            return error_partial("; ".join(problems), 422)
        session.set_roots(roots)
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/stop")
    def server_stop():
        session = services()["session"]
        # The shutdown ladder can take seconds; answer at once, the websocket pushes the final state.
        threading.Thread(target=session.stop, kwargs={"reason": "stop button"}, daemon=True).start()
        wait_briefly(lambda: session.server.state != "running")
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/start")
    def server_start():
        session = services()["session"]
        session.start()
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/restart")
    def server_restart():
        session, restarter = services()["session"], services()["restarter"]
        restarter.restart_in_background("restart button")
        wait_briefly(lambda: session.server.state != "running")
        return render_template("partials/_server.html", server=session.server, command=session.command)

    @app.post("/server/restart-on-crash")
    def server_restart_on_crash():
        session, restarter = services()["session"], services()["restarter"]
        restarter.restart_on_crash = request.form.get("enabled") == "on"
        session.store.signal("watch")
        return render_template("partials/_server.html", server=session.server, command=session.command)

    # Error bodies are small text partials: htmx 4 swaps them into the page, and no traceback may reach it.
    for code, message in ERROR_MESSAGES.items():
        app.register_error_handler(code, lambda exc, code=code, message=message: error_partial(
            _own_description(exc) or message, code))
    tool_views.register(app)
    share_views.register(app)


def _own_description(exc) -> str | None:
    """The description given to abort(), if any (not werkzeug's generic text)."""
    description = getattr(exc, "description", None)
    return description if description and description != type(exc).description else None
