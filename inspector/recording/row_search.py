"""Filters and search over the row index: the whole session, never only what a page holds.

The column filters (direction, kind, method, stderr) compare codes. The free-text search reads the recording
itself, a chunk of whole rows at a time, from the cursor onward (or from the newest row back), and stops once it
has found what was asked for: a search costs what it returns, not the length of the session.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterator

from inspector.recording import format as limits  # the caps are read at call time: tests lower them
from inspector.recording.row_index import DIR_CODE, KIND_CODE, TIMELINE_KINDS, RowIndex
from inspector.protocol.records import FROM_SERVER

CHUNK_BYTES = 1 << 20
"""How much of the recording one search step reads: whole rows, about this many bytes."""


@dataclass(frozen=True)
class Filters:
    """Timeline filters; they run here, over the whole session, never only over what a page holds."""

    dir: str = ""
    kind: str = ""
    method: str = ""
    stderr: bool = True
    q: str = ""

    @classmethod
    def from_mapping(cls, data) -> "Filters":
        """From request args or a websocket message; unknown values fall back to 'all'."""
        direction = str(data.get("dir") or "")
        kind = str(data.get("kind") or "")
        stderr = data.get("stderr")
        show_stderr = stderr in (True, "on", "true", "1", 1) if stderr is not None else not data.get("filtered")
        return cls(dir=direction if direction in ("to_server", "from_server") else "",
                   kind=kind if kind in TIMELINE_KINDS else "",
                   method=str(data.get("method") or "")[:200], stderr=show_stderr, q=str(data.get("q") or "")[:500])

    def is_default(self) -> bool:
        """No filter set."""
        return self == Filters()

    def matches(self, row) -> bool:
        """Whether a row passes every filter but the free-text search."""
        if row.kind == "stderr" and not self.stderr:
            return False
        if self.dir:
            row_dir = FROM_SERVER if row.kind == "stderr" else row.dir
            if row_dir != self.dir:
                return False
        if self.kind and row.kind != self.kind:
            return False
        if self.method and (row.method is None or self.method.lower() not in row.method.lower()):
            return False
        return True


def column_test(index: RowIndex, filters: Filters) -> Callable[[int], bool]:
    """Filters.matches on positions, comparing codes (a method filter: the set of matching method codes)."""
    stderr = KIND_CODE["stderr"]
    hide_stderr = not filters.stderr
    direction = DIR_CODE[filters.dir] if filters.dir else None
    kind = KIND_CODE[filters.kind] if filters.kind else None
    wanted = filters.method.lower()
    methods = index.methods.matching(lambda name: wanted in name.lower()) if wanted else None
    overflow = index.methods.overflow
    kinds, dirs, codes = index.kind, index.dir, index.method

    def test(i: int) -> bool:
        row_kind = kinds[i]
        if row_kind == stderr and hide_stderr:
            return False
        if direction is not None and dirs[i] != direction:  # a stderr row's direction is from_server
            return False
        if kind is not None and row_kind != kind:
            return False
        if methods is not None and codes[i] not in methods:
            if codes[i] != overflow:
                return False
            name = index.method_of(i)  # beyond the method table: read back from the file
            return name is not None and wanted in name.lower()
        return True

    return test


def forward(index: RowIndex, filters: Filters, start: int, limit: int) -> tuple[list[int], int]:
    """Positions from `start` on that pass the filters (at most limit), and the last position looked at."""
    end = len(index)
    test = column_test(index, filters)
    out: list[int] = []
    last = start - 1
    candidates = _hits(index, filters.q, start, end) if filters.q else iter(range(start, end))
    for i in candidates:
        if len(out) >= limit:
            break
        last = i
        if test(i):
            out.append(i)
    if len(out) < limit:
        last = end - 1  # every candidate was looked at
    return out, last


def backward(index: RowIndex, filters: Filters, end: int, limit: int) -> list[int]:
    """The newest positions below `end` that pass the filters (at most limit), newest first."""
    test = column_test(index, filters)
    out: list[int] = []
    candidates = _hits_backward(index, filters.q, 0, end) if filters.q else iter(range(end - 1, -1, -1))
    for i in candidates:
        if test(i):
            out.append(i)
            if len(out) >= limit:
                break
    return out


def _hits(index: RowIndex, text: str, start: int, end: int) -> Iterator[int]:
    """Positions in [start, end) whose recorded line contains text (case-insensitive), oldest first."""
    i = start
    while i < end:
        j = _chunk_end(index, i, end)
        yield from _chunk_hits(index, text, i, j)
        i = j


def _hits_backward(index: RowIndex, text: str, start: int, end: int) -> Iterator[int]:
    j = end
    while j > start:
        i = _chunk_start(index, start, j)
        yield from reversed(_chunk_hits(index, text, i, j))
        j = i


def _chunk_end(index: RowIndex, i: int, end: int) -> int:
    """The end of a chunk of rows starting at i: about CHUNK_BYTES of the file, at least one row."""
    j = bisect.bisect_left(index.offset, index.offset[i] + CHUNK_BYTES, i + 1, end)
    if j - 1 > i and index.offset[j - 1] + index.length[j - 1] - index.offset[i] > 2 * CHUNK_BYTES:
        j -= 1  # its last row is long: it gets a chunk of its own
    return j


def _chunk_start(index: RowIndex, start: int, j: int) -> int:
    last_end = index.offset[j - 1] + index.length[j - 1]
    i = bisect.bisect_left(index.offset, last_end - CHUNK_BYTES, start, j - 1)
    if i < j - 1 and last_end - index.offset[i] > 2 * CHUNK_BYTES:
        i += 1
    return i


def _chunk_hits(index: RowIndex, text: str, i: int, j: int) -> list[int]:
    """Positions in [i, j) whose line contains text, case-folded like str.casefold (ASCII lines: bytes.lower)."""
    needle = text.casefold()
    if "\n" in needle:
        return []  # a line holds no newline
    base = index.offset[i]
    size = index.offset[j - 1] + index.length[j - 1] - base
    if size > limits.MAX_LINE_BYTES and j - i == 1:
        return []  # an oversized line is never held whole (the reader skips it too)
    data = index.read_at(base, size)
    if needle.isascii() and data.isascii():
        return _ascii_hits(index, needle.encode(), data.lower(), base, i, j)
    if needle not in data.decode("utf-8", "replace").casefold():
        return []  # a newline never folds into or out of anything: no line of the chunk holds it either
    ascii_needle = needle.encode() if needle.isascii() else None
    hits = []
    for r in range(i, j):
        start = index.offset[r] - base
        line = data[start:start + index.length[r]]
        # bytes.lower() folds ASCII only: "É" in a line would never match "é" (nor "É": the needle is folded)
        if ascii_needle is not None and line.isascii():
            found = ascii_needle in line.lower()
        else:
            found = needle in line.decode("utf-8", "replace").casefold()
        if found:
            hits.append(r)
    return hits


def _ascii_hits(index: RowIndex, needle: bytes, lowered: bytes, base: int, i: int, j: int) -> list[int]:
    """The byte scan of an all-ASCII chunk: find, map the hit to its row, go on after that row."""
    hits = []
    pos = lowered.find(needle)
    while pos >= 0:
        r = bisect.bisect_right(index.offset, base + pos, i, j) - 1
        row_end = index.offset[r] + index.length[r] - base if r >= i else 0
        if r >= i and pos + len(needle) <= row_end:
            hits.append(r)
            pos = lowered.find(needle, row_end)
        else:  # in a line that is no row (a skipped line between rows): go on after it
            newline = lowered.find(b"\n", pos)
            pos = lowered.find(needle, newline + 1) if newline >= 0 else -1
    return hits
