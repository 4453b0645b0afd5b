"""The Store's row index (recording/row_index.py, row_search.py, row_load.py): a few dozen bytes per row, what a
row shows read back from the file, search by chunks of the file, and `view`'s fast indexing agreeing with the
live one row for row."""

from __future__ import annotations

import bisect
import json
import tracemalloc

import pytest

from factories import event, invalid, received, sent, stderr
from inspector.protocol import jsonrpc
from inspector.recording import format as limits
from inspector.recording import files, row_index, row_load, row_search
from inspector.recording.files import RecordingWriter, read_recording
from inspector.recording.row_index import preview
from inspector.recording.store import Filters, Store

ROW_FIELDS = ("seq", "t", "kind", "dir", "method", "id_text", "size", "preview", "offset", "length", "pair_seq",
              "latency_ms", "late", "unmatched", "origin", "level", "warning", "burst")


def flood_record(i: int):
    return received(jsonrpc.notification("notifications/message", {"level": "info", "data": f"flood {i}"}))


def test_a_row_costs_a_few_dozen_bytes_and_the_cost_stays_flat(tmp_path):
    """Issue 14's memory row, counted: 100,000 notifications through Store.add grow the process by the columns
    only (the old Row object, its dict entry and its preview string were ~580 bytes each)."""
    writer = RecordingWriter.create(tmp_path / "flood.jsonl")
    store = Store(writer)
    try:
        for i in range(1000):  # warm-up: the method and level codes, the first allocations
            store.add(flood_record(i))
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            for i in range(50_000):
                store.add(flood_record(i))
            half = tracemalloc.get_traced_memory()[0]
            for i in range(50_000):
                store.add(flood_record(i))
            end = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert len(store) == 101_000
        per_row, second_half = (end - start) / 100_000, (end - half) / 50_000
        assert per_row <= 40, f"{per_row:.0f} bytes per row"  # 35: the columns (row_index.py's docstring)
        assert second_half <= 40, f"{second_half:.0f} bytes per row in the second 50,000"
        assert store.row(101_000).preview == '{"level":"info","data":"flood 49999"}'  # read back from the file
    finally:
        writer.close()


def session_records():
    """One of every row shape, ids of every type, pairing, a late and an unmatched answer, origins, levels."""
    return [
        event("spawn", {"pid": 42}),
        sent(jsonrpc.request(1, "initialize", {"clientInfo": {"name": "mcp-inspect"}}), t=10.0),
        received(jsonrpc.result_response(1, {"serverInfo": {"name": "demo"}}), t=10.25),
        stderr("Démarrage du serveur: PRÊT " * 60),
        sent(jsonrpc.request("abc", "tools/list"), t=11.0),
        received(jsonrpc.notification("notifications/message", {"level": "warning", "data": "Zürich"})),
        received(jsonrpc.notification("notifications/message", {"level": "loud", "data": "no such level"})),
        received(jsonrpc.result_response("abc", {"tools": [{"name": "ÉCOLE"}]}), t=11.5),
        sent(jsonrpc.request(2 ** 70, "tools/call", {"name": "big id"}), t=12.0),
        received(jsonrpc.error_response(2 ** 70, -32602, "bad arguments"), t=12.5),
        sent(jsonrpc.request(1.5, "ping"), t=13.0, origin="user"),
        event("timeout", {"id": 1.5, "method": "ping", "after_s": 0.5}),
        received(jsonrpc.result_response(1.5, {}), t=14.0),
        received(jsonrpc.result_response(99, {})),
        received({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}),
        invalid("Hello", "not JSON"),
        received([jsonrpc.notification("a"), jsonrpc.notification("b")]),
        sent(jsonrpc.notification("notifications/initialized"), origin="user"),
        received(jsonrpc.request(7, "sampling/createMessage", {"_meta": {"io.modelcontextprotocol/x": 1, "k": 2}})),
        sent(jsonrpc.result_response(7, {"content": "é"}), t=20.0),
    ]


def row_values(store: Store) -> list[tuple]:
    """Every row's values; times as the file holds them (rounded to the microsecond)."""
    def value(row, name):
        found = getattr(row, name)
        return round(found, 6 if name == "t" else 2) if name in ("t", "latency_ms") and found is not None else found
    return [tuple(value(row, name) for name in ROW_FIELDS) for row in store.rows()]


def test_rows_show_what_the_records_hold(tmp_path):
    writer = RecordingWriter.create(tmp_path / "a.jsonl")
    store = Store(writer)
    try:
        records = [store.add(record) for record in session_records()]
        rows = {row.seq: row for row in store.rows()}
        for record in records:
            assert rows[record.seq].preview == preview(record)
        by_method = lambda m: [r for r in rows.values() if r.method == m]  # noqa: E731
        init, init_ok = by_method("initialize")
        assert (init.pair_seq, init_ok.pair_seq, init_ok.latency_ms) == (init_ok.seq, init.seq, 250.0)
        assert [r.id_text for r in by_method("tools/list")] == ['"abc"', '"abc"']
        assert [r.id_text for r in by_method("tools/call")] == [str(2 ** 70)] * 2
        assert [r.kind for r in by_method("tools/call")] == ["request", "error"]
        ping, ping_ok = by_method("ping")
        assert (ping.origin, ping.id_text, ping_ok.late, ping_ok.latency_ms) == ("user", "1.5", True, 1000.0)
        stray, parse_error = records[13].seq, records[14].seq
        assert rows[stray].unmatched and rows[stray].method is None and rows[parse_error].id_text == "null"
        logs = by_method("notifications/message")
        assert [r.level for r in logs] == ["warning", None]
        assert rows[records[3].seq].kind == "stderr" and rows[records[3].seq].dir == "from_server"
        assert len(rows[records[3].seq].preview) == 800
        assert rows[records[18].seq].preview == '{"_meta":{"k":2}}'
        assert rows[records[19].seq].method == "sampling/createMessage"
        rows[records[4].seq].warning = "a protocol warning"
        assert store.row(records[4].seq).warning == "a protocol warning"
    finally:
        writer.close()


def test_view_indexes_a_recording_exactly_as_the_live_store_did(tmp_path, monkeypatch):
    """row_load's fast path (notifications and stderr lines from their decoded object) and its reader path
    (everything else) give every row the values the live Store gave it, stderr bursts included (cut by a gap, a
    second traceback, a notification to the server); methods beyond the code table are read back."""
    monkeypatch.setattr(row_index, "METHOD_CODES", 6)
    path = tmp_path / "live.jsonl"
    writer = RecordingWriter.create(path)
    writer.write_header({"kind": "header", "format": "mcp-inspect-recording", "version": 1})
    live = Store(writer)
    for i in range(300):
        for record in session_records():
            live.add(record)
        live.add(received(jsonrpc.notification(f"notifications/custom-{i % 9}", {"i": i})))
        live.add(received(jsonrpc.notification("notifications/message", {"level": "debug", "data": i}), t=5))
        t = 20.0 + i * 0.3  # under bursts.GAP_SECONDS apart, but for every third line
        live.add(stderr("Traceback (most recent call last):" if i % 4 == 0 else f"log {i}", t=t))
        if i % 5 == 0:
            live.add(sent(jsonrpc.notification("notifications/cancelled", {"requestId": i}), t=t + 0.1))
        live.add(stderr(f"  frame {i}", t=t + (0.2 if i % 3 else 0.9)))
        if i % 50 == 7:  # a few runs not ASCII: their lines' lengths in bytes are not their lengths in characters
            live.add(stderr(f"données reçues ✓ {i}", t=t + 0.3))
    expected = row_values(live)
    writer.close()
    viewer = RecordingWriter.open_existing(path)
    try:
        view = Store(viewer)
        head, problems = view.load_existing()
        assert head["format"] == "mcp-inspect-recording" and problems == []
        assert row_values(view) == expected
        assert view.last_seq == live.last_seq == len(expected)
        custom = Filters(method="CUSTOM-8")
        assert [r.seq for r in view.newest(custom, 1000)] == [r.seq for r in live.newest(custom, 1000)]
        assert len(view.newest(custom, 1000)) == 33
    finally:
        viewer.close()


HEADER = json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1})


def test_a_hand_made_recording_with_whole_number_times_is_indexed_as_one_with_float_times(tmp_path):
    """A recording written by hand (security.md's 10^6-line file: `"t":1`) goes through view's fast path as well:
    an int t is the float from_dict makes of it. A t too big for a float, or a bool, is the reader's to refuse."""
    def lines(t) -> list[str]:
        out = [HEADER]
        for seq in range(1, 40):
            out.append(json.dumps({"seq": seq, "t": t(seq), "kind": "stderr", "text": f"line {seq}"}) if seq % 3
                       else json.dumps({"seq": seq, "t": t(seq), "kind": "message", "dir": "from_server",
                                        "msg": jsonrpc.notification("notifications/message", {"level": "info"})}))
        out.append('{"seq":40,"t":%d,"kind":"stderr","text":"far"}' % 10 ** 400)  # no float holds it
        out.append('{"seq":41,"t":true,"kind":"stderr","text":"bool"}')
        out.append('{"seq":42,"t":%d,"kind":"stderr","text":"big"}' % 2 ** 1000)
        return out

    whole, whole_problems = viewed(tmp_path / "int.jsonl", lines(lambda seq: 1 + seq // 100))
    floats, float_problems = viewed(tmp_path / "float.jsonl", lines(lambda seq: float(1 + seq // 100)))
    placed = [ROW_FIELDS.index(name) for name in ("size", "offset", "length")]  # "1" is shorter than "1.0"
    assert [[v for i, v in enumerate(row) if i not in placed] for row in row_values(whole)] == \
        [[v for i, v in enumerate(row) if i not in placed] for row in row_values(floats)]
    assert [row.seq for row in whole.rows()] == [*range(1, 40), 42]
    assert whole.row(42).t == float(2 ** 1000)
    assert {row.burst for row in whole.rows() if row.kind == "stderr" and row.seq < 40} == {1}
    assert len(whole_problems) == 2 and whole_problems == float_problems
    assert whole_problems == read_recording(tmp_path / "int.jsonl").problems


def viewed(path, lines: list[str]) -> tuple[Store, list]:
    """The lines written as a recording and opened as `view` opens one: its Store and the reader's problems."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = Store(RecordingWriter.open_existing(path))
    return store, store.load_existing()[1]


def naive_search(path, needle: str) -> list[int]:
    """The search as it was: every line of the file, folded (ASCII lines with bytes.lower)."""
    folded, hits = needle.casefold(), []
    for record, line in zip(read_recording(path).records, _record_lines(path)):
        text = line.lower().decode() if line.isascii() and folded.isascii() else line.decode().casefold()
        if folded in text:
            hits.append(record.seq)
    return hits


def _record_lines(path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n")[1:] if line.startswith(b'{"seq"')]


@pytest.mark.parametrize("needle", ["flood 1", "FLOOD 17", "straße", "STRASSE", "zürich", "ZÜRICH", "needle",
                                    "nothing like it", '"level":"info"', "a\nb"])
def test_search_by_chunks_finds_what_a_line_scan_finds(tmp_path, monkeypatch, needle):
    """Small chunks so that every search crosses many chunk borders, forwards (paging with the cursor, as a live
    tab does) and backwards (the newest first); a skipped line between rows holding the needle is no hit."""
    monkeypatch.setattr(row_search, "CHUNK_BYTES", 700)
    path = tmp_path / "search.jsonl"
    lines = [HEADER]
    for seq in range(1, 400):
        text = ("Straße in Zürich" if seq % 37 == 0 else "STRASSE" if seq % 41 == 0 else f"flood {seq}")
        lines.append(json.dumps({"seq": seq, "t": float(seq), "kind": "stderr", "text": text}, ensure_ascii=False))
        if seq % 50 == 0:
            lines.append('{"broken needle line')  # skipped by the reader: not a row, not a hit
    store, problems = viewed(path, lines)
    try:
        assert len(problems) == 7
        expected = naive_search(path, needle) if "\n" not in needle else []
        assert [r.seq for r in store.newest(Filters(q=needle), 10_000)] == expected
        assert [r.seq for r in store.newest(Filters(q=needle), 3)] == expected[-3:]
        got, cursor = [], 0
        while True:
            rows, cursor = store.since(cursor, Filters(q=needle), 4)
            if not rows:
                break
            got += [r.seq for r in rows]
            assert cursor == rows[-1].seq or len(rows) < 4
        assert got == expected and cursor == 399
    finally:
        store.writer.close()


@pytest.mark.parametrize("tail", [b"tail without newline", b""])
def test_runs_cut_a_file_into_the_lines_split_lines_gives(monkeypatch, tail):
    """row_load.split_runs (runs of whole lines, for speed) and files.split_lines agree on every line's number,
    offset and bytes, however the file comes in blocks: blank lines, an oversized line in a run and across
    blocks, a long line under the cap and the lines after it (up to the end of the file), a last line without
    a newline."""
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 50)
    monkeypatch.setattr(limits, "BLOCK_BYTES", 8)  # a line over 32 bytes is long: split_lines reads it
    data = b"".join([b"first\n", b"\n", b"x" * 49 + b"\n", b"y" * 51 + b"\n", b"ok\n", b"z" * 300 + b"\n",
                     b"after\n", b"   \n", b"w" * 120 + b"\n", b"v" * 40 + b"\nend\nmore\n", tail])
    for block in range(1, len(data) + 2):
        blocks = lambda: (data[i:i + block] for i in range(0, len(data), block))  # noqa: E731
        flattened = []
        for item in row_load.split_runs(blocks()):
            if isinstance(item, files.Line):
                flattened.append(item)
                continue
            offset = item.offset
            for number, line in enumerate(item.data.split(b"\n"), item.number):
                flattened.append(files.Line(number, offset, line, True))
                offset += len(line) + 1
        assert flattened == list(files.split_lines(blocks())), f"blocks of {block} bytes"
        assert [line.data for line in flattened if line.ended][-4:] == [None, b"v" * 40, b"end", b"more"]


def test_a_row_read_without_the_lock_while_rows_are_added_is_whole():
    """Readers take no lock (store.row, rows, seqs_of_kind): a row must exist only once every column holds it."""
    import sys
    import threading

    store = Store(RecordingWriter.spool())
    adding, errors, reads = True, [], [0]

    def read() -> None:
        while adding:
            reads[0] += 1
            rows = store.rows()
            try:
                if len(rows):
                    row = rows[-1]
                    assert (row.kind, row.burst, row.level, row.pair_seq, row.t) is not None
                if reads[0] % 50 == 0:  # a scan of the whole kind column: not at every read
                    store.seqs_of_kind("stderr")
            except Exception as exc:  # noqa: BLE001 - any failure of a read is the defect
                errors.append(repr(exc))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between any two appends, so a half-added row would be seen
    reader = threading.Thread(target=read)
    reader.start()
    try:
        i = 0
        while (reads[0] < 3000 or i < 20000) and reader.is_alive():  # adds while the reader reads, however the threads are run
            i += 1
            store.add(stderr(f"line {i}", t=float(i)))
    finally:
        adding = False
        reader.join()
        sys.setswitchinterval(interval)
        store.writer.close()
    assert errors == []


FAR = 2 ** 31 + 5
"""A seq distance no 32-bit delta holds."""


def wide_records():
    """A recording's records whose values do not fit the index's 32-bit columns, with seqs that jump: ids beyond
    int32 and on its edges (one equals the id column's own NO_ID value), a request answered 2**31 seqs later, a
    stderr line whose burst began 2**31 seqs before (messages from the server do not end a burst)."""
    big, edge_low, edge_high = 2 ** 40, -(2 ** 31), 2 ** 31 - 1
    return [
        sent(jsonrpc.request(big, "tools/call", {"name": "far"}), seq=3, t=1.0),
        sent(jsonrpc.request(edge_low, "ping"), seq=4, t=2.0),
        sent(jsonrpc.request(edge_high, "tools/list"), seq=5, t=3.0),
        received(jsonrpc.result_response(edge_high, {"tools": []}), seq=9, t=3.5),
        stderr("between", seq=10, t=6.0),
        received(jsonrpc.notification("notifications/progress", {"progress": 1}), seq=11, t=4.5),
        received(jsonrpc.notification("notifications/progress", {"progress": 2}), seq=14, t=4.75),  # one batch
        received(jsonrpc.result_response(edge_low, {}), seq=3 + FAR, t=5.0),
        received(jsonrpc.result_response(big, {"content": []}), seq=3 + FAR + 1, t=6.25),
        stderr("far in the same burst", seq=3 + FAR + 7, t=6.3),
    ]


def test_view_keeps_seqs_that_jump_pairs_far_apart_and_ids_beyond_int32(tmp_path):
    """The fallbacks of the 32-bit columns and of the implicit seq column (seq_runs.py), through view's real
    path: a recording whose seqs jump (a skipped line, a gap of 2**31), read by Store.load_existing."""
    records = wide_records()
    lines = [HEADER]
    for record in records:
        lines.append(json.dumps(record.to_dict()))
        if record.seq == 4:
            lines.append('{"seq": 7, "broken')  # skipped: no row, a gap in the seqs
    store, problems = viewed(tmp_path / "wide.jsonl", lines)
    try:
        assert len(problems) == 1
        seqs = [record.seq for record in records]
        assert [row.seq for row in store.rows()] == seqs and store.last_seq == seqs[-1]
        assert [store.row(seq).seq for seq in seqs] == seqs
        assert [store.row(seq) for seq in (1, 2, 6, 7, 8, 12, 13, 2 ** 31, 3 + FAR - 1, 3 + FAR + 3)] == [None] * 10
        call, ping, listing, listed, between, _, _, pong, called, far_line = (store.row(seq) for seq in seqs)
        assert [r.id_text for r in (call, ping, listing, listed, pong, called)] == [
            str(2 ** 40), str(-(2 ** 31)), str(2 ** 31 - 1), str(2 ** 31 - 1), str(-(2 ** 31)), str(2 ** 40)]
        assert (call.pair_seq, called.pair_seq, called.method, called.latency_ms) == (
            called.seq, call.seq, "tools/call", 5250.0)
        assert (ping.pair_seq, pong.pair_seq, pong.method) == (pong.seq, ping.seq, "ping")
        assert (listing.pair_seq, listed.pair_seq, listed.latency_ms) == (9, 5, 500.0)
        got, cursor = [], 0  # paging forwards over the gaps, as a live tab does
        while rows := store.since(cursor, Filters(), 3)[0]:
            got += [row.seq for row in rows]
            cursor = rows[-1].seq
        assert got == seqs
        assert [row.seq for row in store.newest(Filters(), 3, before=3 + FAR)] == [10, 11, 14]
        assert [row.seq for row in store.newest(Filters(), 2, before=8)] == [4, 5]
        assert store.seqs_of_kind("stderr") == [10, 3 + FAR + 7]
        assert (between.burst, far_line.burst, between.pair_seq, far_line.pair_seq) == (10, 10, None, None)
        assert (call.burst, called.burst) == (None, None)
    finally:
        store.writer.close()


def test_seq_runs_read_like_the_seqs_they_hold():
    """seq_runs.SeqRuns against a plain list: every position, every seq in and around the runs."""
    from inspector.recording.seq_runs import SeqRuns

    runs, plain = SeqRuns(), []
    batches = [[1], [2, 3, 4], [7, 8], [9], [20, 21, 23, 24, 30], [31, 32, 34], [2 ** 40, 2 ** 40 + 1], [2 ** 40 + 5]]
    for k, batch in enumerate(batches):
        if k % 2:
            runs.extend(batch)
        else:
            for seq in batch:
                runs.append(seq)
        plain += batch
        assert len(runs) == len(plain)
        assert [runs[i] for i in range(len(plain))] == plain and runs[-1] == plain[-1]
        for seq in {s + d for s in plain for d in (-1, 0, 1)} | {0, -5, plain[-1] + 10}:
            assert runs.position(seq) == (plain.index(seq) if seq in plain else None), seq
            assert runs.after(seq) == bisect.bisect_right(plain, seq), seq
            assert runs.before(seq) == bisect.bisect_left(plain, seq), seq
    with pytest.raises(ValueError):
        runs.append(2 ** 40 + 5)  # seqs only grow
    with pytest.raises(IndexError):
        runs[len(plain)]


def test_a_line_too_long_for_the_length_column_keeps_its_length(tmp_path, monkeypatch):
    """The length column is 32 bits: a longer line (possible over HTTP, where no line cap applies) keeps its
    length aside. 4 GiB cannot be written in a test: the column's limit is lowered instead. The readers' caps
    are far below the column's real limit, so a recording read back never needs it."""
    assert limits.MAX_LINE_BYTES < row_index.LONG_LINE and row_index.LONG_LINE == 2 ** 32 - 1
    assert row_index.RowIndex(lambda *_: b"").length.itemsize * 8 == 32
    monkeypatch.setattr(row_index, "LONG_LINE", 300)
    writer = RecordingWriter.create(tmp_path / "long.jsonl")
    store = Store(writer)
    try:
        short, long = store.add(stderr("short")), store.add(stderr("long " + "x" * 1000))
        after = store.add(stderr("after"))
        line = store.raw_line(long.seq)
        assert len(line) > 1000 and json.loads(line)["text"] == long.text
        assert store.row(long.seq).length == len(line) and store.row(long.seq).preview == long.text[:800]
        assert store.record(long.seq).text == long.text
        assert [store.row(r.seq).length for r in (short, after)] == [len(store.raw_line(r.seq)) for r in (short, after)]
        assert [r.seq for r in store.newest(Filters(q="xxxx"), 10)] == [long.seq]
        assert [r.seq for r in store.newest(Filters(q="after"), 10)] == [after.seq]
    finally:
        writer.close()


def test_rows_by_kind_and_method_are_found_by_their_codes_beyond_the_method_table_too(tmp_path, monkeypatch):
    """Store.seqs_of_methods (what view's task panel reads instead of every row) finds what a scan of every row
    finds, for methods with a code and for those beyond the method table (read back from the file)."""
    monkeypatch.setattr(row_index, "METHOD_CODES", 4)
    writer = RecordingWriter.create(tmp_path / "a.jsonl")
    store = Store(writer)
    try:
        for i in range(40):
            store.add(received(jsonrpc.notification(f"notifications/n-{i % 6}", {"i": i})))
            store.add(sent(jsonrpc.request(i, f"notifications/n-{i % 6}")))  # a request of the same name
        for wanted, count in (({"notifications/n-0"}, 7), ({"notifications/n-5", "notifications/n-1"}, 13),
                              ({"nothing"}, 0)):
            expected = [row.seq for row in store.rows() if row.kind == "notification" and row.method in wanted]
            assert store.seqs_of_methods("notification", wanted) == expected and len(expected) == count
    finally:
        writer.close()


def test_a_batch_of_notifications_is_indexed_exactly_as_add_indexes_each_record(tmp_path, monkeypatch):
    """RowIndex.add_batch puts a run of notifications in column by column (the live flood's fast path); every
    column must hold what RowIndex.add gives each record, in the same order, whatever the batch mixes in: requests
    and answers, notifications both ways, with origins and log levels, invalid ones, methods beyond the code table,
    and stderr bursts (while one is open, notifications go through add)."""
    monkeypatch.setattr(row_index, "METHOD_CODES", 12)

    def records(i):
        shaped = session_records()
        made = shaped[:5] + [
            received(jsonrpc.notification(f"notifications/custom-{(i + k) % 15}", {"k": k})) for k in range(7)
        ] + [
            received(jsonrpc.notification("notifications/message", {"level": level, "data": i}))
            for level in ("error", "loud", 3)
        ] + [
            received({"jsonrpc": "1.0", "method": "notifications/old"}),  # invalid: no fast path
            sent(jsonrpc.notification("notifications/cancelled", {"requestId": i}), origin="user"),
            stderr(f"log {i}", t=30.0 + i),
            received(jsonrpc.notification("notifications/progress", {"progress": i}), t=30.1 + i),  # burst open
            sent(jsonrpc.notification("notifications/roots/list_changed")),  # ends the burst
            received(jsonrpc.notification("notifications/progress", {"progress": i})),
        ] + shaped[5:]
        for j, record in enumerate(made):
            record.t = 100.0 + i + j / 100  # not the clock: both stores write the very same lines
        return made

    def indexed(name, batched):
        writer = RecordingWriter.create(tmp_path / name)
        store = Store(writer)
        for i in range(40):
            batch = records(i)
            if batched:
                store.add_batch(batch[: i % 9 + 1])
                store.add_batch(batch[i % 9 + 1:])
            else:
                for record in batch:
                    store.add(record)
        columns = {name: list(getattr(store._rows, name)) for name in (
            "t", "offset", "length", "kind", "dir", "method", "level", "origin", "ids", "link", "flags")}
        return store, writer, row_values(store), columns

    batched_store, batched_writer, batched_rows, batched_columns = indexed("batched.jsonl", True)
    monkeypatch.setattr(row_index, "notification_row", lambda *_: None)  # the reference: RowIndex.add per record
    each_store, each_writer, each_rows, each_columns = indexed("each.jsonl", False)
    try:
        assert len(batched_rows) == len(each_rows) == 40 * len(records(0))
        assert batched_columns == each_columns
        assert batched_rows == each_rows
        notifications = [row for row in batched_rows if row[2] == "notification"]
        assert {row[15] for row in notifications} >= {"error", None} and len(notifications) > 40 * 12
    finally:
        batched_writer.close()
        each_writer.close()
