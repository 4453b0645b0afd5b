"""The session's timeline: assigns seq, records first, keeps a small summary per row, wakes live viewers.

Full records live only in the recording file (or an unlinked spool file with --no-record) and are read back
by offset, so a 100,000-message session costs a summary per row in memory, not the messages themselves.
Live viewers do not get queues: each keeps a cursor (the last seq it sent) and reads what is newer, so a
slow or reconnecting browser can neither lose nor duplicate rows, and the producer never waits for one.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Hashable, Iterable

from inspector.protocol import jsonrpc
from inspector.protocol.bursts import Bursts
from inspector.protocol.json import loads
from inspector.recording.files import RECORD_DEPTH, RecordingReader, RecordingWriter
from inspector.protocol.secrets import Masker
from inspector.protocol.records import (
    EVENT, FROM_SERVER, INVALID, MESSAGE, STDERR, Pairer, Record, describe_event, from_dict,
    message_kind,
)

PREVIEW_CHARS = 200
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(slots=True)
class Row:
    """What the timeline shows for one record without reading it back from disk."""

    seq: int
    t: float
    kind: str
    """request, response, notification, error, batch, invalid, stderr or event."""
    dir: str | None
    method: str | None
    id_text: str
    size: int
    preview: str
    offset: int
    length: int
    pair_seq: int | None = None
    latency_ms: float | None = None
    late: bool = False
    unmatched: bool = False
    origin: str | None = None
    level: str | None = None
    """The level of a notifications/message log row (debug ... emergency)."""
    warning: str | None = None
    """A protocol warning found on this row (set by the Problems service)."""
    burst: int | None = None
    """A stderr row: the seq of the first line of its burst (protocol/bursts.py), which the page shows as one row."""


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

    def matches(self, row: Row) -> bool:
        """Whether a row passes every filter but the free-text search."""
        if row.kind == STDERR and not self.stderr:
            return False
        if self.dir:
            row_dir = FROM_SERVER if row.kind == STDERR else row.dir
            if row_dir != self.dir:
                return False
        if self.kind and row.kind != self.kind:
            return False
        if self.method and (row.method is None or self.method.lower() not in row.method.lower()):
            return False
        return True


TIMELINE_KINDS = ("request", "response", "notification", "error", "batch", "invalid", "stderr", "event")


class Store:
    """Thread-safe timeline of one inspector run (it spans restarts of the server)."""

    def __init__(self, writer: RecordingWriter, masker: Masker | None = None) -> None:
        self.writer = writer
        self.masker = masker or Masker()
        """The run's known secrets: masked in every record before it is written (the runner teaches it more)."""
        self._lock = threading.Lock()
        self.changed = threading.Condition(self._lock)
        self._rows: list[Row] = []
        self._by_seq: dict[int, int] = {}
        self._pairer = Pairer()
        self._bursts = Bursts()
        self._seq = 0
        self._signals: deque[tuple[int, Hashable]] = deque(maxlen=2000)
        self._signal_seq = 0
        self.closed = False
        self.listeners: list = []
        """Called with each record right after it is stored, under the lock (so in seq order): keep them quick."""

    # -- producing --------------------------------------------------------------------------------------------

    def add(self, record: Record) -> Record:
        """Number, timestamp and write the record, then make it visible. Returns it with seq and t set."""
        with self._lock:
            if self.closed:
                return record
            self._seq += 1
            record.seq = self._seq
            if not record.t:
                record.t = time.time()
            line = self.masker.record(record)  # masked before the disk, so the page, view and export never see it
            offset = self.writer.write_lines(line)  # recorded first: nothing is shown that is not on disk
            self._index(record, offset, len(line) - 1)
            for listener in self.listeners:
                listener(record)
            self.changed.notify_all()
        return record

    def _index(self, record: Record, offset: int, length: int) -> None:
        """Make a written record a row (the lock is held)."""
        pairing = self._pairer.observe(record)
        row = _summarise(record, offset, length)
        row.method = pairing.method or row.method
        row.pair_seq, row.latency_ms = pairing.pair_seq, pairing.latency_ms
        row.late, row.unmatched = pairing.late, pairing.unmatched
        row.burst = self._bursts.observe(record.kind, record.dir, record.seq, record.t, record.text)
        if pairing.pair_seq is not None:
            request_row = self._row(pairing.pair_seq)
            if request_row is not None:
                request_row.pair_seq = record.seq
        self._by_seq[record.seq] = len(self._rows)
        self._rows.append(row)

    def load_existing(self) -> tuple[dict | None, list[str]]:
        """Index an existing recording (for view): rows keep the file's seq and t; bad lines are skipped.

        Read by the one RecordingReader, so `view` skips and reports exactly what `read_recording` does. Returns
        the header and the problems. Raises RecordingError for a file of another format or a newer version.
        """
        reader = RecordingReader()
        with self._lock:
            reader.last_seq = self._seq
            for line in self.writer.read_lines():
                record = reader.feed(line)
                if isinstance(record, Record):
                    self._seq = record.seq
                    self._index(record, line.offset, len(line.data))
        return reader.header, reader.finish()

    def signal(self, change: Hashable) -> None:
        """Tell live viewers that something the page shows changed (a session.changes.Change; the store keeps it
        opaque, so the recording layer knows nothing of the page)."""
        with self._lock:
            self._signal_seq += 1
            self._signals.append((self._signal_seq, change))
            self.changed.notify_all()

    def wake(self) -> None:
        """Wake every waiter without a change (a viewer's own news, such as new filters)."""
        with self._lock:
            self.changed.notify_all()

    def close(self) -> None:
        """No more records; wake everyone."""
        with self._lock:
            self.closed = True
            self.changed.notify_all()

    # -- reading ----------------------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The newest seq."""
        return self._seq

    @property
    def signal_seq(self) -> int:
        """The newest signal number."""
        return self._signal_seq

    def _row(self, seq: int) -> Row | None:
        index = self._by_seq.get(seq)
        return self._rows[index] if index is not None else None

    def row(self, seq: int) -> Row | None:
        """The summary of one row."""
        with self._lock:
            return self._row(seq)

    def rows(self) -> list[Row]:
        """Every row, oldest first (a copy)."""
        with self._lock:
            return list(self._rows)

    def record(self, seq: int) -> Record | None:
        """Read one full record back from the file."""
        with self._lock:
            row = self._row(seq)
        if row is None:
            return None
        return from_dict(loads(self.writer.read_at(row.offset, row.length), RECORD_DEPTH))

    def raw_line(self, seq: int) -> bytes | None:
        """One record's JSON line as written."""
        with self._lock:
            row = self._row(seq)
        return None if row is None else self.writer.read_at(row.offset, row.length)

    def since(self, seq: int, filters: Filters, limit: int) -> tuple[list[Row], int]:
        """Rows newer than seq that pass the filters (at most limit), and the seq to continue from."""
        with self._lock:
            start = bisect.bisect_right(self._rows, seq, key=lambda r: r.seq)
            candidates = self._rows[start:]
        out: list[Row] = []
        cursor = seq
        matcher = self._matcher(filters, candidates)
        for row in candidates:
            if len(out) >= limit:
                break
            cursor = row.seq
            if matcher(row):
                out.append(row)
        return out, cursor

    def newest(self, filters: Filters, limit: int, before: int | None = None) -> list[Row]:
        """The newest rows passing the filters, older than `before` when given, oldest first."""
        with self._lock:
            end = len(self._rows) if before is None else bisect.bisect_left(self._rows, before, key=lambda r: r.seq)
            candidates = self._rows[:end]
        matcher = self._matcher(filters, candidates)
        out: list[Row] = []
        for row in reversed(candidates):
            if matcher(row):
                out.append(row)
                if len(out) >= limit:
                    break
        out.reverse()
        return out

    def wait(self, seq: int, signal_seq: int, timeout: float) -> None:
        """Block until there is a row newer than seq, a signal newer than signal_seq, or the timeout."""
        with self._lock:
            if self._seq > seq or self._signal_seq > signal_seq or self.closed:
                return
            self.changed.wait(timeout)

    def wait_for(self, predicate, timeout: float) -> bool:
        """Until predicate() holds, re-checked at each new row and signal, at most timeout s; its last value.

        Keep predicate to plain reads: it runs under the store's lock."""
        with self.changed:
            return bool(self.changed.wait_for(predicate, timeout))

    def signals_since(self, signal_seq: int) -> tuple[list[Hashable] | None, int]:
        """Changes signalled after signal_seq (deduplicated, in order); None when some were dropped."""
        with self._lock:
            newest = self._signal_seq
            if self._signals and self._signals[0][0] > signal_seq + 1:
                return None, newest
            names: list[Hashable] = []
            for number, name in self._signals:
                if number > signal_seq and name not in names:
                    names.append(name)
        return names, newest

    def _matcher(self, filters: Filters, candidates: Iterable[Row]):
        if not filters.q:
            return filters.matches
        hits = self._search(filters.q, candidates)
        return lambda row: row.seq in hits and filters.matches(row)

    def _search(self, text: str, candidates: Iterable[Row]) -> set[int]:
        """Seqs whose recorded line contains text (case-insensitive): a scan of the file, not of the page."""
        needle = text.casefold()
        ascii_needle = needle.encode("utf-8") if needle.isascii() else None
        wanted = {row.offset: row.seq for row in candidates}
        hits: set[int] = set()
        for offset, line in self.writer.read_all_lines():
            seq = wanted.get(offset)
            if seq is None:
                continue
            # bytes.lower() folds ASCII only: "É" in a line would never match "é" (nor "É": the needle is folded)
            if ascii_needle is not None and line.isascii():
                found = ascii_needle in line.lower()
            else:
                found = needle in line.decode("utf-8", "replace").casefold()
            if found:
                hits.add(seq)
        return hits

    def __len__(self) -> int:
        return len(self._rows)


def _summarise(record: Record, offset: int, length: int) -> Row:
    kind = message_kind(record)
    method = jsonrpc.method_of(record.msg) if record.kind == MESSAGE else None
    id_text = ""
    if record.kind == MESSAGE and isinstance(record.msg, dict) and "id" in record.msg:
        id_text = json.dumps(record.msg["id"], ensure_ascii=False)[:40]
    level = None
    if method == "notifications/message" and isinstance(record.msg.get("params"), dict):
        value = record.msg["params"].get("level")
        level = value if value in LOG_LEVELS else None
    return Row(seq=record.seq, t=record.t, kind=kind, dir=record.dir if record.kind != STDERR else FROM_SERVER,
               method=method, id_text=id_text, size=length, preview=_preview(record), offset=offset,
               length=length, origin=record.origin, level=level)


def _preview(record: Record) -> str:
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
