"""The page (Flask only). `get_inspector()` lives here so that app.py and every view can import it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app

if TYPE_CHECKING:
    from inspector.inspector import Inspector


def get_inspector() -> Inspector:
    """The services of the run this request belongs to: the one way views reach them."""
    return current_app.extensions["inspector"]
