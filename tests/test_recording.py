"""inspector.recording: the writer (exclusive, 0600, whole lines) and the tolerant reader."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import tempfile
import threading
import tracemalloc
import uuid

import pytest

from conftest import read_records, wait_for
from factories import event, received, sent, stderr, write_deep_recording
from inspector import __version__
from inspector.protocol import jsonrpc
from inspector.recording import format as limits
from inspector.recording import files as recording
from inspector.recording.files import (
    FORMAT, REDACTED, VERSION, RecordingError, RecordingWriter, default_path, ensure_folder, header,
    Line, read_recording, safe_name, split_lines,
)
from inspector.protocol.records import Record

TARGET = {"transport": "stdio", "command": ["python", "server.py"], "cwd": "/srv"}


def sample_records() -> list[Record]:
    return [
        event("spawn", {"pid": 1}, seq=1, t=1.0),
        sent(jsonrpc.request(1, "tools/call", {"text": "multi\nline ünï 零"}), seq=2, t=1.5),
        stderr("café au lait\r", seq=3, t=2.0),
        received(jsonrpc.result_response(1, {"content": []}), seq=4, t=2.5),
    ]


def write_file(path, head=None, records=(), tail=b"") -> None:
    """A recording written the way the writer does it."""
    writer = RecordingWriter.create(path, unique=False)
    writer.write_header(head if head is not None else header(TARGET))
    for record in records:
        writer.write_lines(record.to_line())
    if tail:
        writer.write_lines(tail)
    writer.close()


def lines_of(*objs) -> bytes:
    return b"".join(json.dumps(o, ensure_ascii=False).encode() + b"\n" for o in objs)


HEAD = header(TARGET)


# ------------------------------------------------------------------------------------------------ writer

def test_new_file_is_0600_and_exclusive(tmp_path):
    path = tmp_path / "a.jsonl"
    writer = RecordingWriter.create(path)
    writer.close()
    assert writer.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_name_clash_gets_a_suffix(tmp_path):
    path = tmp_path / "2026-11-30T10-12-03-server.jsonl"
    path.write_text("keep me\n")
    second = RecordingWriter.create(path, unique=True)
    third = RecordingWriter.create(path, unique=True)
    assert second.path == tmp_path / "2026-11-30T10-12-03-server-2.jsonl"
    assert third.path == tmp_path / "2026-11-30T10-12-03-server-3.jsonl"
    second.close(), third.close()
    assert path.read_text() == "keep me\n"
    assert stat.S_IMODE(second.path.stat().st_mode) == 0o600


def test_name_clash_without_unique_is_an_error(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("keep me\n")
    with pytest.raises(RecordingError, match="already exists"):
        RecordingWriter.create(path, unique=False)
    assert path.read_text() == "keep me\n"


def test_symlink_at_the_path_is_never_followed(tmp_path):
    outside = tmp_path / "outside.txt"
    link = tmp_path / "rec.jsonl"
    link.symlink_to(outside)  # dangling: O_CREAT alone would create outside.txt
    with pytest.raises(RecordingError):
        RecordingWriter.create(link, unique=False)
    writer = RecordingWriter.create(link, unique=True)
    writer.close()
    assert writer.path == tmp_path / "rec-2.jsonl"
    assert not outside.exists()


def test_view_opens_only_a_regular_file_and_never_follows_a_symlink(tmp_path):
    # Security row 7, for `view FILE` (RecordingWriter.open_existing): a symlink planted where a recording was
    # expected, pointing outside, is refused; so are a device and a FIFO (which must not block the open waiting for
    # a writer: the command line refuses it too, see test_view.py's test_newer_format_and_missing_file_are_clear_errors).
    outside = tmp_path / "outside" / "secret.jsonl"
    outside.parent.mkdir()
    outside.write_bytes(lines_of(HEAD))
    link = tmp_path / "recordings" / "rec.jsonl"
    link.parent.mkdir()
    link.symlink_to(outside)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    outcome: list = []

    def open_fifo():
        try:
            RecordingWriter.open_existing(fifo)
        except RecordingError as exc:
            outcome.append(str(exc))
    opener = threading.Thread(target=open_fifo, daemon=True)
    opener.start()
    opener.join(30)
    if opener.is_alive():  # unblock the stuck open so the test ends, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("opening a FIFO as a recording blocked waiting for a writer")
    assert outcome and "not a regular file" in outcome[0]
    for path, message in ((link, "cannot open"), ("/dev/zero", "not a regular file")):
        with pytest.raises(RecordingError, match=message):
            RecordingWriter.open_existing(path)
    RecordingWriter.open_existing(outside).close()  # the control: the file itself opens


def test_missing_folder_is_a_recording_error(tmp_path):
    with pytest.raises(RecordingError, match="cannot create"):
        RecordingWriter.create(tmp_path / "nope" / "a.jsonl")


def test_every_line_is_json_and_non_ascii_stays_literal(tmp_path):
    path = tmp_path / "a.jsonl"
    write_file(path, records=sample_records())
    data = path.read_bytes()
    assert data.endswith(b"\n")
    objs = read_records(path)
    assert [o.get("seq") for o in objs] == [None, 1, 2, 3, 4]
    assert objs[0]["kind"] == "header"
    assert "ünï 零".encode() in data and "café".encode() in data
    assert b"\\u00" not in data
    assert data.count(b"\n") == 5  # the "\n" in a message is escaped, never a raw newline


def test_write_lines_returns_offsets(tmp_path):
    writer = RecordingWriter.create(tmp_path / "a.jsonl")
    first = writer.write_lines(b'{"a":1}\n')
    second = writer.write_lines(b'{"b":2}\n{"c":3}\n')
    assert (first, second, writer.offset) == (0, 8, 24)
    writer.close()
    writer.close()  # twice is fine
    assert writer.closed
    assert (tmp_path / "a.jsonl").read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'


def test_created_recording_reads_back(tmp_path):
    # The store expands rows and searches by reading the recording back (read_at, read_all_lines): a file
    # opened write-only cannot be read, and every row expansion and search then fails with EBADF.
    writer = RecordingWriter.create(tmp_path / "a.jsonl")
    writer.write_header(HEAD)
    offset = writer.write_lines(b'{"b":2}\n')
    try:
        assert writer.read_at(offset, 7) == b'{"b":2}'
        assert [line for _, line in writer.read_all_lines()][1:] == [b'{"b":2}']
    finally:
        writer.close()


def test_header_contents_and_redacted_env():
    head = header(TARGET, protocol="2025-11-25", env_keys=["API_KEY", "TOKEN"])
    assert head["kind"] == "header" and head["format"] == FORMAT and head["version"] == VERSION == 1
    assert head["inspector"] == __version__
    assert head["target"] == TARGET and head["protocol"] == "2025-11-25"
    assert head["env"] == {"API_KEY": REDACTED, "TOKEN": REDACTED} and REDACTED == "[REDACTED]"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", head["created"])


def test_inspector_run_writes_env_keys_not_values(inspector_factory, tmp_path):
    secret = f"S3CR3T-{uuid.uuid4()}"
    inspector = inspector_factory([], "--demo", "-e", f"DEMO_API_KEY={secret}", "--env=OTHER=also-secret")
    wait_for(lambda: any(r.get("event") == "handshake" for r in read_records(inspector.record)),
             message="the demo's handshake")
    assert inspector.stop() == 0
    data = inspector.record.read_text(encoding="utf-8")
    head = json.loads(data.splitlines()[0])
    assert head["env"] == {"DEMO_API_KEY": "[REDACTED]", "OTHER": "[REDACTED]"}
    assert secret not in data and "also-secret" not in data
    assert stat.S_IMODE(inspector.record.stat().st_mode) == 0o600
    assert read_recording(inspector.record).complete


# ------------------------------------------------------------------------------------------------ reader

def test_reader_round_trips_a_clean_file(tmp_path):
    path = tmp_path / "a.jsonl"
    records = sample_records() + [event("session-end", seq=5, t=3.0)]
    write_file(path, head=HEAD, records=records)
    loaded = read_recording(path)
    assert loaded.header == HEAD
    assert loaded.records == records
    assert loaded.problems == [] and loaded.complete


def test_torn_last_line_is_skipped_and_reported(tmp_path):
    path = tmp_path / "a.jsonl"
    write_file(path, records=sample_records(), tail=b'{"seq":5,"t":3.0,"kind":"std')
    loaded = read_recording(path)
    assert [r.seq for r in loaded.records] == [1, 2, 3, 4]
    assert len(loaded.problems) == 1
    assert loaded.problems[0].startswith("line 6:") and "cut off" in loaded.problems[0]
    assert not loaded.complete


def test_bad_lines_are_skipped_with_their_line_numbers(tmp_path):
    path = tmp_path / "a.jsonl"
    good = sample_records()
    body = (lines_of(HEAD) + good[0].to_line()
            + b"this is not json\n"                                         # line 3
            + b'{"seq":2,"t":1,"kind":"stderr","text":"\xff\xfe"}\n'        # line 4: invalid UTF-8
            + good[1].to_line()                                             # line 5
            + lines_of({"seq": "x", "t": 1.0, "kind": "stderr"},            # line 6
                       [1, 2],                                              # line 7
                       {"seq": 9, "t": 1.0, "kind": "bogus"},               # line 8
                       {"seq": 9, "t": 1.0, "kind": "message", "msg": {}})  # line 9: no dir
            + b"\n"                                                         # line 10: blank, not damage
            + good[2].to_line())                                            # line 11
    path.write_bytes(body)
    loaded = read_recording(path)
    assert [r.seq for r in loaded.records] == [1, 2, 3]
    numbers = [int(re.match(r"line (\d+):", p).group(1)) for p in loaded.problems]
    assert numbers == [3, 4, 6, 7, 8, 9]
    assert "not JSON" in loaded.problems[0] and "not UTF-8" in loaded.problems[1]
    assert "seq" in loaded.problems[2] and "kind" in loaded.problems[4] and "dir" in loaded.problems[5]


def test_reader_survives_a_number_too_big_for_a_float(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines_of(HEAD) + b'{"seq":1,"t":1' + b"0" * 400 + b',"kind":"stderr","text":"x"}\n'
                     + sample_records()[2].to_line())
    loaded = read_recording(path)  # must not raise OverflowError
    assert [r.seq for r in loaded.records] == [3]
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith("line 2:")


def test_oversized_line_is_skipped_and_the_next_one_read(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 600)
    path = tmp_path / "a.jsonl"
    big = stderr("x" * 3000, seq=1, t=1.0)
    path.write_bytes(lines_of(HEAD) + big.to_line() + sample_records()[2].to_line())
    loaded = read_recording(path)
    assert [r.seq for r in loaded.records] == [3]
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith("line 2:") and "longer" in loaded.problems[0]


def test_too_deeply_nested_lines_are_skipped_with_a_clear_problem(tmp_path):
    loaded = read_recording(write_deep_recording(tmp_path / "deep.jsonl"))  # must not raise RecursionError
    assert [r.seq for r in loaded.records] == [1, 3]
    assert loaded.problems == [f"line {n}: not read: nested more than {recording.RECORD_DEPTH} levels deep, skipped"
                               for n in (3, 4)]


@pytest.mark.parametrize("version", [2, 99, "1", None])
def test_newer_or_unknown_format_version_is_a_clear_error(tmp_path, version):
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines_of({**HEAD, "version": version}) + sample_records()[0].to_line())
    with pytest.raises(RecordingError, match="version") as info:
        read_recording(path)
    if version == 2:
        assert "upgrade" in str(info.value) and "version 2" in str(info.value)


def test_other_format_is_refused(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines_of({**HEAD, "format": "har"}))
    with pytest.raises(RecordingError, match="not an mcp-inspect recording"):
        read_recording(path)


@pytest.mark.parametrize("content", [b"hello world\n", b'{"some":"jsonl"}\n{"other":1}\n',
                                     b'{"seq":1,"t":1.0,"kind":"stderr","text":"x"}\n', b"\x89PNG\r\n\x1a\n\x00\x00"])
def test_non_recording_file_says_so(tmp_path, content):
    path = tmp_path / "a.txt"
    path.write_bytes(content)
    loaded = read_recording(path)
    assert loaded.header is None
    assert "not an mcp-inspect recording" in loaded.problems[0]


def test_empty_file_and_unreadable_paths(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    loaded = read_recording(path)
    assert (loaded.header, loaded.records, loaded.complete) == (None, [], False)
    with pytest.raises(RecordingError, match="cannot open"):
        read_recording(tmp_path / "missing.jsonl")
    with pytest.raises(RecordingError, match="cannot open"):
        read_recording(tmp_path)


def test_split_lines_numbers_offsets_and_flags_across_blocks(monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 5)
    data = b"ab\n\nabcde\nabcdef\nxyz\n" + b"q" * 12 + b"\nend"
    for size in (1, 2, 3, 7, len(data)):
        blocks = (data[i:i + size] for i in range(0, len(data), size))
        assert list(split_lines(blocks)) == [
            Line(1, 0, b"ab", True), Line(2, 3, b"", True), Line(3, 4, b"abcde", True),
            Line(4, 10, None, True), Line(5, 17, b"xyz", True), Line(6, 21, None, True), Line(7, 34, b"end", False),
        ], size
    assert list(split_lines(iter([b"", b"abcdefgh"]))) == [Line(1, 0, None, False)]  # oversized and cut off
    assert list(split_lines(iter([]))) == []


def test_split_lines_never_holds_a_huge_line(monkeypatch):
    # 16 MiB with no newline, capped at 600 bytes: what is kept is about the cap plus one block, not the line.
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 600)
    block = b"x" * (64 * 1024)
    tracemalloc.start()
    try:
        lines = list(split_lines(iter([block] * 256 + [b"\n{}\n"])))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == [Line(1, 0, None, True), Line(2, 256 * len(block) + 1, b"{}", True)]
    assert peak < 1024 * 1024


# ----------------------------------------------------------------------------------------------- naming

def test_default_path_naming(tmp_path):
    when = dt.datetime(2026, 11, 30, 10, 12, 3, 999, tzinfo=dt.timezone.utc)
    assert default_path(tmp_path, "server.py", now=when) == tmp_path / "2026-11-30T10-12-03-server.py.jsonl"
    assert default_path(tmp_path, "my server", now=when).name == "2026-11-30T10-12-03-my-server.jsonl"


def test_default_path_uses_utc_now(tmp_path):
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    path = default_path(tmp_path, "srv")
    after = dt.datetime.now(dt.timezone.utc)
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-srv\.jsonl", path.name)
    assert match and path.parent == tmp_path
    stamp = dt.datetime.strptime(match.group(1), "%Y-%m-%dT%H-%M-%S").replace(tzinfo=dt.timezone.utc)
    assert before <= stamp <= after


@pytest.mark.parametrize("name, expected", [
    ("server", "server"), ("my_server-2.v1", "my_server-2.v1"), ("my server", "my-server"),
    ("../../etc/passwd", "etc-passwd"), ("a/b\\c", "a-b-c"), ("héllo wörld", "h-llo-w-rld"), ("a\x00b", "a-b"),
    ("", "server"), ("///", "server"), ("..", "server"), (".hidden", "hidden"), ("C:\\x", "C-x"),
])
def test_safe_name(name, expected):
    assert safe_name(name) == expected


@pytest.mark.parametrize("name", ["../x", "..", "/etc/passwd", "a\nb", "😀" * 3, "-rf", "%2e%2e%2f"])
def test_safe_name_is_a_plain_file_name(name):
    out = safe_name(name)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", out)
    assert not out.startswith((".", "-"))


def test_ensure_folder_writes_gitignore(tmp_path):
    folder = tmp_path / "deep" / "recordings"
    ensure_folder(folder)
    assert folder.is_dir()
    assert "*" in (folder / ".gitignore").read_text().splitlines()
    (folder / ".gitignore").write_text("*\n!keep.jsonl\n")
    ensure_folder(folder)  # again: the user's edit stays
    assert (folder / ".gitignore").read_text() == "*\n!keep.jsonl\n"


# ------------------------------------------------------------------------------------------------ spool

def test_spool_has_no_path_and_reads_back(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    writer = RecordingWriter.spool()
    assert writer.path is None
    assert list(tmp_path.iterdir()) == []  # unlinked at once
    lines = [stderr(f"line {n} " + "ä" * (n * 37 % 5000), seq=n, t=1.0).to_line() for n in range(1, 600)]
    offsets = [writer.write_lines(line) for line in lines]
    assert writer.read_at(offsets[5], len(lines[5])) == lines[5]
    assert writer.read_at(offsets[-1], len(lines[-1]) - 1) == lines[-1][:-1]
    # read_all_lines crosses its 1 MiB read blocks: every line, at its offset, without its newline.
    assert writer.offset > 2 * (1 << 20)
    assert list(writer.read_all_lines()) == [(o, line[:-1]) for o, line in zip(offsets, lines)]
    writer.close()
    assert list(tmp_path.iterdir()) == []
