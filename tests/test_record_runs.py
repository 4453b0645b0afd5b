"""record_runs.stream_records (export's reports read a big recording a run of lines at a time) keeps and skips
exactly what the one reader does, line for line: the same records, the same problems, the same header."""

from __future__ import annotations

import itertools
import json

from inspector.recording import format as limits
from inspector.recording.files import RecordingReader, stream_recording
from inspector.recording.record_runs import stream_records

HEAD = b'{"kind":"header","format":"mcp-inspect-recording","version":1}'
DEEP = b'{"seq":45,"t":45.0,"kind":"event","event":"x","detail":{"a":' + b"[" * 200 + b"]" * 200 + b"}}"
"""Deeper than RECORD_DEPTH, short enough to be read."""


def line(seq, **fields) -> bytes:
    return json.dumps({"seq": seq, "t": float(seq), "kind": "stderr", "text": f"line {seq}", **fields}).encode()


def damaged_recording(path, tail: bytes, not_utf8: bool):
    good = [line(seq) for seq in range(1, 40)]
    notification = (b'{"seq":50,"t":50.0,"kind":"message","dir":"from_server","msg":{"jsonrpc":"2.0",'
                    b'"method":"notifications/message","params":{"level":"info","data":"x"}}}')
    lines = [b"\xef\xbb\xbf" + HEAD, *good[:5], b"", b"{not json", line(3),  # a seq that does not increase
             b'{"seq":41,"t":"soon","kind":"stderr"}', DEEP, good[5].replace(b"line", b"l\xffne") if not_utf8 else b"",
             *good[6:], line(42) + b"  ", b"  " + line(43), line(44) + b" {}", b"[]", notification, b"x" * 1200,
             line(51, t=51), line(60, kind="message", dir="sideways"), line(61)]
    path.write_bytes(b"\n".join(lines) + b"\n" + tail)


def test_stream_records_keeps_and_reports_what_the_reader_does(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1000)  # the x line is too long: skipped unread
    # The last line whole or cut off; a line that is not UTF-8 (its run goes line by line) or none; runs cut anywhere.
    for tail, not_utf8, block in itertools.product((b"", line(62)), (True, False), (64, 1000, 1 << 20)):
        monkeypatch.setattr(limits, "BLOCK_BYTES", block)
        path = tmp_path / "damaged.jsonl"
        damaged_recording(path, tail, not_utf8)
        expected_reader, reader = RecordingReader(), RecordingReader()
        expected = [(found.data, record.to_dict()) for found, record in stream_recording(path, expected_reader)
                    if not isinstance(record, dict)]
        got = [(data, record.to_dict()) for data, record, _ in stream_records(path, reader)]
        assert got == expected
        assert reader.finish() == expected_reader.finish() and len(reader.problems) >= 8
        assert reader.header == expected_reader.header == json.loads(HEAD)
