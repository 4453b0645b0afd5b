"""A tool call's card: its long poll and its cancel button (the call itself is made in tools.py)."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from inspector.web import get_inspector, regions
from inspector.web.views.page import error_partial

bp = Blueprint("calls", __name__)


@bp.get("/calls/<int:call_id>")
def call_state(call_id: int):
    call = get_inspector().calls.calls.get(call_id)
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
        html += regions.push(regions.CALL_HISTORY, str(call_id))
    return html


@bp.post("/calls/<int:call_id>/cancel")
def call_cancel(call_id: int):
    calls = get_inspector().calls
    call = calls.calls.get(call_id)
    if call is None:
        return error_partial(f"no call #{call_id}", 404)
    calls.cancel_call(call_id)
    return render_template("partials/_call.html", call=call, poll=False)
