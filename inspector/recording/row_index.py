"""The timeline's row index: what the page shows per record, in compact columns, not one object per row.

Each record costs 35 bytes: array('q') for the offset, array('d') for t, 32-bit columns for the length, the id and
the linked row (a seq delta: the paired request or response, a stderr line's burst head), small integer codes for
kind, direction, level, origin and method (the last two through shared tables); consecutive seqs cost nothing per
row (seq_runs.py). The rare value too wide for its column is kept aside: an id beyond int32 is read back from the
file (like a string id), a link 2**31 seqs away or a 4 GiB line goes to a dict by position. What a row shows
beyond that (the preview, a string id) is read back from the recording at (offset, length) when a row is rendered,
through a small LRU. `Row` is a view of one position: it holds no copy.

To add a per-row value: one more array in `RowIndex.__init__` (a column), one append in `_append`, one extend
in `extend_unpaired` (view's fast path: every column must grow by one per row there too), one property on
`Row`; in both, before the seq column, which grows last (readers take no lock: a row exists once its seq does).
Keep values numeric (a seq, a code): a str or an object per row is what this module exists to avoid. Give a
column the narrowest type its values need, and a fallback for the rare wider value (see the link column).
"""

from __future__ import annotations

import json
import threading
from array import array
from collections import OrderedDict
from typing import Callable, NamedTuple

from inspector.protocol import jsonrpc
from inspector.protocol.bursts import Bursts
from inspector.recording.codes import (  # the tables, named here too: callers import them from the index
    DIR_CODE, DIRS, KIND_CODE, LEVEL_CODE, LEVELS, LOG_LEVELS, STDERR_KIND, TIMELINE_KINDS, Codes,
    notification_row,
)
from inspector.protocol.json import loads
from inspector.recording.files import RECORD_DEPTH
from inspector.recording.seq_runs import SeqRuns
from inspector.protocol.records import (
    EVENT, FROM_SERVER, INVALID, MESSAGE, STDERR, Pairer, Pairing, Record, describe_event, from_dict, message_kind,
)

PREVIEW_CHARS = 200
NO_ID, ID_IN_FILE = -(2 ** 31), -(2 ** 31) + 1
"""The id column's values for a row without an id, and for an id that is not a 32-bit integer (a string, a float,
null, 2**40): its text is read back from the file."""
FAR_LINK, LONG_LINE = -(2 ** 31), 2 ** 32 - 1
"""The link and length columns' values for a value they cannot hold: it is in RowIndex.far_links / long_lines.
The length column saturates, so a search (it never reads a line over MAX_LINE_BYTES) may read it as it is."""
METHOD_CODES, ORIGIN_CODES = 0xFFFF, 0xFF
"""How many distinct methods and origins get a code (array('H') and array('B') hold them); others are read back."""
DERIVED_CACHED = 4096
"""Rows whose file-derived text (preview, id) is kept: a few pages' worth."""
LATE, UNMATCHED = 1, 2


class Derived(NamedTuple):
    """What a row shows that is read back from its line."""

    preview: str
    id_text: str
    method: str | None
    origin: str | None


class RowIndex:
    """Append-only columns, one position per record in seq order. Appends happen under the Store's lock; reads
    of positions below a length read earlier need no lock (arrays only grow; a position never moves)."""

    def __init__(self, read_at: Callable[[int, int], bytes]) -> None:
        self.read_at = read_at
        self.seq = SeqRuns()
        self.offset, self.length, self.t = array("q"), array("I"), array("d")
        self.ids, self.link = array("i"), array("i")
        """link: another row's seq minus this row's: a request's response, a response's request (0: unpaired), a
        stderr row's burst head (bursts.py; 0: itself). One column for both: a stderr row is never paired."""
        self.far_links: dict[int, int] = {}  # position → linked seq; in practice empty (2**31 rows apart)
        self.long_lines: dict[int, int] = {}  # position → length over 4 GiB (no cap applies over HTTP)
        self.kind, self.dir, self.level, self.origin, self.flags = (array("B") for _ in range(5))
        self.method = array("H")
        self.bursts = Bursts()
        self.methods = Codes(METHOD_CODES)
        self.origins = Codes(ORIGIN_CODES)
        self.warnings: dict[int, str] = {}
        """seq → the protocol warning found on that row (set by the Problems service; few rows have one)."""
        self.pairer = Pairer()
        self._derived: OrderedDict[int, Derived] = OrderedDict()
        self._derived_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.seq)

    # -- adding -----------------------------------------------------------------------------------------------

    def add_batch(self, records: list[Record], lines: list[bytes], offset: int) -> None:
        """Index the records of one write: `lines` are their lines as written, the first at `offset`. A run of
        notifications (most of a flood) goes in column by column, as view's fast path does and exactly as `add`
        would index each; every other record goes through `add`, in order."""
        run: list[tuple] = []
        for record, line in zip(records, lines):
            length = len(line) - 1  # the newline is no part of the record
            row = notification_row(record, offset, length, self.methods, self.origins) \
                if self.bursts.open is None and length < LONG_LINE else None
            if row is not None:
                run.append(row)
            else:
                if run:
                    self.extend_unpaired(run)
                    run = []
                self.add(record, offset, length)
            offset += length + 1
        if run:
            self.extend_unpaired(run)

    def add(self, record: Record, offset: int, length: int) -> None:
        """Index a written record: its summary, and its pairing with an earlier request."""
        kind = message_kind(record)
        msg = record.msg if record.kind == MESSAGE else None
        pairing = self.pairer.observe(record, kind)  # classified once
        own_method = msg["method"] if kind in (jsonrpc.NOTIFICATION, jsonrpc.REQUEST) else None  # a str: classified
        level = None
        if own_method == "notifications/message" and isinstance(msg.get("params"), dict):
            level = msg["params"].get("level")
        ident = msg.get("id", NO_ID) if isinstance(msg, dict) else NO_ID
        # Without an open burst, only a stderr line changes anything there (most of a flood skips the call).
        burst = self.bursts.observe(record.kind, record.dir, record.seq, record.t, record.text) \
            if record.kind == STDERR or self.bursts.open is not None else None
        self._append(record.seq, record.t, kind, FROM_SERVER if record.kind == STDERR else record.dir,
                     pairing.method or own_method, ident, level, record.origin, pairing, offset, length, burst)

    def extend_unpaired(self, rows: list[tuple]) -> None:
        """Index notifications and stderr lines read from a recording (the view's fast path, row_load.py), column
        by column: rows of (seq, t, offset, length, kind code, dir code, method code, level code, origin code, burst
        head's seq or 0); no id, no pairing. The caller has fed the burst tracker (self.bursts) in seq order."""
        count = len(rows)
        seq, t, offset, length, kind, direction, method, level, origin, burst = zip(*rows)
        self.t.extend(t)
        self.offset.extend(offset)
        self.length.extend(length)
        self.kind.extend(kind)
        self.dir.extend(direction)
        self.method.extend(method)
        self.level.extend(level)
        self.origin.extend(origin)
        self.ids.extend(array("i", [NO_ID]) * count)
        if any(burst):  # a stderr line links to its burst's first line, as _append links it
            start = len(self.seq)  # the rows' positions: the seq column grows last
            self.link.extend(array("i", [self._link_code(start + j, one, head) if head else 0
                                         for j, (one, head) in enumerate(zip(seq, burst))]))
        else:
            self.link.extend(array("i", [0]) * count)  # notifications alone (a flood's batch): no loop per row
        self.flags.extend(array("B", [0]) * count)
        self.seq.extend(seq)  # last: the rows exist (len, position) once every column holds them

    def _append(self, seq: int, t: float, kind: str, direction: str | None, method: str | None, ident,
                level, origin: str | None, pairing: Pairing, offset: int, length: int, burst: int | None) -> None:
        position = len(self.seq)
        if pairing.pair_seq is not None:
            request = self.position(pairing.pair_seq)
            if request is not None:
                self.link[request] = self._link_code(request, pairing.pair_seq, seq)
        self.t.append(t)
        self.offset.append(offset)
        self.length.append(self._length_code(position, length))
        self.kind.append(KIND_CODE[kind])
        self.dir.append(DIR_CODE.get(direction, 0))
        self.method.append(self.methods.code(method))
        self.ids.append(_id_code(ident))
        self.level.append(LEVEL_CODE.get(level, 0) if isinstance(level, str) else 0)
        self.origin.append(self.origins.code(origin))
        linked = burst if burst is not None else pairing.pair_seq
        self.link.append(self._link_code(position, seq, linked) if linked else 0)
        self.flags.append((LATE if pairing.late else 0) | (UNMATCHED if pairing.unmatched else 0))
        # Last: readers take no lock, and the seq column is what makes a row exist (len, position), so a row is
        # never seen before every one of its columns holds it.
        self.seq.append(seq)

    def _link_code(self, position: int, seq: int, linked: int) -> int:
        """The link column's value for the row at position (seq) linked to the row of seq `linked`."""
        delta = linked - seq
        if FAR_LINK < delta < 2 ** 31:
            return delta
        self.far_links[position] = linked  # before the column says so: readers take no lock
        return FAR_LINK

    def _length_code(self, position: int, length: int) -> int:
        if length < LONG_LINE:
            return length
        self.long_lines[position] = length
        return LONG_LINE

    # -- finding ----------------------------------------------------------------------------------------------

    def position(self, seq: int) -> int | None:
        """The position of a seq (arithmetic within a run of consecutive seqs: seq_runs.py)."""
        return self.seq.position(seq)

    def after(self, seq: int) -> int:
        """The first position whose seq is greater than seq."""
        return self.seq.after(seq)

    def before(self, seq: int) -> int:
        """The first position whose seq is not less than seq (so positions below it are older)."""
        return self.seq.before(seq)

    def pair_seq(self, i: int) -> int | None:
        """The seq of the request or response paired with position i, or None."""
        return self._linked(i) if self.link[i] and self.kind[i] != STDERR_KIND else None

    def burst_head(self, i: int) -> int | None:
        """A stderr row's burst: the seq of its first line (None for any other row)."""
        return self._linked(i) if self.kind[i] == STDERR_KIND else None

    def _linked(self, i: int) -> int:
        delta = self.link[i]
        return self.far_links[i] if delta == FAR_LINK else self.seq[i] + delta

    def length_at(self, i: int) -> int:
        """The length of the line at position i (the length column, or long_lines beyond its range)."""
        length = self.length[i]
        return length if length != LONG_LINE else self.long_lines[i]

    def row(self, i: int) -> "Row":
        return Row(self, i)

    def seqs_of_kind(self, kind: str) -> list[int]:
        """The seqs of every row of one kind, found in C (a byte search of the kind column)."""
        n = len(self.seq)  # first: the kind column may already hold a row whose seq is not appended yet
        column, code, out = self.kind.tobytes(), bytes([KIND_CODE[kind]]), []
        i = column.find(code, 0, n)
        while i >= 0:
            out.append(self.seq[i])
            i = column.find(code, i + 1, n)
        return out

    # -- read back from the file ------------------------------------------------------------------------------

    def record_at(self, i: int) -> Record | None:
        """The full record at a position, read from the file (None when its line cannot be read back)."""
        try:
            return from_dict(loads(self.read_at(self.offset[i], self.length_at(i)), RECORD_DEPTH))
        except ValueError:  # a line the view's fast path took by its prefix, damaged further in
            return None

    def derived(self, i: int) -> Derived:
        """Preview, id, method and origin text for a row: from the LRU, or read back from its line."""
        seq = self.seq[i]
        with self._derived_lock:
            found = self._derived.get(seq)
            if found is not None:
                self._derived.move_to_end(seq)
                return found
        record = self.record_at(i)
        found = _derive(record) if record is not None else Derived(
            "(this line of the recording could not be read back)", "", None, None)
        with self._derived_lock:
            self._derived[seq] = found
            while len(self._derived) > DERIVED_CACHED:
                self._derived.popitem(last=False)
        return found

    def method_of(self, i: int) -> str | None:
        code = self.method[i]
        if code != self.methods.overflow:
            return self.methods.values[code]
        if self.kind[i] in (KIND_CODE["response"], KIND_CODE["error"]) and self.link[i]:
            request = self.position(self.pair_seq(i))  # a response shows its request's method
            return self.derived(request).method if request is not None else None
        return self.derived(i).method


def _id_code(ident) -> int:
    if ident is NO_ID:
        return NO_ID
    if type(ident) is int and ID_IN_FILE < ident < 2 ** 31:
        return ident
    return ID_IN_FILE


def _derive(record: Record) -> Derived:
    msg = record.msg if record.kind == MESSAGE else None
    id_text = json.dumps(msg["id"], ensure_ascii=False)[:40] if isinstance(msg, dict) and "id" in msg else ""
    return Derived(preview(record), id_text, jsonrpc.method_of(msg), record.origin)


class Row:
    """One row of the timeline, read from the index's columns when asked (a view: it holds no copy)."""

    __slots__ = ("_index", "_i")

    def __init__(self, index: RowIndex, i: int) -> None:
        self._index, self._i = index, i

    seq = property(lambda self: self._index.seq[self._i])
    t = property(lambda self: self._index.t[self._i])
    kind = property(lambda self: TIMELINE_KINDS[self._index.kind[self._i]])
    """request, response, notification, error, batch, invalid, stderr or event."""
    dir = property(lambda self: DIRS[self._index.dir[self._i]])
    method = property(lambda self: self._index.method_of(self._i))
    offset = property(lambda self: self._index.offset[self._i])
    length = property(lambda self: self._index.length_at(self._i))
    size = length
    level = property(lambda self: LEVELS[self._index.level[self._i]])
    """The level of a notifications/message log row (debug ... emergency)."""
    late = property(lambda self: bool(self._index.flags[self._i] & LATE))
    unmatched = property(lambda self: bool(self._index.flags[self._i] & UNMATCHED))
    preview = property(lambda self: self._index.derived(self._i).preview)
    burst = property(lambda self: self._index.burst_head(self._i))
    """A stderr row: the seq of the first line of its burst (protocol/bursts.py), which the page shows as one row."""

    pair_seq = property(lambda self: self._index.pair_seq(self._i))
    """The paired row's seq: a request's response, a response's request (None when unpaired)."""

    @property
    def id_text(self) -> str:
        ident = self._index.ids[self._i]
        if ident == NO_ID:
            return ""
        return str(ident)[:40] if ident != ID_IN_FILE else self._index.derived(self._i).id_text

    @property
    def origin(self) -> str | None:
        index, i = self._index, self._i
        code = index.origin[i]
        return index.origins.values[code] if code != index.origins.overflow else index.derived(i).origin

    @property
    def latency_ms(self) -> float | None:
        """Response time after its request (a response's or error's, paired)."""
        index, i = self._index, self._i
        if index.kind[i] not in (KIND_CODE["response"], KIND_CODE["error"]) or not index.link[i]:
            return None
        request = index.position(index.pair_seq(i))
        return None if request is None else max(0.0, (index.t[i] - index.t[request]) * 1000.0)

    @property
    def warning(self) -> str | None:
        """A protocol warning found on this row (set by the Problems service)."""
        return self._index.warnings.get(self.seq)

    @warning.setter
    def warning(self, text: str | None) -> None:
        if text is None:
            self._index.warnings.pop(self.seq, None)
        else:
            self._index.warnings[self.seq] = text

    def __repr__(self) -> str:
        return f"Row(seq={self.seq}, kind={self.kind!r}, method={self.method!r})"


class Rows:
    """Every row up to a length taken when made, oldest first: a sequence of views, not a copy of the rows."""

    def __init__(self, index: RowIndex, end: int) -> None:
        self._index, self._end = index, end

    def __len__(self) -> int:
        return self._end

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [Row(self._index, i) for i in range(*item.indices(self._end))]
        if item < 0:
            item += self._end
        if not 0 <= item < self._end:
            raise IndexError(item)
        return Row(self._index, item)

    def __iter__(self):
        return (Row(self._index, i) for i in range(self._end))

    def __reversed__(self):
        return (Row(self._index, i) for i in range(self._end - 1, -1, -1))


def preview(record: Record) -> str:
    """The one-line text a row shows for a record."""
    if record.kind == STDERR:
        return (record.text or "")[:PREVIEW_CHARS * 4]
    if record.kind == INVALID:
        return f"{record.error}: {(record.raw or '')[:PREVIEW_CHARS]}"
    if record.kind == EVENT:
        return describe_event(record.event or "", record.detail)
    msg = record.msg
    if isinstance(msg, dict):
        for key in ("params", "result", "error"):
            if key in msg:
                return json.dumps(_without_era_meta(msg[key]), ensure_ascii=False,
                                  separators=(",", ":"))[:PREVIEW_CHARS]
        return ""
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))[:PREVIEW_CHARS]


def _without_era_meta(value):
    """For the one-line preview only: the modern era's _meta keys repeat on every message and hide what differs."""
    if not isinstance(value, dict) or not isinstance(value.get("_meta"), dict):
        return value
    meta = {k: v for k, v in value["_meta"].items() if not k.startswith("io.modelcontextprotocol/")}
    rest = {k: v for k, v in value.items() if k != "_meta"}
    return {**rest, "_meta": meta} if meta else rest
