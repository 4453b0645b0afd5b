"""Recordings from the page: open one, replay one against this server, export this session, copy a request as a
command or a call as a bug report (Markdown), and send a hand-made raw line. The viewers and the replay themselves are the Sharing service's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator

from flask import Blueprint, Response, abort, render_template, request

from inspector.client.rpc import RawRefused
from inspector.command_line import copy_as_command
from inspector.recording.export import in_selection, parse_selection, redact_recording
from inspector.recording.files import RecordingError, read_recording
from inspector.protocol import jsonrpc
from inspector.recording.reports.formats import REPORTS
from inspector.recording.reports.markdown import render_call
from inspector.recording.reports.summary import STDERR_KEPT
from inspector.protocol.json import loads
from inspector.protocol.redact import Rules
from inspector.session.sharing import ReplayRun
from inspector.web import get_inspector

bp = Blueprint("share", __name__)


@contextmanager
def _uploaded() -> Iterator[str]:
    """The uploaded recording, saved privately for as long as the block runs, then deleted with its folder (it may
    hold secrets: security findings, 10). Whatever uses it reads it within the block: the replay loads it, and a
    viewer has it open before its URL comes (and reads it through that descriptor from then on). Raises
    ValueError with a message for the page."""
    upload = request.files.get("recording")
    if upload is None or not upload.filename:
        raise ValueError("choose a recording file (.jsonl) first")
    folder = tempfile.mkdtemp(prefix="mcp-inspect-upload-")
    try:
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(upload.filename)) or "recording.jsonl"
        path = os.path.join(folder, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            upload.save(handle)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@bp.get("/records/<int:seq>/command")
def record_command(seq: int):
    inspector = get_inspector()
    record = inspector.store.record(seq)
    if record is None or record.kind != "message" or record.dir != "to_server" or not isinstance(record.msg, dict) \
            or "method" not in record.msg:
        abort(404, description=f"#{seq} is not a request sent to the server")
    config, session = inspector.config, inspector.session
    url = session.url
    command = copy_as_command(list(session.command), _without_our_progress_token(record.msg),
                              cwd=None if url else config.cwd, env_keys=[] if url else [key for key, _ in config.env],
                              url=url, header_names=[name for name, _ in session.http_headers])
    response = Response(command + "\n", mimetype="text/plain")
    # Holds server text: fetched by "Copy as command", never swapped into the page.
    response.headers["Content-Disposition"] = f'attachment; filename="record-{seq}-command.txt"'
    return response


@bp.get("/records/<int:seq>/report.md")
def record_report(seq: int):
    """The Markdown of the call whose request or answer is #seq (request, answer, stderr meanwhile), masked like
    the Export button's file: "Copy as bug report"."""
    inspector = get_inspector()
    store = inspector.store
    records = _call_records(store, seq)
    redacted = redact_recording(_current_header(store), records, Rules.build(literals=[inspector.token]))
    text = render_call(redacted.header, redacted.records, seq) if records else None
    if text is None:
        abort(404, description=f"#{seq} is not part of a request and its answer")
    response = Response(text, mimetype="text/markdown")
    # Holds server text: fetched by "Copy as bug report", never swapped into the page.
    response.headers["Content-Disposition"] = f'attachment; filename="call-{seq}-report.md"'
    return response


def _call_records(store, seq: int) -> list:
    """The records one call's report needs: the last handshake before it, the request, the stderr written while
    it was open (at most STDERR_KEPT) and its answer."""
    row = store.row(seq)
    if row is None:
        return []
    # Only a request or its answer has a pair; a stderr line, an event or a notification has none (pair_seq None).
    request = row if row.kind == "request" else store.row(row.pair_seq) if row.pair_seq is not None else None
    if request is None or request.kind != "request":
        return []
    end = request.pair_seq or store.last_seq + 1
    rows = store.rows()
    handshake = next((r for r in reversed(rows) if r.kind == "event" and r.seq < request.seq
                      and (record := store.record(r.seq)) is not None and record.event == "handshake"), None)
    stderr = [r for r in rows if r.kind == "stderr" and request.seq < r.seq < end][:STDERR_KEPT]
    wanted = ([handshake] if handshake else []) + [request] + stderr + ([store.row(end)] if request.pair_seq else [])
    return [record for r in wanted if r is not None and (record := store.record(r.seq)) is not None]


@bp.post("/raw")
def send_raw():
    line = request.form.get("line", "")
    if not line.strip():
        return render_template("partials/_raw_result.html", message="Nothing to send.", seq=None), 422
    try:
        record = get_inspector().live.send_raw(line)
    except RawRefused as exc:  # its id is one of ours still waiting: the answer would be taken for ours
        return render_template("partials/_raw_result.html", message=str(exc), seq=None), 409
    if record is None:
        return render_template("partials/_raw_result.html", message="The server is not running.", seq=None), 409
    return render_template("partials/_raw_result.html", message="Sent as a hand-made row", seq=record.seq)


@bp.get("/export")
def export():
    """This session, masked, as a download: the recording itself (jsonl) or a report made from it (html, md)."""
    inspector = get_inspector()
    kind = request.args.get("format") or "jsonl"
    if kind != "jsonl" and kind not in REPORTS:
        abort(400, description=f"no export format {kind!r}: jsonl, {', '.join(REPORTS)}")
    try:
        selection = parse_selection(request.args["seq"]) if request.args.get("seq") else None
    except ValueError as exc:
        abort(400, description=str(exc).replace("--seq", "rows"))
    store = inspector.store
    picked = lambda seq: in_selection(seq, selection)  # noqa: E731
    # A report summarises the whole session and shows the picked rows; the jsonl copy holds the picked rows only.
    rows = [row.seq for row in store.rows() if kind != "jsonl" or picked(row.seq)]
    records = [record for record in map(store.record, rows) if record is not None]
    rules = Rules.build(literals=[inspector.token])
    redacted = redact_recording(_current_header(store), records, rules)
    stem = store.writer.path.stem if store.writer.path else "session"
    if kind == "jsonl":
        # The same line encoding as the recording itself (C1 controls escaped, so `cat` on the export is safe too).
        lines = [jsonrpc.encode(redacted.header)] if redacted.header else []
        lines += [jsonrpc.encode(r) for r in redacted.records]
        response = Response(b"".join(lines), mimetype="application/x-ndjson")
        name = f"{stem}-export.jsonl"
    else:
        report = REPORTS[kind]
        response = Response(report.render(redacted, [], picked), mimetype=report.mimetype)
        name = f"{stem}-report{report.suffix}"
    # An attachment: the browser saves it, and the page's htmx never swaps it in (a report is server text).
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    response.headers["X-Redacted"] = str(sum(1 for seq, _ in redacted.findings if seq is None or picked(seq)))
    return response


@bp.post("/recordings/open")
def open_recording():
    try:
        with _uploaded() as path:
            url = get_inspector().sharing.start_viewer(path)
    except (ValueError, OSError) as exc:
        return render_template("partials/_open_result.html", problem=str(exc), url=None), 422
    return render_template("partials/_open_result.html", problem=None, url=url)


@bp.post("/recordings/replay")
def replay_recording():
    sharing = get_inspector().sharing
    try:
        with _uploaded() as path:
            loaded = read_recording(path)
    except (ValueError, OSError, RecordingError) as exc:
        return render_template("partials/_replay.html", run=ReplayRun(name="", state="failed", error=str(exc))), 422
    run, started = sharing.start_replay(os.path.basename(path), loaded)
    return render_template("partials/_replay.html", run=run), 200 if started else 409


@bp.get("/recordings/replay")
def replay_state():
    sharing = get_inspector().sharing
    return render_template("partials/_replay.html", run=sharing.replay if sharing else None)


def _without_our_progress_token(msg: dict) -> dict:
    """The request as a person would write it: what the inspector adds itself left out (the progressToken of its
    calls, and the modern era's per-request _meta keys, which `call` adds again in whatever era it finds)."""
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return msg
    ours = {k for k in meta if k.startswith("io.modelcontextprotocol/")}
    if str(meta.get("progressToken", "")).startswith("call-"):
        ours.add("progressToken")
    if not ours:
        return msg
    meta = {k: v for k, v in meta.items() if k not in ours}
    params = {k: v for k, v in params.items() if k != "_meta"} | ({"_meta": meta} if meta else {})
    return {**msg, "params": params}


def _current_header(store) -> dict | None:
    """The header line of this session's recording."""
    for _, line in store.writer.read_all_lines():
        try:
            head = loads(line)
        except ValueError:
            return None
        return head if isinstance(head, dict) and head.get("kind") == "header" else None
    return None
