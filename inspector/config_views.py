"""The page's side of config files: the entries of --config to pick from, and "copy server entry".

Only entries read from the file named on the command line can be started: the page sends a name, never a
command (security: the browser can only (re)start the servers named on the command line or in the config file).
"""

from __future__ import annotations

import os

from flask import Blueprint, Response, current_app, render_template, request

from .server_config import FLAVOURS, ServerEntry, server_entry_snippet

bp = Blueprint("config_views", __name__)


def _services() -> dict:
    return current_app.extensions["inspector"]


def _entries() -> dict[str, ServerEntry]:
    return {entry.name: entry for entry in _services()["config"].config_entries}


@bp.post("/config/start")
def start_entry():
    services = _services()
    session, config = services["session"], services["config"]
    if getattr(session, "readonly", False):
        return Response("a recording is read-only", status=403)
    entry = _entries().get(request.form.get("name", ""))
    if entry is None:
        return Response(render_template("partials/_error.html", message="no such server in the config file"),
                        status=404)
    if not entry.startable:
        return Response(render_template("partials/_error.html",
                                        message=f"{entry.name} cannot be started: " + "; ".join(entry.problems)),
                        status=422)
    services["current_entry"] = entry.name
    describe = {"config": config.config_file, "server": entry.name, "transport": entry.transport}
    if entry.transport == "stdio":
        env = dict(os.environ)
        env.update(dict(entry.env))
        describe["command"] = list(entry.command)
        session.retarget(command=list(entry.command), cwd=entry.cwd or config.cwd, env=env, describe=describe)
    else:
        describe["url"] = entry.url
        describe["headers"] = {name: "[REDACTED]" for name, _ in entry.headers}
        session.retarget(url=entry.url, headers=list(entry.headers) + list(config.headers), describe=describe,
                         transport=entry.transport)
    return render_template("partials/_config.html")


@bp.get("/config/snippet")
def snippet():
    """The JSON that adds the current server to a Claude Desktop, Cursor or VS Code config file."""
    flavour = request.args.get("flavour", "claude")
    if flavour not in FLAVOURS:
        return Response(f"unknown flavour; one of {', '.join(FLAVOURS)}", status=400, mimetype="text/plain")
    session, config = _services()["session"], _services()["config"]
    name = _services().get("current_entry") or config.entry_name or config.name or "server"
    url = getattr(session, "url", None)
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
