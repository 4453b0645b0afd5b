"""Protocol warnings in the live page: every record goes through the ProtocolChecker, in order, on a thread of its
own; each warning becomes a `warning` event in the timeline and the recording, and an entry in the Problems list.
"""

from __future__ import annotations

import queue
import threading
import time

from inspector.protocol.diagnostics.protocol import ProtocolChecker
from inspector.protocol.diagnostics.rules import Warning
from inspector.protocol.records import EVENT, Record
from inspector.recording.store import Store
from inspector.session import changes

TICK_SECONDS = 1.0
CHECKER_ERROR = "checker-error"
"""Not a rule of the catalogue (the server did nothing wrong): the inspector's own checker failed on a record."""
CHECKER_ERROR_FIX = "This is a bug in mcp-inspect: please report it with the recording."


class Problems:
    """Feeds the checker from the store and keeps what it found."""

    def __init__(self, store: Store, session, *, timeout: float, disabled: set[str] | frozenset = frozenset()) -> None:
        self.store = store
        self.session = session
        self.disabled = set(disabled)
        self.checker = ProtocolChecker(timeout=timeout, disabled=self.disabled)
        self.found: list = []
        """Every warning so far, oldest first."""
        self._queue: queue.Queue[list[Record]] = queue.Queue()
        store.listeners.append(self._queue.put)  # a batch a put, under the store's lock: records come in seq order
        threading.Thread(target=self._run, name="problems", daemon=True).start()

    def _run(self) -> None:
        next_tick = time.monotonic() + TICK_SECONDS
        while not self.store.closed:  # the run is over once its store is closed: the thread ends with it
            try:
                batch = self._queue.get(timeout=max(0.05, next_tick - time.monotonic()))
            except queue.Empty:
                batch = []
            if batch:
                self._check(batch)
            if time.monotonic() >= next_tick:
                next_tick = time.monotonic() + TICK_SECONDS
                self._guarded(lambda: self.checker.tick(time.time(), self.session.running), 0)

    def _check(self, batch: list[Record]) -> None:
        """Check a batch record by record, guarded like `_guarded` (inlined: a flood's batches hold hundreds of
        records, and a closure and a call per record cost more than the check of a notification)."""
        observe = self.checker.observe
        for record in batch:
            if record.kind == EVENT and record.event == "warning":
                continue
            try:
                found = observe(record)
            except Exception as exc:  # noqa: BLE001 - any record, however odd, must not end the checking
                found = [_checker_error(record.seq or 0, exc)]
            if found:
                self._report(found)

    def _guarded(self, check, seq: int) -> None:
        """Run one check; a bug in the checker becomes a `checker-error` warning instead of ending this thread,
        which would silently stop every later warning in the page."""
        try:
            found = check()
        except Exception as exc:  # noqa: BLE001 - any record, however odd, must not end the checking
            found = [_checker_error(seq, exc)]
        self._report(found)

    def _report(self, warnings: list) -> None:
        for warning in warnings:
            self.found.append(warning)
            row = self.store.row(warning.seq) if warning.seq else None
            if row is not None:
                row.warning = warning.text  # rows rendered from now on carry the mark
            self.store.add(Record(EVENT, event="warning", detail=warning.event_detail()))
        if warnings:
            self.store.signal(changes.PROBLEMS)


def _checker_error(seq: int, exc: Exception) -> Warning:
    return Warning(CHECKER_ERROR, seq, f"the protocol checker failed here ({type(exc).__name__}: {exc}); later records "
                                       "are still checked", CHECKER_ERROR_FIX)
