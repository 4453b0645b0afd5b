"""create_app(inspector): the Flask app factory. The services come built (runner.py); security is enforced here."""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask

from inspector.inspector import Inspector
from inspector.web import get_inspector, security  # noqa: F401 - get_inspector is re-exported
from inspector.web.live import ping_seconds, register_live
from inspector.web.present import register_filters
from inspector.web import stderr_view
from inspector.web.views import (
    asks, calls, config as config_views, page, panels, server, share, tasks as task_views, timeline, tools,
)

PACKAGE = Path(__file__).resolve().parent.parent  # inspector/ (this file is inspector/web/app.py)
WEB_IN_PACKAGE = PACKAGE / "_web"
WEB_IN_SOURCE = PACKAGE.parent

BLUEPRINTS = (page.bp, timeline.bp, calls.bp, asks.bp, server.bp, tools.bp, share.bp, panels.bp, task_views.bp,
              config_views.bp)


def web_root() -> Path:
    """Where templates/ and static/ are: inside the installed package, or the source tree (editable install)."""
    if (WEB_IN_PACKAGE / "templates").is_dir():
        return WEB_IN_PACKAGE
    return WEB_IN_SOURCE


def create_app(inspector: Inspector) -> Flask:
    """Build the page for one inspector run; its port is read from the Inspector once the listener is bound."""
    root = web_root()
    app = Flask("inspector", template_folder=str(root / "templates"), static_folder=str(root / "static"),
                static_url_path="/static")
    # Flask takes DEBUG from FLASK_DEBUG in the environment; debug mode propagates exceptions past our error
    # partials and security headers (security.md: never in debug mode). Set before the template environment exists.
    app.config["DEBUG"] = False
    # Flask's default autoescape covers only .html-like names; everything we render is server text.
    app.jinja_env.autoescape = True
    app.config.update(
        INSPECTOR_HOST=inspector.config.host,
        MAX_CONTENT_LENGTH=64 * 1024 * 1024,  # large tool arguments must get through
        MAX_FORM_MEMORY_SIZE=64 * 1024 * 1024,
        SEND_FILE_MAX_AGE_DEFAULT=0,
    )
    app.extensions["inspector"] = inspector
    security.install(app, inspector.token)
    register_filters(app)
    stderr_view.register(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    register_live(app, ping_seconds(os.environ))
    return app
