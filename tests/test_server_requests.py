"""The server's own requests are answered by one thread, not one each (security findings, 8).

A server that stops reading its stdin and floods pings used to get a thread per request (3,000 pings: 1,463
blocked threads; about 100k would exhaust pid_max). The product's Client drives a real fixture server over real
pipes; the test's answer callback holds each answer until released, as an answer that takes its time does (replay
printing each step to a slow stdout), so what would pile up is there to count."""

from __future__ import annotations

import os
import threading

from conftest import fixture_command, read_records, records_in, wait_for
from fixture_client import FixtureClient

from inspector.client.answers import default_answer
from inspector.protocol.records import EVENT, UNANSWERED

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}


def flood_client(count: int):
    """A FixtureClient on pinging_server (count pings after tools/list), whose answers wait for `release`."""
    wire = FixtureClient(fixture_command("pinging_server", str(count)))
    release = threading.Event()

    wire.taken = []  # the requests the worker took to answer (it holds the first until release)

    def slow_answer(msg, transport):
        wire.taken.append(msg)
        release.wait(90)
        return default_answer(msg)
    wire.client.on_server_request = slow_answer
    wire.request("initialize", INITIALIZE, timeout=60)
    return wire, release


def pings_read(wire) -> int:
    return sum(1 for m in wire.messages if m.get("method") == "ping" and str(m.get("id")).startswith("flood-"))


def handed_over(wire) -> int:
    """Pings the reader has handed to the answering queue (taken, waiting or left unanswered). A read's lines are all
    recorded before any is handed over, so this can lag pings_read a moment."""
    queue = wire.client.server_requests
    return len(wire.taken) + queue.waiting() + queue.dropped


def answered(wire) -> int:
    counts = [int(line.split()[1]) for line in wire.stderr if line.startswith("answered ")]
    return max(counts, default=0)


def test_a_flood_of_server_requests_is_answered_by_one_thread_and_every_ping_gets_its_answer():
    wire, release = flood_client(500)
    try:
        before = threading.active_count()
        wire.start("tools/list")
        wait_for(lambda: pings_read(wire) == 500, 60, message="the 500 pings read and recorded")
        # Every ping is read and the first answer is held: one thread per request would be 500 threads by now.
        assert threading.active_count() <= before + 3, f"{threading.active_count() - before} threads more"
        release.set()
        wait_for(lambda: answered(wire) == 500, 60, message="the server got all 500 answers")
        assert wire.request("ping", timeout=60)["result"] == {}, "our own requests are still answered"
    finally:
        release.set()
        wire.close()
    assert wire.connection.exited, "the server stopped"
    assert not any(r.kind == EVENT and r.event == UNANSWERED for r in wire.sink.records)


def test_beyond_the_limit_server_requests_stay_unanswered_and_the_reader_goes_on():
    wire, release = flood_client(300)
    wire.client.server_requests.limit = 100
    try:
        before = threading.active_count()
        wire.start("tools/list")
        wait_for(lambda: pings_read(wire) == 300, 60, message="the 300 pings read and recorded")
        wait_for(lambda: handed_over(wire) == 300, 60, message="the 300 pings handed over")
        assert threading.active_count() <= before + 3
        events = [r for r in wire.sink.records if r.kind == EVENT and r.event == UNANSWERED]
        assert [e.detail for e in events] == [{"limit": 100}], "one event for the burst"
        release.set()
        # The 100 that waited, and the one in hand if the worker took it before the burst ended; the rest none.
        kept = 300 - wire.client.server_requests.dropped
        assert kept in (100, 101)
        wait_for(lambda: answered(wire) == kept, 60, message=f"the {kept} queued pings answered")
        assert wire.request("ping", timeout=60)["result"] == {}
        # The server read our ping after every answer written before it: no other answer is on its way.
        assert answered(wire) == kept
    finally:
        release.set()
        wire.close()


def test_the_inspector_answers_a_flood_of_pings_with_few_threads_and_stops_cleanly(inspector_factory):
    # The real inspector and page: 3,000 pings from a server that stops reading while it sends them.
    inspector = inspector_factory(fixture_command("pinging_server", "3000"), "--protocol", "legacy")

    def count() -> int:
        lines = [r["text"] for r in records_in(inspector.record) if r.get("kind") == "stderr"]
        return max((int(t.split()[1]) for t in lines if t.startswith("answered ")), default=0)
    wait_for(lambda: count() == 3000, 90, message="all 3,000 pings answered")
    threads = len(os.listdir(f"/proc/{inspector.proc.pid}/task"))
    assert threads < 60, f"{threads} threads in the inspector"
    status, _, _ = inspector.post("/tool/call?name=echo", {"arguments": '{"text": "still here"}'})
    assert status == 200
    wait_for(lambda: any("still here" in str((r.get("msg") or {}).get("result")) for r in records_in(inspector.record)),
             60, message="a call after the flood answered")
    assert inspector.stop() == 0
    assert read_records(inspector.record)[-1].get("event") == "session-end"
