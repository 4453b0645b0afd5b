"""The server panel's controls: advertise, log level, HTTP headers, roots, stop, start, restart.

Each answers with the re-rendered panel. Stops and restarts take seconds (the shutdown ladder), so they run on a
thread and the answer waits briefly, on the store's condition, for the state to move; the websocket pushes the rest.
"""

from __future__ import annotations

import threading

from flask import Blueprint, render_template, request

from inspector.protocol.roots import parse_roots
from inspector.protocol.secrets import header_secrets
from inspector.recording.store import LOG_LEVELS
from inspector.client.targets import parse_headers_text
from inspector.web import get_inspector
from inspector.web.views.page import error_partial
from inspector.session import changes

bp = Blueprint("server", __name__, url_prefix="/server")

STATE_WAIT = 0.3
"""How long a stop or restart answer waits for the server to leave "running" (the push follows either way)."""
RECONNECT_WAIT = 1.0


def _panel(**context):
    session = get_inspector().session
    return render_template("partials/_server.html", server=session.server, command=session.command, **context)


def _wait_for_state(predicate, seconds: float) -> None:
    """Give a state change a moment, so the answer usually shows the new state rather than the old one. Every
    state change of the server records an event or signals "server", and each wakes the store's condition."""
    get_inspector().store.wait_for(predicate, seconds)


@bp.post("/advertise")
def server_advertise():
    session = get_inspector().live
    for name in session.advertise:
        session.advertise[name] = request.form.get(name) == "on"
    return _panel(advertise_open=True)  # the section the person is ticking in stays open


@bp.post("/log-level")
def server_log_level():
    session = get_inspector().live
    level = request.form.get("level", "")
    if level not in LOG_LEVELS:
        return error_partial(f"unknown log level {level!r}", 422)
    session.server.log_level = level
    if session.server.era != "modern":  # the modern era sends the level in every request's _meta instead
        session.request("logging/setLevel", {"level": level})  # the answer shows in the timeline
    return _panel()


@bp.post("/headers")
def server_headers():
    session = get_inspector().live
    if not session.url:
        return error_partial("this server is not reached over HTTP", 400)
    headers, problems = parse_headers_text(request.form.get("headers", ""), session.http_headers)
    if problems:
        return error_partial("; ".join(problems), 422)
    get_inspector().store.masker.learn(header_secrets(headers))  # before the reconnect can record an echo
    session.http_headers = headers
    session.auth_needed = None
    threading.Thread(target=session.reconnect, args=("HTTP headers changed in the page",), daemon=True).start()
    _wait_for_state(lambda: session.server.state == "running", RECONNECT_WAIT)
    return _panel()


@bp.post("/roots")
def server_roots():
    roots, problems = parse_roots(request.form.get("roots", ""))
    if problems:
        return error_partial("; ".join(problems), 422)
    get_inspector().live.set_roots(roots)
    return _panel()


@bp.post("/stop")
def server_stop():
    session = get_inspector().live
    # The shutdown ladder can take seconds; answer at once, the websocket pushes the final state.
    threading.Thread(target=session.stop, kwargs={"reason": "stop button"}, daemon=True).start()
    _wait_for_state(lambda: session.server.state != "running", STATE_WAIT)
    return _panel()


@bp.post("/start")
def server_start():
    get_inspector().live.start()
    return _panel()


@bp.post("/restart")
def server_restart():
    inspector = get_inspector()
    session = inspector.live
    inspector.restarter.restart_in_background("restart button")
    _wait_for_state(lambda: session.server.state != "running", STATE_WAIT)
    return _panel()


@bp.post("/restart-on-crash")
def server_restart_on_crash():
    inspector = get_inspector()
    inspector.restarter.restart_on_crash = request.form.get("enabled") == "on"
    inspector.store.signal(changes.WATCH)
    return _panel()
