"""inspector.problems: the page's checker thread survives a checker that raises, and goes on finding problems."""

from __future__ import annotations

import threading

from inspector.session.problems import CHECKER_ERROR, Problems
from inspector.protocol.diagnostics.protocol import ProtocolChecker
from inspector.protocol.records import EVENT, FROM_SERVER, MESSAGE, Record
from inspector.recording.files import RecordingWriter
from inspector.recording.store import Store


class Stopped:
    """What Problems reads of the session: only whether the server runs (for the silence tick)."""

    running = False


class FailsOnce(ProtocolChecker):
    """A real checker that raises on one marked record, as a bug in a rule would."""

    def observe(self, record: Record) -> list:
        if record.kind == EVENT and record.event == "boom":
            raise RuntimeError("rule bug")
        return super().observe(record)


def test_a_checker_that_raises_is_reported_and_the_thread_goes_on():
    writer = RecordingWriter.spool()
    store = Store(writer)
    warnings: list[Record] = []
    two = threading.Event()

    def on_add(batch: list[Record]) -> None:  # the store hands its listeners each batch it wrote
        for record in batch:
            if record.kind == EVENT and record.event == "warning":
                warnings.append(record)
                if len(warnings) == 2:
                    two.set()

    store.listeners.append(on_add)
    problems = Problems(store, Stopped(), timeout=30)
    problems.checker = FailsOnce(timeout=30)
    try:
        store.add(Record(EVENT, event="spawn", detail={"pid": 1}))
        bad = store.add(Record(EVENT, event="boom", detail={}))
        # A response to nothing: a real protocol warning that must still be found after the failure.
        late = store.add(Record(MESSAGE, dir=FROM_SERVER, msg={"jsonrpc": "2.0", "id": 7, "result": {}}))
        assert two.wait(10), [w.detail for w in warnings]
        assert [(w.detail["rule"], w.detail["seq"]) for w in warnings] == [(CHECKER_ERROR, bad.seq),
                                                                          ("unmatched-response", late.seq)]
        assert "RuntimeError: rule bug" in warnings[0].detail["text"]
        assert [w.rule for w in problems.found] == [CHECKER_ERROR, "unmatched-response"]
    finally:
        writer.close()
