"""The session's timeline: assigns seq, records first, keeps a small summary per row, wakes live viewers.

Full records live only in the recording file (or an unlinked spool file with --no-record) and are read back
by offset, so a 100,000-message session costs a summary per row in memory, not the messages themselves.
Live viewers do not get queues: each keeps a cursor (the last seq it sent) and reads what is newer, so a
slow or reconnecting browser can neither lose nor duplicate rows, and the producer never waits for one.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Container, Hashable

from inspector.recording.files import RecordingReader, RecordingWriter, numbered_lines
from inspector.recording.row_load import load_rows
from inspector.recording.row_index import KIND_CODE, LOG_LEVELS, PREVIEW_CHARS, TIMELINE_KINDS, Row, RowIndex, Rows
from inspector.recording.row_search import Filters, backward, forward
from inspector.protocol.secrets import Masker
from inspector.protocol.records import Record

__all__ = ["Filters", "LOG_LEVELS", "PREVIEW_CHARS", "Row", "Store", "TIMELINE_KINDS"]


class Store:
    """Thread-safe timeline of one inspector run (it spans restarts of the server)."""

    def __init__(self, writer: RecordingWriter, masker: Masker | None = None) -> None:
        self.writer = writer
        self.masker = masker or Masker()
        """The run's known secrets: masked in every record before it is written (the runner teaches it more)."""
        self._lock = threading.Lock()
        self.changed = threading.Condition(self._lock)
        self._rows = RowIndex(writer.read_at)
        """The row index (recording/row_index.py): compact columns, previews read back from the file."""
        self._seq = 0
        """The last seq given to a record: numbered under the lock before the batch is written and indexed."""
        self._shown_seq = 0
        """The newest seq readers can find in the row index, set once its whole batch is indexed: readers take no
        lock, and a live tab that read a seq still being written set its cursor past rows it then never got."""
        self._signals: deque[tuple[int, Hashable]] = deque(maxlen=2000)
        self._signal_seq = 0
        self.closed = False
        self.listeners: list = []
        """Called with each batch of records (a list) right after it is stored, under the lock (so in seq order):
        keep them quick."""

    # -- producing --------------------------------------------------------------------------------------------

    def add(self, record: Record) -> Record:
        """Number, timestamp and write the record, then make it visible. Returns it with seq and t set."""
        self.add_batch([record])
        return record

    def add_batch(self, records: list[Record]) -> list[Record]:
        """Number, timestamp and write the records with one os.write, then make them visible together: each is
        indexed, the listeners get the batch once, waiters are woken once. Returns them with seq and t set."""
        with self._lock:
            if self.closed or not records:
                return records
            lines = numbered_lines(records, self._seq, self.masker)  # masked before the disk: the page, view and
            self._seq += len(lines)                                   # export never see a known secret
            offset = self.writer.write_lines(b"".join(lines))  # recorded first: nothing is shown that is not on disk
            self._rows.add_batch(records, lines, offset)  # the one call from add into the row index
            self._shown_seq = self._seq  # last: readers (no lock) see a seq once its row is indexed
            for listener in self.listeners:
                listener(records)
            self.changed.notify_all()
        return records

    def load_existing(self) -> tuple[dict | None, list[str]]:
        """Index an existing recording (for view): rows keep the file's seq and t; bad lines are skipped.

        Read by the one RecordingReader, so `view` skips and reports exactly what `read_recording` does. Returns
        the header and the problems. Raises RecordingError for a file of another format or a newer version.
        """
        reader = RecordingReader()
        with self._lock:
            reader.last_seq = self._seq
            load_rows(self._rows, self.writer, reader)  # row_load.py: one pass, the reader decides what is skipped
            self._seq = self._shown_seq = reader.last_seq
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
        """The newest seq whose row can be read (since, newest, row): never one still being written."""
        return self._shown_seq

    @property
    def signal_seq(self) -> int:
        """The newest signal number."""
        return self._signal_seq

    def _row(self, seq: int) -> Row | None:
        i = self._rows.position(seq)
        return None if i is None else self._rows.row(i)

    def row(self, seq: int) -> Row | None:
        """The summary of one row."""
        return self._row(seq)

    def rows(self) -> Rows:
        """Every row so far, oldest first: a sequence of row views (len, index, slice, iterate), not a copy."""
        return Rows(self._rows, len(self._rows))

    def seqs_of_kind(self, kind: str) -> list[int]:
        """The seqs of every row of one timeline kind (a scan of one column: cheap on a million rows)."""
        return self._rows.seqs_of_kind(kind)

    def seqs_of_methods(self, kind: str, methods: Container[str]) -> list[int]:
        """The seqs of every row of one timeline kind whose method is one of `methods`, oldest first: the method
        codes are compared (one pass over two columns), not a million rows made and read."""
        index = self._rows
        n = len(index)  # first: the columns may already hold a row whose seq is not appended yet
        table, overflow = index.methods, index.methods.overflow
        codes = table.matching(lambda name: name in methods) | {overflow}
        wanted = KIND_CODE[kind]
        column, found = index.method, []
        for code in codes:
            i = -1
            while True:
                try:
                    i = column.index(code, i + 1, n)  # a scan in C: most codes are not there at all
                except ValueError:
                    break
                if index.kind[i] == wanted and (code != overflow or index.method_of(i) in methods):
                    found.append(index.seq[i])  # (beyond the method table: the method is read from the file)
        return sorted(found)

    def record(self, seq: int) -> Record | None:
        """Read one full record back from the file."""
        i = self._rows.position(seq)
        return None if i is None else self._rows.record_at(i)

    def raw_line(self, seq: int) -> bytes | None:
        """One record's JSON line as written."""
        i = self._rows.position(seq)
        return None if i is None else self.writer.read_at(self._rows.offset[i], self._rows.length_at(i))

    def since(self, seq: int, filters: Filters, limit: int) -> tuple[list[Row], int]:
        """Rows newer than seq that pass the filters (at most limit), and the seq to continue from."""
        index = self._rows
        start = index.after(seq)
        positions, last = forward(index, filters, start, limit)
        return [index.row(i) for i in positions], index.seq[last] if last >= start else seq

    def newest(self, filters: Filters, limit: int, before: int | None = None) -> list[Row]:
        """The newest rows passing the filters, older than `before` when given, oldest first."""
        index = self._rows
        end = len(index) if before is None else index.before(before)
        return [index.row(i) for i in reversed(backward(index, filters, end, limit))]

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

    def __len__(self) -> int:
        return len(self._rows)

