"""Index an existing recording (for `view`) in one pass over the file, fast enough for a million lines.

The one reader (files.RecordingReader) decides what is skipped and why; this module only spares it the work it
would repeat a million times. Whole lines are taken a block at a time (no object per line), each decoded by json's
C scanner straight from the block's text (no json.loads wrapper per line), and must be exactly one JSON value.
A notification or a stderr line, most of any big recording, is indexed straight from its decoded object after
the same checks `from_dict` and the reader make (and fed to the stderr burst tracker as RowIndex.add feeds it);
every other line (the header, events, requests and responses, a line that does
not decode, a blank one) goes through the reader itself, so the problems are exactly those `read_recording`
reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterator

from inspector.recording import format as limits  # the caps are read at call time: tests lower them
from inspector.recording.files import RECORD_DEPTH, Line, RecordingReader, RecordingWriter, split_lines
from inspector.recording.row_index import DIR_CODE, KIND_CODE, LEVEL_CODE, RowIndex
from inspector.protocol.json import scan_at
from inspector.protocol.records import FROM_SERVER, TO_SERVER, Record


@dataclass(frozen=True, slots=True)
class Run:
    """Whole lines of a recording, none longer than the reader's cap, joined by newlines (the last one's cut)."""

    number: int
    """The first line's number (1-based)."""
    offset: int
    data: bytes


def load_rows(index: RowIndex, writer: RecordingWriter, reader: RecordingReader) -> None:
    """Index every readable record of the file; the reader gathers the header and the problems."""
    for item in split_runs(writer.blocks()):
        if isinstance(item, Line):
            _one_line(index, reader, item)
        elif not _fast_run(index, reader, item):
            _slow_run(index, reader, item)


def split_runs(blocks: Iterator[bytes]) -> Iterator[Run | Line]:
    """Cut blocks into runs of whole lines, with the numbers and offsets files.split_lines gives them. A long
    line (and a last line without a newline) comes as a Line: split_lines itself reads it, so it is held at most
    up to MAX_LINE_BYTES (beyond, skipped without being held), as every reader holds it."""
    cap = limits.MAX_LINE_BYTES
    long_line = min(cap, 4 * limits.BLOCK_BYTES)
    buf, start, number = bytearray(), 0, 0
    blocks = chain(blocks, [b""])  # the empty block at the end cuts what is left after a long line
    for block in blocks:
        buf += block
        cut = buf.rfind(b"\n")
        if cut >= 0:
            data = bytes(buf[:cut])
            if len(data) <= cap:  # so is every line in it
                yield Run(number + 1, start, data)
            else:
                yield from _shifted(split_lines(iter([data + b"\n"])), number, start)
            number += data.count(b"\n") + 1
            del buf[:cut + 1]
            start += cut + 1
        if len(buf) > long_line:
            rest: list[bytes] = []
            taken = [len(buf)]
            yield from _shifted(split_lines(_to_its_end(bytes(buf), blocks, rest, taken)), number, start)
            buf.clear()
            if not rest:
                return  # the file ended within that line
            number, start, buf = number + 1, start + taken[0], bytearray(rest[0])
    if buf:
        yield Line(number + 1, start, bytes(buf), False)


def _to_its_end(head: bytes, blocks: Iterator[bytes], rest: list[bytes], taken: list[int]) -> Iterator[bytes]:
    """The blocks of one line that started in `head`, up to and including its newline; what follows goes to rest.
    `taken` counts the bytes given."""
    yield head
    for block in blocks:
        nl = block.find(b"\n")
        if nl < 0:
            taken[0] += len(block)
            yield block
            continue
        taken[0] += nl + 1
        rest.append(block[nl + 1:])
        yield block[:nl + 1]
        return


def _shifted(lines: Iterator[Line], number: int, start: int) -> Iterator[Line]:
    """Lines numbered and placed as in the whole file (split_lines counts from the part it was given)."""
    for line in lines:
        yield Line(number + line.number, start + line.offset, line.data, line.ended)


def _one_line(index: RowIndex, reader: RecordingReader, line: Line) -> None:
    record = reader.feed(line)
    if isinstance(record, Record):
        index.add(record, line.offset, len(line.data))


def _slow_run(index: RowIndex, reader: RecordingReader, run: Run) -> None:
    offset, number = run.offset, run.number
    for data in run.data.split(b"\n"):
        _one_line(index, reader, Line(number, offset, data, True))
        offset += len(data) + 1
        number += 1


def _fast_run(index: RowIndex, reader: RecordingReader, run: Run) -> bool:
    """Index a run from its decoded text; False (nothing done) when it must go line by line (not UTF-8)."""
    data = run.data
    if run.number == 1:  # the header (and a byte order mark) are the reader's alone
        first = data.split(b"\n", 1)[0]
        _one_line(index, reader, Line(1, run.offset, first, True))
        if len(first) == len(data):
            return True
        return _fast_run(index, reader, Run(2, run.offset + len(first) + 1, data[len(first) + 1:]))
    try:
        text = data.decode("utf-8")  # the reader decodes each line as strict UTF-8 too
    except UnicodeDecodeError:
        return False
    # A line's length in bytes: where the run is ASCII (nearly always), its length in characters; else its bytes
    # counted from a split of the run (a million bytes objects are a tenth of a 10^6-line view: made only if needed).
    byte_lengths = None if data.isascii() else map(len, data.split(b"\n"))
    # One loop, no call per line but the scanner's: a million lines make every call count.
    fast: list[tuple] = []  # rows not yet in the index: added column by column, in C
    method_code, origin_code, find, count, scan = index.methods.code, index.origins.code, text.find, text.count, scan_at
    bursts = index.bursts
    offset, number, pos, size, last_seq = run.offset, run.number, 0, len(text), reader.last_seq
    while pos <= size:  # every line of the run, the last one (no newline after it) included
        end = find("\n", pos)
        if end < 0:
            end = size
        length = end - pos if byte_lengths is None else next(byte_lengths)
        value = None
        # nor nest deeper than the reader allows (a bracket a byte)
        if length <= RECORD_DEPTH or count("{", pos, end) + count("[", pos, end) <= RECORD_DEPTH:
            try:
                value, stop = scan(text, pos)
            except (StopIteration, ValueError, RecursionError):
                pass
            else:
                if stop != end:
                    value = None  # not exactly one value on the line: the reader says what is wrong
        row = _unpaired_row(value, last_seq, offset, length, method_code, origin_code, bursts) \
            if type(value) is dict else None
        if row is not None:
            fast.append(row)
            last_seq = row[0]
        else:
            if fast:
                index.extend_unpaired(fast)
                fast = []
            reader.last_seq = last_seq
            start = offset - run.offset
            _one_line(index, reader, Line(number, offset, data[start:start + length], True))
            last_seq = reader.last_seq
        offset, number, pos = offset + length + 1, number + 1, end + 1
    if fast:
        index.extend_unpaired(fast)
    reader.last_seq = last_seq
    return True


def _unpaired_row(value: dict, last_seq: int, offset: int, length: int, method_code, origin_code, bursts
                  ) -> tuple | None:
    """The index row of a decoded line that is a notification or a stderr line passing from_dict's and the
    reader's checks (nothing to pair), as RowIndex.extend_unpaired takes it; None for anything else (the reader
    and RowIndex.add take it). Feeds the burst tracker as RowIndex.add would."""
    seq, t, kind = value.get("seq"), value.get("t"), value.get("kind")
    if type(seq) is not int or seq <= last_seq:
        return None
    if type(t) is not float:  # an int t (a hand-made recording's) is a float in the record, as from_dict makes it
        if type(t) is not int:
            return None
        try:
            t = float(t)
        except OverflowError:
            return None  # beyond a float: the reader says what is wrong with it
    origin = value.get("origin")
    origin = origin_code(origin) if type(origin) is str else 0  # code 0 is None: most rows have no origin
    if kind == "stderr":
        text = value.get("text")
        head = bursts.follow(seq, t, text if type(text) is str else "")
        return seq, t, offset, length, _STDERR_CODE, _FROM_SERVER_CODE, 0, 0, origin, head
    if kind != "message":
        return None
    direction, msg = value.get("dir"), value.get("msg")
    method = msg.get("method") if type(msg) is dict else None
    if type(method) is not str or "id" in msg or (direction != TO_SERVER and direction != FROM_SERVER):
        return None
    if direction == TO_SERVER:
        bursts.open = None  # a record to the server ends an open stderr burst (bursts.py)
    params = msg.get("params") if method == "notifications/message" else None
    level = params.get("level") if type(params) is dict else None
    return (seq, t, offset, length, _NOTIFICATION_CODE, DIR_CODE[direction], method_code(method),
            LEVEL_CODE.get(level, 0) if type(level) is str else 0, origin, 0)


_STDERR_CODE, _NOTIFICATION_CODE = KIND_CODE["stderr"], KIND_CODE["notification"]
_FROM_SERVER_CODE = DIR_CODE[FROM_SERVER]


