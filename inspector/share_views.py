"""Recordings from the page: open one, replay one against this server, export this session, copy a request as a
command, and send a hand-made raw line.

Opening a recording starts our own read-only viewer (`mcp-inspect view`) on another port: it runs nothing from
the file. Replaying restarts the current server so its handshake is replayed too, and shows each step's diff.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

from flask import Flask, Response, abort, current_app, render_template, request

from .commands.call import copy_as_command
from .commands.common import UsageError
from .client.connect import HttpTarget
from .commands.export import parse_selection, redact_recording
from .recording import RecordingError, read_recording
from .redact import Rules

VIEWER_START_SECONDS = 20
_viewers: list[subprocess.Popen] = []


@dataclass
class ReplayRun:
    """The page's latest replay."""

    name: str
    state: str = "running"
    """running, done, failed."""
    steps: list = field(default_factory=list)
    error: str = ""
    summary: dict = field(default_factory=dict)


def _services():
    return current_app.extensions["inspector"]


def _save_upload() -> str:
    """The uploaded recording, saved privately; raises ValueError with a message for the page."""
    upload = request.files.get("recording")
    if upload is None or not upload.filename:
        raise ValueError("choose a recording file (.jsonl) first")
    folder = tempfile.mkdtemp(prefix="mcp-inspect-upload-")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(upload.filename)) or "recording.jsonl"
    path = os.path.join(folder, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as handle:
        upload.save(handle)
    return path


def _start_viewer(path: str) -> str:
    """Run `mcp-inspect view` on the file and return its tokened URL."""
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "view", "--no-open", "--port", "0", path],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    _viewers.append(proc)
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(VIEWER_START_SECONDS)
    url = line[0].decode(errors="replace").strip() if line else ""
    if not url.startswith("http://"):
        exited = line == [b""]  # stdout closed: it is exiting with its reason on stderr (let it finish saying so)
        try:
            proc.wait(timeout=2.0 if exited else 0.0)
        except subprocess.TimeoutExpired:
            proc.kill()
        message = proc.stderr.read().decode(errors="replace").strip().splitlines() if exited else []
        raise ValueError(message[-1] if message else "the viewer did not start")
    return url


@atexit.register
def _stop_viewers() -> None:
    for proc in _viewers:
        if proc.poll() is None:
            proc.terminate()


def register(app: Flask) -> None:
    """Attach the routes."""
    state: dict = {"replay": None}
    app.extensions["inspector"]["replay_state"] = state

    @app.get("/records/<int:seq>/command")
    def record_command(seq: int):
        s = _services()
        record = s["store"].record(seq)
        if record is None or record.kind != "message" or record.dir != "to_server" or not isinstance(record.msg, dict) \
                or "method" not in record.msg:
            abort(404, description=f"#{seq} is not a request sent to the server")
        config = s["config"]
        session = s["session"]
        url = getattr(session, "url", None)
        command = copy_as_command(list(session.command), _without_our_progress_token(record.msg),
                                  cwd=None if url else config.cwd, env_keys=[] if url else [key for key, _ in config.env],
                                  url=url, header_names=[name for name, _ in getattr(session, "http_headers", [])])
        return Response(command + "\n", mimetype="text/plain")

    @app.post("/raw")
    def send_raw():
        line = request.form.get("line", "")
        if not line.strip():
            return render_template("partials/_raw_result.html", message="Nothing to send.", seq=None), 422
        record = _services()["session"].send_raw(line)
        if record is None:
            return render_template("partials/_raw_result.html", message="The server is not running.", seq=None), 409
        return render_template("partials/_raw_result.html", message="Sent as a hand-made row", seq=record.seq)

    @app.get("/export")
    def export():
        s = _services()
        try:
            selection = parse_selection(request.args["seq"]) if request.args.get("seq") else None
        except UsageError as exc:
            abort(400, description=str(exc).replace("--seq", "rows"))
        store = s["store"]
        records = [store.record(row.seq) for row in store.rows()
                   if selection is None or any(lo <= row.seq <= hi for lo, hi in selection)]
        header = _current_header(store)
        rules = Rules.build(literals=[s["token"]])
        redacted = redact_recording(header, [r for r in records if r is not None], rules)
        lines = [json.dumps(redacted.header, ensure_ascii=False)] if redacted.header else []
        lines += [json.dumps(r, ensure_ascii=False) for r in redacted.records]
        name = (store.writer.path.stem if store.writer.path else "session") + "-export.jsonl"
        response = Response("\n".join(lines) + "\n", mimetype="application/x-ndjson")
        response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
        response.headers["X-Redacted"] = str(len(redacted.findings))
        return response

    @app.post("/recordings/open")
    def open_recording():
        try:
            path = _save_upload()
            url = _start_viewer(path)
        except (ValueError, OSError) as exc:
            return render_template("partials/_open_result.html", problem=str(exc), url=None), 422
        return render_template("partials/_open_result.html", problem=None, url=url)

    @app.post("/recordings/replay")
    def replay_recording():
        s = _services()
        try:
            path = _save_upload()
            loaded = read_recording(path)
        except (ValueError, OSError, RecordingError) as exc:
            return render_template("partials/_replay.html", run=ReplayRun(name="", state="failed", error=str(exc))), 422
        current = state["replay"]
        if current is not None and current.state == "running":
            return render_template("partials/_replay.html", run=current), 409
        run = ReplayRun(name=os.path.basename(path))
        state["replay"] = run
        threading.Thread(target=_run_replay, args=(s, run, loaded), name="replay", daemon=True).start()
        return render_template("partials/_replay.html", run=run)

    @app.get("/recordings/replay")
    def replay_state():
        return render_template("partials/_replay.html", run=state["replay"])


def _http_target(session) -> HttpTarget | None:
    """The session's HTTP server, with the transport its connection settled on, for a replay against it."""
    url = getattr(session, "url", None)
    if not url:
        return None
    transport = session.http_transport or "auto"
    return HttpTarget(url, transport, tuple(getattr(session, "http_headers", ())))


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
            head = json.loads(line)
        except ValueError:
            return None
        return head if isinstance(head, dict) and head.get("kind") == "header" else None
    return None


def _run_replay(services: dict, run: ReplayRun, loaded) -> None:
    """Restart-and-replay on a thread: stop this server, replay against a fresh one, then start it again."""
    from .replay import Replayer, ReplayError  # loaded only when a replay runs

    session, store = services["session"], services["store"]

    def on_step(step) -> None:
        run.steps = list(replayer.steps)
        store.signal("replay")

    session.stop(reason="replay", stdin_grace=0.3, failure="server restarted for a replay")
    replayer = Replayer(loaded, session.command, cwd=session.cwd, env=session.env, store=store,
                        timeout=session.timeout, on_step=on_step, http=_http_target(session))
    try:
        report = replayer.run()
        run.steps, run.summary, run.state = report.steps, report.summary(), "done"
    except ReplayError as exc:
        run.state, run.error = "failed", str(exc)
    except Exception as exc:  # shown in the page rather than lost on a thread
        run.state, run.error = "failed", f"internal error: {exc!r}"
    finally:
        session.start()
        store.signal("replay")
