"""The page itself and the timeline: index, older rows, one record's detail and its JSON."""

from __future__ import annotations

import json

from flask import Blueprint, Response, abort, render_template, request

from inspector.recording.store import Filters
from inspector.web import get_inspector
from inspector.web.present import pretty
from inspector.web.views.page import error_partial

bp = Blueprint("timeline", __name__)

OLDER_ROWS = 500


@bp.get("/")
def index():
    inspector = get_inspector()
    session = inspector.session
    # Read before the panels are rendered: a change made while they are is signalled after it, and re-sent.
    page_signal = inspector.store.signal_seq
    return render_template("index.html", page_signal=page_signal, server=session.server, session=session, command=session.command,
                           tools=session.server.tools, selected=None, filters=Filters(),
                           recording=inspector.store.writer.path, problems=inspector.recording_problems,
                           record_count=len(inspector.store))


@bp.get("/timeline/rows")
def older_rows():
    store = get_inspector().store
    filters = Filters.from_mapping(request.args)
    before = request.args.get("before", type=int)
    rows = store.newest(filters, OLDER_ROWS, before=before)
    more = bool(rows) and bool(store.newest(filters, 1, before=rows[0].seq))
    return render_template("partials/_older.html", rows=rows, more=more)


@bp.get("/records/<int:seq>")
def record_detail(seq: int):
    store = get_inspector().store
    record = store.record(seq)
    if record is None:
        return error_partial(f"no record #{seq}", 404)
    row = store.row(seq)
    value = record.to_dict()
    shown = value.get("msg", value) if record.kind == "message" else value
    text, cut = pretty(shown)
    return render_template("partials/_record.html", record=record, row=row, text=text, cut=cut)


@bp.get("/records/<int:seq>.json")
def record_json(seq: int):
    record = get_inspector().store.record(seq)
    if record is None:
        abort(404)
    value = record.msg if record.kind == "message" else record.to_dict()
    response = Response(json.dumps(value, ensure_ascii=False, indent=2), mimetype="application/json")
    # Raw server text: fetched by "Copy JSON", never swapped into the page (static/app.js refuses non-partials).
    response.headers["Content-Disposition"] = f'attachment; filename="record-{seq}.json"'
    return response
