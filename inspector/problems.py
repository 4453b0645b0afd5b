"""Protocol warnings in the live page: every record goes through the ProtocolChecker, in order, on a thread of its
own; each warning becomes a `warning` event in the timeline and the recording, and an entry in the Problems list.
"""

from __future__ import annotations

import queue
import threading
import time

from inspector.protocol.diagnostics.protocol import ProtocolChecker
from inspector.protocol.records import EVENT, Record
from inspector.recording.store import Store

TICK_SECONDS = 1.0


class Problems:
    """Feeds the checker from the store and keeps what it found."""

    def __init__(self, store: Store, session, *, timeout: float, disabled: set[str] | frozenset = frozenset()) -> None:
        self.store = store
        self.session = session
        self.disabled = set(disabled)
        self.checker = ProtocolChecker(timeout=timeout, disabled=self.disabled)
        self.found: list = []
        """Every warning so far, oldest first."""
        self._queue: queue.Queue[Record] = queue.Queue()
        store.listeners.append(self._queue.put)  # called under the store's lock: records arrive in seq order
        threading.Thread(target=self._run, name="problems", daemon=True).start()

    def _run(self) -> None:
        next_tick = time.monotonic() + TICK_SECONDS
        while True:
            try:
                record = self._queue.get(timeout=max(0.05, next_tick - time.monotonic()))
            except queue.Empty:
                record = None
            if record is not None and not (record.kind == EVENT and record.event == "warning"):
                self._report(self.checker.observe(record))
            if time.monotonic() >= next_tick:
                next_tick = time.monotonic() + TICK_SECONDS
                self._report(self.checker.tick(time.time(), self.session.running))

    def _report(self, warnings: list) -> None:
        for warning in warnings:
            self.found.append(warning)
            row = self.store.row(warning.seq) if warning.seq else None
            if row is not None:
                row.warning = warning.text  # rows rendered from now on carry the mark
            self.store.add(Record(EVENT, event="warning", detail=warning.event_detail()))
        if warnings:
            self.store.signal("problems")
