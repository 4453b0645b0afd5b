"""Stderr as the page shows it: burst rows in the timeline, and the lines a server wrote during one tool call.

The Store gives each stderr row its burst's head seq (protocol/bursts.py); here a list of timeline rows becomes
the items the page renders, a burst being one item that holds all its lines read back through the store, so a
burst cut by a page boundary, a filter or a search is still shown whole. Lines are the rows' previews: each line
stays its own record, and Copy JSON on the recording gives any line in full.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import bursts

STDERR = "stderr"
SCAN_ROWS = 4 * bursts.MAX_LINES
"""How far past its head a burst's lines are looked for (server messages can sit between them)."""
CALL_LINES_SHOWN = 400
"""Lines of one call's stderr the result card holds; the count covers all of them."""


@dataclass(frozen=True)
class Line:
    seq: int
    text: str


@dataclass
class BurstRow:
    """One timeline row for a burst of stderr lines."""

    head: int
    t: float
    lines: list[Line]
    size: int
    is_burst = True

    @property
    def last(self) -> int:
        return self.lines[-1].seq

    @property
    def headline(self) -> str:
        return bursts.headline([line.text for line in self.lines])

    @property
    def causes(self) -> list[str]:
        """The exception lines of earlier tracebacks in a chain (the last one is the headline)."""
        found = bursts.exception_lines([line.text for line in self.lines])
        return [line for line in found if line != self.headline]


def _ends_burst(row) -> bool:
    """A row between two lines of a burst that ends it: anything but a message or bad line from the server."""
    return row.kind == "event" or row.dir != "from_server"


def burst_of(store, head: int) -> BurstRow | None:
    """The burst whose first line is `head`, with every line recorded so far."""
    first = store.row(head)
    if first is None or first.kind != STDERR:
        return None
    lines, size = [Line(first.seq, first.preview)], first.size
    if first.burst == head:
        for seq in range(head + 1, min(store.last_seq, head + SCAN_ROWS) + 1):
            row = store.row(seq)
            if row is None or len(lines) >= bursts.MAX_LINES:
                break
            if row.kind == STDERR:
                if row.burst != head:
                    break
                lines.append(Line(row.seq, row.preview))
                size += row.size
            elif _ends_burst(row):
                break
    return BurstRow(head=head, t=first.t, lines=lines, size=size)


def timeline_items(store, rows) -> list:
    """Rows as the timeline shows them: each burst once (at its first line), every other row as it is."""
    items: list = []
    seen: set[int] = set()
    for row in rows:
        if row.kind != STDERR:
            items.append(row)
            continue
        head = row.burst if row.burst is not None else row.seq
        if head in seen:
            continue
        seen.add(head)
        burst = burst_of(store, head)
        items.append(burst if burst is not None else row)
    return items


# -- the stderr of one tool call ----------------------------------------------------------------------------------

@dataclass
class CallStderr:
    """The stderr lines a server wrote while a call was answered: between the request and its answer, and the rest
    of the burst the answer arrived in the middle of."""

    count: int = 0
    lines: list[Line] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    scanned: int = 0
    """The last seq looked at."""
    open_head: int | None = None
    """The burst still open at the end of the call's window, whose later lines count too."""
    closed: bool = False
    scanning: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Held while rows are read into it: a call's card is rendered by several threads at once (its long poll, each
    live socket), and two scans of the same rows would count them twice."""

    @property
    def headline(self) -> str:
        return bursts.headline([line.text for line in self.lines])


_cache: "weakref.WeakKeyDictionary[Any, OrderedDict[int, CallStderr]]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()
CALLS_CACHED = 256


def call_stderr(store, call) -> CallStderr | None:
    """The stderr of a finished call, or None when there is none (or the call is still running).

    Records never change, so what was scanned is kept and only newer rows are read at the next render."""
    start = getattr(call, "request_seq", 0)
    end = getattr(call, "response_seq", None) or getattr(call, "ended_seq", None)
    if store is None or not start or not end or call.state == "pending":
        return None
    with _cache_lock:
        per_store = _cache.setdefault(store, OrderedDict())
        found = per_store.get(call.id)
        if found is None or found.scanned < start:
            found = per_store[call.id] = CallStderr(scanned=start)
            while len(per_store) > CALLS_CACHED:
                per_store.popitem(last=False)
    with found.scanning:
        _extend(store, found, end)
    return found if found.count else None


def _extend(store, found: CallStderr, end: int) -> None:
    """Read the rows after found.scanned: every stderr line up to the answer (`end`), then the burst the answer came
    in the middle of, or one that starts within bursts.GAP_SECONDS after it (stdout and stderr are read by two
    threads, so a traceback written before the answer is often recorded after it)."""
    last = store.last_seq
    while not found.closed and found.scanned < last:
        seq = found.scanned + 1
        row = store.row(seq)
        if row is None:
            break
        head = (row.burst if row.burst is not None else row.seq) if row.kind == STDERR else None
        if seq > end and not _still_open(store, found, row, head, end):
            found.closed = True
            break
        if head is not None:
            if head not in found.heads:
                found.heads.append(head)
            found.count += 1
            if len(found.lines) < CALL_LINES_SHOWN:
                found.lines.append(Line(row.seq, row.preview))
            found.open_head = head
        elif _ends_burst(row):
            found.open_head = None
        found.scanned = seq


def _still_open(store, found: CallStderr, row, head: int | None, end: int) -> bool:
    """Whether a row after the call's answer still belongs to the call's stderr (or may sit inside it)."""
    if row.seq > end + SCAN_ROWS or (head is None and _ends_burst(row)):
        return False
    if head is None or head == found.open_head:
        return True
    answer = store.row(end)
    starts_close = answer is not None and row.t - answer.t <= bursts.GAP_SECONDS
    return found.open_head is None and head == row.seq and starts_close


def register(app) -> None:
    """The templates' helpers for stderr."""
    from inspector.web import get_inspector

    app.jinja_env.globals.update(
        timeline_items=lambda rows: timeline_items(get_inspector().store, rows),
        call_stderr=lambda call: call_stderr(get_inspector().store, call))
