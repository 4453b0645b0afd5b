"""create_app(config): the Flask app factory. Services live in app.extensions; security is enforced here."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from . import panels, security, task_views, views
from . import config_views
from .live import register_live
from .present import register_filters

WEB_IN_PACKAGE = Path(__file__).resolve().parent / "_web"
WEB_IN_SOURCE = Path(__file__).resolve().parent.parent


def web_root() -> Path:
    """Where templates/ and static/ are: inside the installed package, or the source tree (editable install)."""
    if (WEB_IN_PACKAGE / "templates").is_dir():
        return WEB_IN_PACKAGE
    return WEB_IN_SOURCE


def create_app(config, *, store, session, token: str, restarter=None, calls=None) -> Flask:
    """Build the app for one inspector run; the port is filled in once the listener is bound.

    `calls` is the page's tool calls and drafts (session/calls.py); without one (a recording opened for viewing)
    the session stands in: a RecordedSession has the same read-only calls, drafts and modes.
    """
    root = web_root()
    app = Flask("inspector", template_folder=str(root / "templates"), static_folder=str(root / "static"),
                static_url_path="/static")
    # Flask's default autoescape covers only .html-like names; everything we render is server text.
    app.jinja_env.autoescape = True
    app.config.update(
        INSPECTOR_PORT=None,
        INSPECTOR_HOST=config.host,
        MAX_CONTENT_LENGTH=64 * 1024 * 1024,  # large tool arguments must get through
        MAX_FORM_MEMORY_SIZE=64 * 1024 * 1024,
        SOCK_SERVER_OPTIONS={"max_message_size": 1024 * 1024, "ping_interval": 25},
        SEND_FILE_MAX_AGE_DEFAULT=0,
    )
    app.extensions["inspector"] = {"config": config, "store": store, "session": session, "token": token,
                                   "restarter": restarter, "calls": calls if calls is not None else session}
    security.install(app, token)
    register_filters(app)
    views.register(app)
    app.register_blueprint(panels.bp)
    app.register_blueprint(task_views.bp)
    app.register_blueprint(config_views.bp)
    register_live(app)
    return app
