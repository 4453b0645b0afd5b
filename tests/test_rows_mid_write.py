"""A batch of rows still being written: readers take no lock, so what they are told is newest must already be
readable. The live-flood flake (tests/test_live_flood.py, the newest row never shown): a tab's catch-up read
`store.last_seq` while the flood's last pipe read was numbered but not yet written and indexed, rendered the rows it
could find, set its cursor to that seq, and so never got the rows in between, the call's answer among them.

The disk cannot be made slow on cue, so the real writer's write_lines is held while a batch is in it (the one seam);
the store, the recording, the live connection and its templates are the product's own."""

from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager

import pytest

from conftest import build_in_process, fixture_command, wait_for
from factories import received
from inspector.protocol import jsonrpc
from inspector.recording.files import RecordingWriter
from inspector.recording.store import Filters, Store

LONG = 60.0  # s: a loaded 2-core machine is slow, not wrong; the live loop polls every 0.25 s


def note(text: str):
    return received(jsonrpc.notification("notifications/message", {"level": "info", "data": text}))


@contextmanager
def write_held(store: Store, marker: str):
    """While inside: a batch of three rows whose lines hold `marker` is numbered but not yet written (a slow disk).
    Yields their seqs once it is held; on leaving, the write goes on and the batch is indexed."""
    writing, release = threading.Event(), threading.Event()
    batch = [note(f"{marker} {i}") for i in range(3)]
    write_lines = store.writer.write_lines

    def slow_disk(data: bytes) -> int:
        if marker.encode() in data:
            writing.set()
            release.wait(LONG)
        return write_lines(data)

    store.writer.write_lines = slow_disk
    adder = threading.Thread(target=store.add_batch, args=(batch,))
    adder.start()
    try:
        assert writing.wait(LONG), "the batch reached the disk"
        yield {record.seq for record in batch}
    finally:
        release.set()
        adder.join(LONG)
        store.writer.write_lines = write_lines


def test_last_seq_never_names_a_row_still_being_written():
    writer = RecordingWriter.spool()
    store = Store(writer)
    try:
        store.add(note("before"))
        with write_held(store, "held") as held:
            assert held == {2, 3, 4} and store.last_seq == 1, "the held batch is numbered, not readable yet"
            assert [row.seq for row in store.newest(Filters(), 10, before=store.last_seq + 1)] == [1]
            assert store.since(0, Filters(), 10)[1] == store.last_seq
        assert store.last_seq == 4
        assert [row.seq for row in store.since(1, Filters(), 10)[0]] == [2, 3, 4]
    finally:
        writer.close()


@pytest.fixture
def demo(tmp_path):
    page = build_in_process(tmp_path, [], "--demo", "--no-watch")
    yield page
    page.stop()


def test_a_tab_catching_up_while_a_batch_is_written_still_gets_its_rows(demo):
    """The flood's case: a tab more than a page behind gets the newest window (live.py _new_rows); the batch being
    written at that moment comes in the tab's next frame, not never."""
    from inspector.web.live import DOM_ROWS, LiveConnection

    store = demo.services.store
    wait_for(lambda: store.last_seq > 0, LONG, message="the demo server's first rows")
    connection = LiveConnection(None, store)
    with demo.app.test_request_context():
        connection.cursor = store.last_seq  # the tab has every row so far
        store.add_batch([note(f"flood {i}") for i in range(DOM_ROWS + 1)])  # now it is more than a page behind
        with write_held(store, "mid-write") as held:
            window = seqs_in(connection._new_rows())
            assert window and not held & window, "the catch-up window has the rows written so far"
        following = seqs_in(connection._new_rows())
    assert held <= following, f"rows {sorted(held)} come in the next frame once written (got {sorted(following)})"
    assert [json.loads(store.raw_line(seq))["msg"]["params"]["data"] for seq in sorted(held)] == [
        f"mid-write {i}" for i in range(3)]


def seqs_in(parts: list[str]) -> set[int]:
    return {int(s) for part in parts for s in re.findall(r'id="r-(\d+)"', part)}


@pytest.fixture
def quiet(tmp_path):
    """A page on the hand-written server, which says nothing once it has answered the handshake and the lists (and
    whose notifications/message, a capability it never declared, the checker is told not to answer with rows)."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"disable": ["undeclared-capability"]}))
    page = build_in_process(tmp_path, fixture_command("raw_server"), "--no-watch", "--rules", str(rules))
    session = page.services.session
    wait_for(lambda: session.server.state == "running" and session.server.tools, LONG, message="the tools listed")
    yield page
    page.stop()


@pytest.mark.parametrize("behind", [1, 250, 251, 999])
def test_a_frame_appends_at_most_a_few_hundred_rows_and_the_next_frames_bring_the_rest(quiet, behind):
    """The page parses and lays out every row a frame brings before it paints: a frame appends at most APPEND_ROWS
    (a whole page's worth, DOM_ROWS, once made a flood's first frame 233 ms long), and a backlog up to a page comes
    in order over the next frames, each row once; further behind, the tab gets the newest window (tested above)."""
    from inspector.web.live import APPEND_ROWS, LiveConnection

    store = quiet.services.store
    connection = LiveConnection(None, store)
    with quiet.app.test_request_context():
        connection.cursor = start = store.last_seq
        store.add_batch([note(f"burst {i}") for i in range(behind)])
        last = store.last_seq
        frames = []
        while connection.cursor < last:
            parts = connection._new_rows()
            assert len(parts) == 1 and 'hx-swap="beforeend"' in parts[0], parts[0][:200]
            frames.append(sorted(seqs_in(parts)))
        assert [len(frame) for frame in frames] == [min(APPEND_ROWS, behind - k) for k in range(0, behind, APPEND_ROWS)]
        assert [seq for frame in frames for seq in frame] == list(range(start + 1, last + 1))
        store.add_batch([note("after")])
        assert seqs_in(connection._new_rows()) == {last + 1}  # nothing lost, nothing sent twice
