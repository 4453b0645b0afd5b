"""The message path at the speed of the pipe (issue 14 item 3): the stdout reader hands over every whole line of a
read as one batch, the batch is recorded with one write before anything acts on it, and a server's line is written
into the recording as it came (the record's fields around its bytes), except where the line needs masking or
escaping. Nothing lost, nothing reordered, nothing leaked."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import PYTHON, ROOT, fixture_command, wait_for, wait_tools_listed
from inspector.client.connect import Connection
from inspector.client.rpc import Client
from inspector.client.targets import StdioTarget
from inspector.protocol.records import EVENT, Record
from inspector.recording.files import RecordingWriter, Sink
from inspector.recording.store import Store
from inspector.transport import stdio
from inspector.transport.lines import LineSplitter

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
from wire_server import secret_note  # noqa: E402

FLOOD = 100_000
CHILD_TIMEOUT = 300  # a 100,000-line flood on a loaded 2-core machine


def flood_line(i: int) -> bytes:
    """The i-th notification exactly as tests/fixtures/flood_server.py writes it."""
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": f"flood {i}"}}).encode()


def msg_bytes(line: bytes) -> bytes:
    """What a from_server message line holds as its `msg`: the bytes between `"msg":` and the closing brace."""
    head, sep, rest = line.partition(b',"msg":')
    assert sep and rest.endswith(b"}"), line[:200]
    return rest[:-1]


def whole_lines(data: bytes) -> list[bytes]:
    """The complete lines of a recording (one still being written may be torn at its end)."""
    return data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]


def assert_flood_recorded(data: bytes, count: int, line_of=flood_line) -> None:
    """Every record in seq order, and the flood's notifications all there, in order, each byte for byte as sent."""
    lines = whole_lines(data)
    records = [json.loads(line) for line in lines[1:]]  # line 1 is the header
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    notes = [line for line, r in zip(lines[1:], records)
             if r["kind"] == "message" and r["dir"] == "from_server" and r["msg"].get("method") == "notifications/message"]
    assert len(notes) == count
    wrong = next((i for i, line in enumerate(notes) if msg_bytes(line) != line_of(i)), None)
    assert wrong is None, f"notification {wrong}: {msg_bytes(notes[wrong])!r} != {line_of(wrong)!r}"
    last = json.loads(notes[-1])["seq"]
    answer = next(r["seq"] for r in records if f'"flooded {count}"' in json.dumps(r.get("msg")))
    assert last < answer  # the call's answer after its last notification


def run_call(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "inspector.cli", "call", *args], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=CHILD_TIMEOUT)


def test_call_records_a_flood_of_100000_in_seq_order_each_as_the_server_sent_it(tmp_path):
    record = tmp_path / "flood.jsonl"
    result = run_call(tmp_path, "--tool", "flood", "--args", json.dumps({"n": FLOOD}), "--record", str(record),
                      "--", *fixture_command("flood_server"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"content": [{"type": "text", "text": f"flooded {FLOOD}"}]}
    assert_flood_recorded(record.read_bytes(), FLOOD)


def test_the_page_records_a_flood_of_100000_in_seq_order_each_as_the_server_sent_it(inspector_factory):
    inspector = inspector_factory(fixture_command("flood_server"))
    wait_tools_listed(inspector, timeout=60)
    status, _, _ = inspector.post("/tools/flood/call", {"arguments": json.dumps({"n": FLOOD})})
    assert status == 200
    wait_for(lambda: f"flooded {FLOOD}".encode() in inspector.record.read_bytes(), CHILD_TIMEOUT, interval=0.5,
             message="the flood's answer recorded")
    assert_flood_recorded(inspector.record.read_bytes(), FLOOD)


def test_a_secret_in_a_flood_is_masked_on_disk_in_every_spelling(tmp_path):
    secret, count = "s3cr3t/flood-value", 7000
    record = tmp_path / "secrets.jsonl"
    result = run_call(tmp_path, "--tool", "flood", "--args", json.dumps({"n": count}), "-e", f"FLOOD_SECRET={secret}",
                      "--record", str(record), "--", *fixture_command("wire_server", "secrets"))
    assert result.returncode == 0, result.stderr
    data = record.read_bytes()
    for spelling in (secret, base64.b64encode(secret.encode()).decode(), secret.replace("/", "\\/"), secret[1:]):
        assert spelling.encode() not in data, spelling
    notes = [json.loads(line)["msg"]["params"]["data"] for line in whole_lines(data)[1:]
             if b"notifications/message" in line]
    assert len(notes) == count
    masked = [i for i, text in enumerate(notes) if "[REDACTED]" in text]
    assert masked == [i for i in range(count) if i % 7 in (1, 3, 5, 6)]
    # The lines without a secret are still written as the server sent them.
    plain = [line for line in whole_lines(data)[1:] if b"notifications/message" in line and b"REDACTED" not in line]
    assert [msg_bytes(line) for line in plain] == [secret_note(i, secret).encode() for i in range(count)
                                                   if i % 7 in (0, 2, 4)]


def readline_reference(data: bytes, cap: int) -> list[bytes]:
    """The lines the reader handed over before batching: readline(cap), stripped of a newline and its CRs."""
    stream, out = io.BytesIO(data), []
    while line := stream.readline(cap):
        out.append(line.rstrip(b"\r\n") if line.endswith(b"\n") else line)
    return out


STREAMS = {
    "lines split across reads": b'{"a":1}\n{"bb":22}\n{"ccc":333}\n',
    "a partial last line at EOF": b'{"a":1}\n{"last":',
    "CRLF lines and blank ones": b'{"a":1}\r\n\r\n\n{"b":2}\r\r\n x \r\n',
    "lines over the cap": b"a" * 40 + b"\n" + b"b" * 16 + b"\n" + b"c" * 15 + b"\n" + b"d" * 15 + b"\r\n" + b"e" * 33,
}


@pytest.mark.parametrize("name", STREAMS)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 17, 1000])
def test_lines_cut_from_reads_are_those_readline_gave(name, size):
    data, cap = STREAMS[name], 16
    splitter, lines = LineSplitter(cap), []
    for start in range(0, len(data), size):
        lines += splitter.feed(data[start:start + size])
    lines += splitter.finish()
    assert lines == readline_reference(data, cap)


class CountingSink(Sink):
    """A real Sink (numbers, masks, writes) that also notes the size of each batch it was given."""

    def __init__(self, writer: RecordingWriter) -> None:
        super().__init__(writer)
        self.batches: list[int] = []

    def add_batch(self, records: list[Record]) -> list[Record]:
        self.batches.append(len(records))
        return super().add_batch(records)


ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'
WIRE_LINES = [
    b'{"jsonrpc":"2.0","method":"n/utf8","params":{"data":"Z\xc3\xbcrich \xe9\x9b\xb6"}}\n',  # kept as UTF-8
    b'{"jsonrpc": "2.0", "method": "n/crlf"}\r\n',  # written without its CR
    ANSWER + b"\n",  # the answer to our request, in the middle of the batch
    b"{not json\n",  # an invalid line in the middle of the batch
    b' {"jsonrpc":"2.0","method":"n/spaces"} \t\n',  # JSON whitespace around the value: kept
    b'{"jsonrpc":"2.0",\r"method":"n/cr"}\n',  # a CR between tokens: encoded instead
    '{"jsonrpc":"2.0","method":"n/separators","params":{"t":"a\u2028b\u0085c\x7f"}}\n'.encode(),  # escaped
    b'[{"jsonrpc":"2.0","method":"n/batch"}]\n',  # a JSON-RPC batch: encoded as before
    b'{"jsonrpc":"2.0","method":"n/last"}',  # no newline before EOF: handed over as it is
]


def test_one_read_is_recorded_as_one_batch_before_any_line_is_acted_on(tmp_path, monkeypatch):
    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 128)  # the cap, small enough to cut one line of this read
    source = tmp_path / "lines.bin"
    over_cap = b'{"jsonrpc":"2.0","method":"n/long","params":{"data":"' + b"x" * 300 + b'"}}\n'
    source.write_bytes(b"".join(WIRE_LINES[:-1] + [over_cap, WIRE_LINES[-1]]))
    path = tmp_path / "wire.jsonl"
    writer = RecordingWriter.create(path)
    sink = CountingSink(writer)
    client = Client(sink, timeout=CHILD_TIMEOUT)
    connection = Connection(client, StdioTarget((*fixture_command("wire_server", "lines", str(source)),)))
    on_disk_when_answered: list[bytes] = []
    try:
        connection.start()
        pending = client.request("go", on_done=lambda p: on_disk_when_answered.append(path.read_bytes()))
        assert pending.wait(CHILD_TIMEOUT) == {}
        assert connection.exit_recorded.wait(CHILD_TIMEOUT)
    finally:
        connection.close()
        client.close()
        writer.close()
    # The server's one write (smaller than a pipe's atomic write) came as one read and so one batch; the line
    # without a newline came at EOF, alone. (The spawn, our request and the exit are single adds.)
    assert sink.batches == [11, 1]
    # The whole batch was on disk when the answer in its middle was acted on.
    assert on_disk_when_answered[0].count(b'"dir":"from_server"') == 11
    lines = path.read_bytes().split(b"\n")[:-1]
    server = [line for line in lines if b'"from_server"' in line]
    records = [json.loads(line) for line in server]
    assert [r["kind"] for r in records] == ["message"] * 3 + ["invalid"] + ["message"] * 4 + ["invalid"] * 3 + ["message"]
    assert msg_bytes(server[0]) == WIRE_LINES[0][:-1]  # UTF-8 as sent
    assert msg_bytes(server[1]) == b'{"jsonrpc": "2.0", "method": "n/crlf"}'
    assert msg_bytes(server[2]) == ANSWER
    assert records[3]["raw"] == "{not json"
    assert msg_bytes(server[4]) == WIRE_LINES[4][:-1]
    assert b"\r" not in server[5] and records[5]["msg"] == {"jsonrpc": "2.0", "method": "n/cr"}
    assert b"\xe2\x80\xa8" not in server[6] and b"\xc2\x85" not in server[6] and b"\x7f" not in server[6]
    assert records[6]["msg"]["params"]["t"] == "a\u2028b\u0085c\x7f"
    assert records[7]["msg"] == [{"jsonrpc": "2.0", "method": "n/batch"}]
    assert "".join(r["raw"] for r in records[8:11]) == over_cap[:-1].decode()  # cut at the cap, nothing lost
    assert msg_bytes(server[11]) == WIRE_LINES[-1]


def test_a_batch_is_written_at_once_indexed_per_record_and_shown_to_listeners_once():
    class CountingWriter(RecordingWriter):
        writes = 0

        def write_lines(self, data: bytes) -> int:
            self.writes += 1
            return super().write_lines(data)

    writer = CountingWriter.spool()
    store = Store(writer)
    seen: list[list[int]] = []
    store.listeners.append(lambda batch: seen.append([r.seq for r in batch]))
    try:
        records = [Record(EVENT, event="spawn", detail={"pid": n}) for n in range(3)]
        assert store.add_batch(records) is records
        store.add(Record(EVENT, event="exit", detail={"code": 0}))
        assert writer.writes == 2 and seen == [[1, 2, 3], [4]]
        assert [row.seq for row in store.rows()] == [1, 2, 3, 4]
        assert [store.record(n).detail for n in (1, 2, 3, 4)] == [{"pid": 0}, {"pid": 1}, {"pid": 2}, {"code": 0}]
    finally:
        writer.close()
