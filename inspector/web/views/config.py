"""The page's side of config files: the entries of --config to pick from, and "copy server entry".

Only entries read from the file named on the command line can be started: the page sends a name, never a
command (security: the browser can only (re)start the servers named on the command line or in the config file).
"""

from __future__ import annotations

import os

from flask import Blueprint, Response, render_template, request

from inspector.client_configs import FLAVOURS, ServerEntry, server_entry_snippet
from inspector.web import get_inspector

bp = Blueprint("config_views", __name__)


def _entries() -> dict[str, ServerEntry]:
    return {entry.name: entry for entry in get_inspector().config.config_entries}


@bp.post("/config/start")
def start_entry():
    inspector = get_inspector()
    if inspector.readonly or inspector.targeting is None:
        return Response("a recording is read-only", status=403)
    entry = _entries().get(request.form.get("name", ""))
    if entry is None:
        return Response(render_template("partials/_error.html", message="no such server in the config file"),
                        status=404)
    if not entry.startable:
        return Response(render_template("partials/_error.html",
                                        message=f"{entry.name} cannot be started: " + "; ".join(entry.problems)),
                        status=422)
    inspector.targeting.start_entry(entry)
    return render_template("partials/_config.html")


@bp.get("/config/snippet")
def snippet():
    """The JSON that adds the current server to a Claude Desktop, Cursor or VS Code config file."""
    flavour = request.args.get("flavour", "claude")
    if flavour not in FLAVOURS:
        return Response(f"unknown flavour; one of {', '.join(FLAVOURS)}", status=400, mimetype="text/plain")
    inspector = get_inspector()
    session, config = inspector.session, inspector.config
    name = inspector.current_entry or config.name or "server"
    url = session.url
    try:
        if url:
            transport = session.http_transport or (
                config.transport if config.transport != "auto" else "streamable-http")
            text = server_entry_snippet(name=name, url=url, header_names=[n for n, _ in session.http_headers],
                                        transport=transport, flavour=flavour)
        else:
            env_keys = [key for key, _ in config.env]
            text = server_entry_snippet(name=name, command=list(session.command), env_keys=env_keys,
                                        cwd=session.cwd or os.getcwd(), flavour=flavour)
    except ValueError as exc:
        return Response(str(exc), status=422, mimetype="text/plain")
    return Response(text, mimetype="text/plain")
