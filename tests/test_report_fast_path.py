"""`export --format html|md` of a big recording takes a fast path: a record's line as read stands for its JSON form
(no dict made, nothing encoded again) when it is exactly that form, and masked, damaged or odd lines go the plain
way. The report must be the one the plain path (every record through `to_dict`, every value walked for masking)
makes of the same file: the real CLI's output against the plain path's, on a recording that mixes them all."""

from __future__ import annotations

import base64
import gc
import gzip
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from inspector.commands.export import export_main
from inspector.protocol.records import Pairer, from_dict
from inspector.protocol.redact import Rules
from inspector.recording.export import in_selection, parse_selection, redact_recording
from inspector.recording.files import RecordingReader, stream_recording
from inspector.recording.record_runs import JsonForm, stream_records
from inspector.recording.reports import summary
from inspector.recording.reports.formats import REPORTS
from inspector.recording.reports.html import records_json, rows_json

CHILD_TIMEOUT = 90
DATA = re.compile(r'<script type="application/octet-stream" id="report-data">([^<]*)</script>')
PASSWORD = "hunter2hunter2"
TOKEN = "ghp_" + "Zq8Xw3Lm5Rt7Vy9Bn2Kd4Hf6Jp1Cs0Ga2Ue4Io"
HEADER = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-12-01T00:00:00.000Z",
          "inspector": "0.1.0", "protocol": "auto", "env": {"API_KEY": "[REDACTED]"},
          "target": {"transport": "stdio", "command": ["python", "s.py", "--token", "abc123secretvalue"], "cwd": "/x"}}


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def mixed_lines() -> list[str]:
    """Clear lines as mcp-inspect writes them, lines with secrets (named, shaped, and one only learned from another
    line), lines that hold their record in another form (a time to_dict rounds, an int time, keys in another
    order, an unknown key, optional fields of every kind), damaged lines, events of every kind the reports read,
    and a flood of notifications."""
    lines, seq = [compact(HEADER)], 0

    def add(written: str | None = None, **fields) -> None:
        nonlocal seq
        seq += 1
        lines.append(written % seq if written else compact({"seq": seq, "t": 1.5 + seq / 8, **fields}))

    def message(direction: str, msg, **more) -> None:
        add(kind="message", dir=direction, msg=msg, **more)

    add(kind="event", event="spawn", detail={"pid": 1})
    message("to_server", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "c", "version": "1"}}})
    message("from_server", {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mixed", "version": "2"}}})
    add(kind="event", event="handshake", detail={"era": "legacy", "protocolVersion": "2025-11-25",
                                                 "serverInfo": {"name": "mixed", "version": "2"},
                                                 "capabilities": {"tools": {}}})
    message("to_server", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "t", "arguments": {"password": PASSWORD}}})
    add(kind="stderr", text=f"using token={TOKEN} now")
    add(kind="stderr", text="plain stderr ünïcode")
    message("from_server", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "json", "text": "echo"}]}})
    add(kind="stderr", text=f"the password was {PASSWORD}")  # clear to the Screen until the password is learned
    add('{"seq":%d,"t":2.12345678,"kind":"stderr","text":"a time to_dict rounds"}')
    add('{"seq":%d,"t":3,"kind":"stderr","text":"an int time"}')
    add(kind="stderr", text="an unknown key", extra=1)
    add('{"kind":"stderr","seq":%d,"t":3.25,"text":"keys in another order"}')
    add('{"seq":%d,"t":3.5,"kind":"stderr","text":5}')
    add('{"seq":%d,"t":3.75,"kind":"message","dir":"from_server","msg":{"jsonrpc": "2.0", "method": "x/y", '
        '"params": {"s": "\\u00e9\\n"}}}')  # the server's own spacing and escapes
    message("to_server", {"jsonrpc": "2.0", "method": "notifications/initialized"}, origin="", follows=True)
    message("to_server", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, origin="user", follows=2,
            http={"status": 200})
    add(kind="invalid", dir="from_server", raw="Starting server...", error="not JSON")
    add(kind="event", event="warning", detail={"rule": "stdout-not-json", "seq": seq, "text": "a recorded warning"})
    lines += ["{not json", '{"seq":2,"t":1.0,"kind":"stderr","text":"seq back"}', "",
              '{"seq":99999,"t":"soon","kind":"stderr"}', "[1,2]"]
    message("from_server", {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "t", "inputSchema": {}}]}})
    message("from_server", {"jsonrpc": "2.0", "id": 77, "result": {}})
    for n in range(2000):
        message("from_server", {"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": "info", "data": f"flood {n}"}})
    add(kind="event", event="restart", detail={"reason": "file changed", "paths": ["/x/s.py"]})
    add(kind="event", event="diff", detail={"reason": "restart", "summary": "1 tool added", "changes": []})
    add(kind="event", event="exit", detail={"code": 1, "signal": None, "stderr_tail": ["boom"]})
    message("from_server", [{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}])
    add(kind="event", event="session-end", detail={})
    return lines


def clean_lines(nan_text: bool) -> list[str]:
    """Only lines that are exactly their records' JSON form (every record's line stands for it), one of them
    holding the text NaN, or none."""
    lines = [line for line in mixed_lines() if "flood" in line]
    return [compact(HEADER)] + lines + [compact({"seq": 10 ** 6, "t": 9.5, "kind": "stderr",
                                                  "text": "NaN and Infinity, as text" if nan_text else "done"})]


def plain_report(path, kind: str, keys: list[str], seq: str | None) -> str:
    """The report the plain path makes: the one reader, every record through to_dict, every value walked."""
    reader = RecordingReader()
    records = [record for _, record in stream_recording(path, reader) if not isinstance(record, dict)]
    problems = reader.finish()
    ranges = parse_selection(seq) if seq else None
    result = redact_recording(reader.header, records, Rules.build(keys, [], []))
    assert result.typed_lines is None  # no line stands for a record here
    return REPORTS[kind].render(result, problems, lambda s: in_selection(s, ranges))


@pytest.mark.parametrize("kind", ["html", "md"])
@pytest.mark.parametrize("lines, keys, seq", [
    (mixed_lines(), [], None), (mixed_lines(), ["clientInfo"], None), (mixed_lines(), [], "2-12,2000-2010"),
    (clean_lines(False), ["password"], None), (clean_lines(True), ["password"], None)],
    ids=["all", "redact-key", "seq", "clean", "clean-nan-text"])
def test_the_cli_report_is_the_one_the_plain_path_makes(tmp_path, request, kind, lines, keys, seq):
    recording, out = tmp_path / "mixed.jsonl", tmp_path / f"report.{kind}"
    recording.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options = [arg for key in keys for arg in ("--redact-key", key)] + (["--seq", seq] if seq else [])
    done = subprocess.run([sys.executable, "-m", "inspector.cli", "export", str(recording), "-o", str(out),
                           "--format", kind, *options], capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"; [1-9][0-9]* values masked", done.stderr), done.stderr[-500:]
    if "clean" in request.node.name:  # each record's line stands for it (the whole array is one join)
        reader = RecordingReader()
        lines, records, forms = zip(*stream_records(recording, reader))
        result = redact_recording(reader.header, records, Rules.build(keys, [], []), lines, forms)
        assert None not in result.typed_lines and len(result.typed_lines) == len(lines)
    got, expected = out.read_text(encoding="utf-8"), plain_report(recording, kind, keys, seq)
    assert PASSWORD not in got and TOKEN not in got
    if kind == "md":
        assert got == expected
        return
    got_data, expected_data = (json.loads(gzip.decompress(base64.b64decode(DATA.search(text).group(1))))
                               for text in (got, expected))
    assert DATA.sub("", got) == DATA.sub("", expected)
    for member in expected_data:  # compact JSON: the same keys in the same order, an int is not a float
        assert compact(got_data[member]) == compact(expected_data[member]), member
    assert list(got_data) == list(expected_data)
    assert PASSWORD not in json.dumps(got_data, ensure_ascii=False)


ODD_LINES = [
    '{"seq":1,"t":1.5,"kind":"message","dir":"from_server","msg":{"jsonrpc":"2.0","method":"m"}}',
    '{"seq":1,"t":1.5,"kind":"stderr","text":"x"}',
    '{"seq":1,"t":1.5,"kind":"event","event":"spawn","detail":{"pid":3}}',
    '{"seq":1,"t":1.5,"kind":"invalid","dir":"from_server","raw":"r","error":"e"}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"origin":"user","follows":4,"http":{"a":1}}',
    '{"seq":1,"t":1.5,"kind":"stderr","text":"x","text":"y"}',
    '{"seq":1,"t":1.1234567,"kind":"stderr","text":"x"}',
    '{"seq":1,"t":1.5,"kind":"stderr","text":null}',
    '{"seq":1,"t":1.5,"kind":"stderr","text":["x"]}',
    '{"seq":1,"t":1.5,"kind":"stderr","text":"x","origin":"user"}',
    '{"seq":1,"t":1.5,"kind":"event","event":"e","detail":{},"dir":"to_server"}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"origin":""}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"follows":true}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"follows":2.0}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"http":{}}',
    '{"seq":1,"t":1.5,"kind":"message","dir":"to_server","msg":{},"http":[1]}',
    '{"seq":1,"t":1.5,"kind":"invalid","dir":"from_server","raw":5,"error":"e"}',
    '{"seq":1,"t":1.5,"kind":"invalid","dir":"from_server","raw":"r","error":"e","origin":"user","http":{"s":1}}',
    '{"seq":1,"kind":"stderr","t":1.5,"text":"x"}',
    '{"seq":1,"t":3.0,"kind":"stderr","text":"x"}',
    '{"seq":1,"t":3,"kind":"stderr","text":"x"}',  # after 3.0: equal, yet an int
    '{"seq":1,"t":3,"kind":"message","dir":"to_server","msg":{},"origin":"user"}',
    '{"seq":1,"t":1e300,"kind":"stderr","text":"x"}',
    '{"seq":1,"t":NaN,"kind":"stderr","text":"x"}',
]


def test_a_line_stands_for_its_record_only_when_it_is_exactly_the_records_json_form():
    shared = JsonForm()  # one per file: it keeps the last time it judged
    for line in ODD_LINES + ODD_LINES[::-1]:
        value = json.loads(line)
        record = from_dict(value)
        try:
            expected = compact(record.to_dict()) == compact(value)
        except ValueError:
            expected = False
        assert shared.exact(value, record) is expected, line
        assert JsonForm().exact(value, record) is expected, line


def test_the_rows_are_the_json_of_every_row_however_many_repeat():
    records = [record for record in map(_record, mixed_lines()[1:]) if record is not None]
    rows = summary.index(records).rows
    assert len({compact(row) for row in rows}) >= 20 and len(rows) > 2000  # distinct ones, and a flood of equal ones
    rows[5]["text"], rows[6]["ms"] = "a text", 1.0  # a row that pairs with nothing but differs from its kind's
    assert rows_json(rows).decode("utf-8") == compact(rows)
    assert records_json(records, None).decode("utf-8") == compact([record.to_dict() for record in records])


def _record(line: str):
    """The line's record, None for a line the reader would skip (damaged, or not a record)."""
    try:
        return from_dict(json.loads(line))
    except ValueError:
        return None


@pytest.mark.parametrize("first_line", [compact(HEADER), '{"not": "a header"}', '{"kind":"header","format":"x"}'])
def test_the_cycle_collector_is_on_again_after_a_report_made_or_refused(tmp_path, first_line):
    """The report is made with the collector paused (nothing it reads is a cycle); whatever happens, export_main
    gives it back, for a caller that goes on (a test, pytest's plugin)."""
    recording, out = tmp_path / "short.jsonl", tmp_path / "out.md"
    recording.write_text("\n".join([first_line] + mixed_lines()[1:20]) + "\n", encoding="utf-8")
    assert gc.isenabled()
    export_main([str(recording), "-o", str(out), "--format", "md"])
    assert gc.isenabled()


def test_the_index_says_of_each_record_what_the_pairer_says():
    """The index asks the Pairer only about records it learns from; of the others (notifications, stderr, invalid
    lines) it says what the Pairer would say."""
    records = [record for record in map(_record, mixed_lines()[1:]) if record is not None]
    seq = records[-1].seq
    records += [from_dict({"seq": seq + 1, "t": 9.0, "kind": "message", "dir": "to_server",
                           "msg": {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}}),
                from_dict({"seq": seq + 2, "t": 9.5, "kind": "event", "event": "timeout", "detail": {"id": 9}}),
                from_dict({"seq": seq + 3, "t": 9.75, "kind": "message", "dir": "from_server", "msg": {}}),
                from_dict({"seq": seq + 4, "t": 9.8, "kind": "message", "dir": "to_server",
                           "msg": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}}),
                from_dict({"seq": seq + 5, "t": 10.0, "kind": "message", "dir": "from_server",
                           "msg": {"jsonrpc": "2.0", "id": 9, "result": {}}})]
    pairer, rows = Pairer(), summary.index(records).rows
    for record, row in zip(records, rows, strict=True):
        pairing = pairer.observe(record)
        assert (row["method"], row["late"], row["unmatched"]) == (pairing.method, pairing.late, pairing.unmatched)
        assert pairing.pair_seq is None or row["pair"] == pairing.pair_seq  # a request's row names its answer
    assert rows[-1]["late"] and rows[-1]["pair"] == seq + 1
    assert sum(row["kind"] == "notification" and row["method"] == "notifications/message" for row in rows) >= 2000
