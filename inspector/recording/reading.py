"""Reading recordings back: the one tolerant reader, and the line splitter every reader shares.

`read_recording` (replay, export, the pytest plugin), `Store.load_existing` (view) and the writer's own read-back
all cut lines with `split_lines` and skip bad ones through `RecordingReader`, so they agree on what is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, NamedTuple

from inspector import __version__
from inspector.protocol.json import TooDeep, loads
from inspector.protocol.records import EVENT, Record, RecordError, from_dict
from inspector.recording import format as limits  # the caps are read at call time: tests lower them
from inspector.recording.format import (
    FORMAT, RECORD_DEPTH, UTF8_BOM, VERSION, RecordingError,
)


@dataclass
class Loaded:
    """A recording as read back."""

    header: dict | None
    records: list[Record]
    problems: list[str] = field(default_factory=list)
    """One line per skipped line: which line and why (a cut-off last line, bad JSON, a wrong shape)."""
    complete: bool = False
    """The file ends with a session-end event (closed cleanly)."""


def read_recording(path: Path | str) -> Loaded:
    """Read a recording, skipping (and reporting) what cannot be read; never executes anything."""
    reader = RecordingReader()
    records = [item for _, item in stream_recording(path, reader) if isinstance(item, Record)]
    return Loaded(header=reader.header, records=records, problems=reader.finish(),
                  complete=bool(records and records[-1].kind == EVENT and records[-1].event == "session-end"))


def stream_recording(path: Path | str, reader: RecordingReader) -> Iterator[tuple[Line, dict | Record]]:
    """(the Line, the header or a Record) for each line `reader` keeps, read block by block: memory holds one block
    and one line (at most MAX_LINE_BYTES), whatever the file's size. The reader notes what it skips."""
    for line in file_lines(path):
        item = reader.feed(line)
        if item is not None:
            yield line, item


def file_lines(path: Path | str) -> Iterator[Line]:
    """A file's Lines (split_lines), read block by block; raises RecordingError when it cannot be opened."""
    yield from split_lines(file_blocks(path))


def file_blocks(path: Path | str) -> Iterator[bytes]:
    """A file's bytes, BLOCK_BYTES at a time; raises RecordingError when it cannot be opened."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise RecordingError(f"cannot open {path}: {exc.strerror}") from None
    with handle:
        yield from iter(lambda: handle.read(limits.BLOCK_BYTES), b"")


class Line(NamedTuple):
    """One line of a recording as split_lines cuts it (a tuple: made once per line, it must be cheap)."""

    number: int
    """1-based."""
    offset: int
    data: bytes | None
    """The line without its newline; None when it is longer than MAX_LINE_BYTES (never held whole)."""
    ended: bool
    """False for a last line with no newline (cut off)."""


def split_lines(blocks: Iterator[bytes]) -> Iterator[Line]:
    """Cut a stream of blocks into Lines, in linear time, holding at most MAX_LINE_BYTES plus one block."""
    cap = limits.MAX_LINE_BYTES
    buf, start, scanned, number = bytearray(), 0, 0, 0
    skipping: int | None = None  # the offset of an oversized line whose end is still being looked for
    for block in blocks:
        if skipping is not None:
            nl = block.find(b"\n")
            if nl < 0:
                start += len(block)
                continue
            number += 1
            yield Line(number, skipping, None, True)
            skipping, start, block = None, start + nl + 1, block[nl + 1:]
        buf += block
        lo = 0
        while (nl := buf.find(b"\n", scanned)) >= 0:
            number += 1
            yield Line(number, start + lo, bytes(buf[lo:nl]) if nl - lo <= cap else None, True)
            lo = scanned = nl + 1
        del buf[:lo]
        start, scanned = start + lo, len(buf)
        if len(buf) > cap:
            skipping, start, scanned = start, start + len(buf), 0
            buf.clear()
    if skipping is not None:
        yield Line(number + 1, skipping, None, False)
    elif buf:
        yield Line(number + 1, start, bytes(buf), False)


class RecordingReader:
    """The one reader of recordings: `read_recording`, `Store.load_existing` (view, the page) and so replay and
    export all skip the same lines with the same problem messages. Feed it Lines in order, then call finish().

    Skipped silently: blank lines, and a UTF-8 byte order mark before the header (editors add both).
    Skipped, one problem each: a line longer than MAX_LINE_BYTES, a cut-off last line, a line that is not UTF-8,
    not JSON or nested deeper than RECORD_DEPTH, one that is not a record (RecordError), and a record whose seq
    does not increase. A header is only read on line 1; a header of another format or a newer version raises
    RecordingError.
    """

    def __init__(self) -> None:
        self.header: dict | None = None
        self.problems: list[str] = []
        self.last_seq = 0

    def feed(self, line: Line) -> dict | Record | None:
        """The header (line 1), a Record, or None for a skipped line (its problem noted)."""
        number, data = line.number, line.data
        if data is None:
            return self._skip(number, f"longer than {limits.MAX_LINE_BYTES} bytes")
        if number == 1 and data.startswith(UTF8_BOM):
            data = data[len(UTF8_BOM):]  # some editors save one; it is not part of the header
        if not data.strip():
            return None  # a blank line, as an editor leaves at the end: nothing lost, not damage
        if not line.ended:
            return self._skip(number, "cut off (no newline at the end of the file)")
        try:
            obj = loads(data.decode("utf-8"), RECORD_DEPTH)
        except UnicodeDecodeError:
            return self._skip(number, "not UTF-8")
        except TooDeep as exc:
            return self._skip(number, f"not read: {exc}")
        except ValueError as exc:
            return self._skip(number, f"not JSON ({getattr(exc, 'msg', exc)})")
        if number == 1 and isinstance(obj, dict) and obj.get("kind") == "header":
            check_header(obj)
            self.header = obj
            return obj
        try:
            record = from_dict(obj)
        except RecordError as exc:
            return self._skip(number, str(exc))
        if record.seq <= self.last_seq:
            return self._skip(number, f"seq {record.seq} does not increase")
        self.last_seq = record.seq
        return record

    def _skip(self, number: int, why: str) -> None:
        self.problems.append(f"line {number}: {why}, skipped")

    def finish(self) -> list[str]:
        """The problems, led by a missing header (an empty file has none either)."""
        if self.header is None:
            self.problems.insert(0, "no header line: not an mcp-inspect recording, or its first line is damaged")
        return self.problems


def check_header(head: dict) -> None:
    """Refuse files that are not recordings or come from a newer format version."""
    if head.get("format") != FORMAT:
        raise RecordingError(f"not an mcp-inspect recording (format {head.get('format')!r})")
    version = head.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise RecordingError(
            f"this recording has format version {version!r}; this mcp-inspect ({__version__}) reads up to "
            f"version {VERSION}: upgrade mcp-inspect to open it")
