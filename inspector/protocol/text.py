"""Pure: plain-text renderings the page and the content views share (times, sizes, pretty JSON, safe links).

Everything here returns plain text; the templates escape it (autoescape is on for every template). No Flask here,
so protocol/content.py can use it without reaching into the web side.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import json
from typing import Any

from inspector.protocol.json import loads

PRETTY_LIMIT = 256 * 1024
RASTER_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def clock(t: float) -> str:
    """HH:MM:SS.mmm in local time."""
    return _dt.datetime.fromtimestamp(t).strftime("%H:%M:%S.%f")[:-3]


def size_text(size: int | None) -> str:
    """Bytes as 512 B, 1.2 KB, 3.4 MB."""
    if size is None:
        return ""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def latency_text(ms: float | None) -> str:
    """Milliseconds, short."""
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def pretty(value: Any, limit: int = PRETTY_LIMIT) -> tuple[str, bool]:
    """Indented JSON, cut at limit characters; returns (text, was_cut)."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    if len(text) > limit:
        return text[:limit], True
    return text, False


def pretty_text(value: Any) -> str:
    """Indented JSON without a cut (small values)."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def text_block(text: str) -> tuple[str, bool]:
    """A text content block: JSON text pretty-printed when it parses, else as is. Returns (text, is_json)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) < PRETTY_LIMIT:
        try:
            return json.dumps(loads(stripped), ensure_ascii=False, indent=2), True
        except ValueError:
            pass
    return text, False


def image_data_uri(block: dict) -> str | None:
    """A data: URI for a raster image block, or None (SVG and anything odd are never shown as images)."""
    mime = block.get("mimeType")
    data = block.get("data")
    if mime not in RASTER_IMAGE_TYPES or not isinstance(data, str):
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return f"data:{mime};base64,{data}"


def safe_link(url: Any) -> str | None:
    """Only http and https links from servers."""
    if isinstance(url, str) and url.lower().startswith(("http://", "https://")):
        return url
    return None


def basename(path: str) -> str:
    """The last part of a path."""
    return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def slug(text: str) -> str:
    """A stable id fragment for any server-given name (names may hold any character)."""
    return hashlib.sha1(str(text).encode("utf-8", "replace")).hexdigest()[:12]
