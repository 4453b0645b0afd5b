"""The templates' helpers: the Jinja filter registration, timeline row notes (read back through the store), the
server state words and HTTP facts. The pure text functions live in protocol/text.py and are registered from here.
"""

from __future__ import annotations

import bisect
import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from inspector.protocol import eras
from inspector.protocol.diff import text_diff
from inspector.protocol.json import loads
from inspector.protocol.secrets import mask_argv, mask_url
from inspector.recording.files import RECORD_DEPTH
from inspector.protocol.text import (
    basename, clock, image_data_uri, latency_text, pretty, pretty_text, safe_link, size_text, slug, text_block,
)


def state_label(state: str) -> str:
    """Words for the server's state."""
    return {
        "idle": "not started", "starting": "starting", "initializing": "initializing", "running": "running",
        "exited": "exited", "stopping": "stopping", "stopped": "stopped", "failed": "failed to start",
        "unreachable": "unreachable",
        "recorded": "recorded session (read-only)",
    }.get(state, state)


# -- what a timeline row says beyond its summary: input_required chains, explained errors, HTTP ---------------

NOTE_READ_LIMIT = 1024 * 1024
"""Rows longer than this are not read back for notes (an input_required answer or a retry is small)."""
NOTES_CACHED = 4096
ERA_PROBE = "server/discover"
"""The method mcp-inspect asks first to find the era (client/handshake.probe)."""
CHAIN_SCAN_ROWS = 5000
"""How far after an input_required answer the expanded record looks for its retry."""


@dataclass(frozen=True)
class RowNotes:
    """What a row adds to its summary; records never change once written, so notes are cached per seq."""

    retry_of: int | None = None
    """A retried request (modern era): the seq of the input_required answer it follows."""
    round: int | None = None
    """Which sending of the request this is (the first is round 1, so a first retry is round 2)."""
    input_requests: tuple[tuple[str, str], ...] = ()
    """An input_required answer: (key, method) of each entry of its inputRequests."""
    explained: str | None = None
    """An error response: eras.explain_error's words for its code."""
    probe: bool = False
    """An error answering server/discover: our own era probe, refused as a handshake-era server should refuse it
    (shown as the probe it is, not as the server's failure)."""

    @property
    def input_keys(self) -> str:
        """The input request keys, comma-separated."""
        return ", ".join(key for key, _ in self.input_requests)


NO_NOTES = RowNotes()
_notes_cache: "weakref.WeakKeyDictionary[Any, OrderedDict[int, RowNotes]]" = weakref.WeakKeyDictionary()
_notes_lock = threading.Lock()


def _read_record(store, row) -> dict | None:
    """A row's record as JSON, read back from the recording (None when too long or unreadable)."""
    if row is None or row.length > NOTE_READ_LIMIT:
        return None
    try:
        value = loads(store.writer.read_at(row.offset, row.length), RECORD_DEPTH)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def row_notes(store, row, _depth: int = 0) -> RowNotes:
    """The chain link, input keys or error words a row shows; only the few rows that can have them are read."""
    if store is None or row is None:
        return NO_NOTES
    interesting = (row.kind == "error"
                   or (row.kind in ("request", "response") and row.method in eras.INPUT_REQUIRED_METHODS))
    if not interesting:
        return NO_NOTES
    with _notes_lock:
        cached = _notes_cache.setdefault(store, OrderedDict()).get(row.seq)
    if cached is not None:
        return cached
    notes = _compute_notes(store, row, _depth)
    with _notes_lock:
        cache = _notes_cache.setdefault(store, OrderedDict())
        cache[row.seq] = notes
        while len(cache) > NOTES_CACHED:
            cache.popitem(last=False)
    return notes


def _compute_notes(store, row, depth: int) -> RowNotes:
    record = _read_record(store, row)
    if record is None:
        return NO_NOTES
    msg = record.get("msg") if isinstance(record.get("msg"), dict) else {}
    if row.kind == "error":
        return RowNotes(explained=eras.explain_error(msg.get("error")), probe=row.method == ERA_PROBE)
    if row.kind == "request" and record.get("dir") == "to_server":
        follows = record.get("follows")
        if not isinstance(follows, int) or isinstance(follows, bool):
            return RowNotes(round=1)
        # The answer at `follows` pairs with the request before this one: its round plus one.
        answer = store.row(follows)
        before = store.row(answer.pair_seq) if answer is not None and answer.pair_seq is not None else None
        earlier = row_notes(store, before, depth + 1) if before is not None and depth < 50 else NO_NOTES
        return RowNotes(retry_of=follows, round=(earlier.round or 1) + 1 if before is not None else None)
    if row.kind == "response":
        result = msg.get("result")
        if eras.result_type(result) != "input_required":
            return NO_NOTES
        asked = eras.input_requests(result)
        return RowNotes(input_requests=tuple((key, item["method"]) for key, item in asked.items()))
    return NO_NOTES


def retried_as(store, row) -> int | None:
    """The seq of the request that retried this input_required answer, if it was retried (a bounded scan)."""
    if store is None or row is None or not row_notes(store, row).input_requests:
        return None
    rows = store.rows()
    start = bisect.bisect_right(rows, row.seq, key=lambda r: r.seq)
    for later in rows[start:start + CHAIN_SCAN_ROWS]:
        if later.kind == "request" and later.dir == "to_server" and later.method == row.method:
            if row_notes(store, later).retry_of == row.seq:
                return later.seq
    return None


HTTP_FACTS = ("status", "method", "url", "via", "event_id", "resumed", "note")


def http_view(http: Any) -> dict | None:
    """A record's `http` as text for a small table: {title, facts: [(name, text)], headers: [(name, text)]}."""
    if not isinstance(http, dict):
        return None

    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    facts = [(name, text(http[name])) for name in HTTP_FACTS if http.get(name) is not None]
    facts += [(str(name), text(value)) for name, value in http.items()
              if name not in HTTP_FACTS and name != "headers" and value is not None]
    headers = http.get("headers")
    header_rows = [(str(name), text(value)) for name, value in headers.items()] if isinstance(headers, dict) else []
    if http.get("status") is not None:
        title = f"HTTP {text(http['status'])}"
    elif http.get("method"):
        title = f"HTTP {text(http['method'])} {text(http.get('url') or '')}".rstrip()
    else:
        title = "HTTP"
    return {"title": title, "facts": facts, "headers": header_rows}


def tojson_text(value: Any) -> str:
    """JSON as a person reads it: non-ASCII kept (`Zürich`, not `Z\\u00fcrich`); Jinja escapes it for HTML."""
    return json.dumps(value, ensure_ascii=False, default=str)


def url_part(value) -> str:
    """Server text as one URL part, for a query value (or a path segment): every character but ASCII letters,
    digits and ``_.-~`` percent-encoded, ``/ ? # % & = +`` included, so the text can never end the part it is in.

    Jinja's ``urlencode`` leaves ``/`` alone, so a tool named ``../export`` became a GET of ``/export``. A path
    segment is still not safe on its own: the URL standard resolves a segment of ``..`` or ``%2e%2e`` before
    the request is sent, and Werkzeug decodes ``%2F`` before routing; the page therefore puts server names in
    query values (``/tool?name=...``), where neither happens.
    """
    return quote(str(value), safe="")


def register_filters(app) -> None:
    """Make the helpers available to templates."""
    from inspector.web import get_inspector

    def _store():
        return get_inspector().store

    def shown_argv(argv) -> list[str]:
        """A server command as the page shows it: secret options' values and known secrets masked."""
        masker = _store().masker
        return [masker.text(arg) for arg in mask_argv(list(argv or ()))[0]]

    app.jinja_env.filters.update(clock=clock, size_text=size_text, latency_text=latency_text,
                                 pretty_text=pretty_text, tojson_text=tojson_text, basename=basename, slug=slug,
                                 url_part=url_part, shown_argv=shown_argv,
                                 shown_url=lambda url: _store().masker.text(mask_url(url)) if url else url,
                                 masked=lambda text: _store().masker.text(str(text)))
    app.jinja_env.globals.update(text_diff=text_diff, pretty=pretty, text_block=text_block, image_data_uri=image_data_uri,
                                 safe_link=safe_link, state_label=state_label, http_view=http_view,
                                 explain_error=eras.explain_error,
                                 row_notes=lambda row: row_notes(_store(), row),
                                 retried_as=lambda row: retried_as(_store(), row))
