"""A recording's records read a run of whole lines at a time, for the commands that need every record of a big
file (export's reports): the one reader's verdicts, without its per-line cost on the lines it would keep as they
are.

Like row_load's fast path: a run is decoded once and each line is scanned from the run's text by json's C scanner;
a line that is exactly one JSON value, shallow enough, passing from_dict's checks with a seq that increases is the
Record the reader would make of it. Every other line (the header, a blank, a damaged or deep one, a run that is not
UTF-8, a long line) goes through the reader itself, so what is skipped and reported is exactly what
`stream_recording` skips and reports.

A line mcp-inspect wrote is its record's JSON form (`Record.to_dict`: its keys in that order, the same values), so
the value decoded from it is given too when it is: a report then uses it, and the line, instead of making the same
dict and the same JSON again for each of 100,000 records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from inspector.protocol.json import scan_at
from inspector.protocol.records import EVENT, MESSAGE, STDERR, Record, RecordError, from_dict
from inspector.recording.format import RECORD_DEPTH
from inspector.recording.reading import Line, RecordingReader, file_blocks
from inspector.recording.row_load import Run, split_runs


Item = tuple[bytes, Record, dict | None]
"""A line as read, its Record, and the line's value when that is exactly the record's JSON form (else None)."""


def stream_records(path: Path | str, reader: RecordingReader) -> Iterator[Item]:
    """(the line as read, its Record, its JSON form as read or None) for each record `reader` would keep, in file
    order; the reader notes the header and what is skipped. Raises RecordingError as the reader does."""
    form = JsonForm()
    for item in split_runs(file_blocks(path)):
        if isinstance(item, Run):
            yield from _run(item, reader, form)
        else:
            yield from _one(item, reader)


def _one(line: Line, reader: RecordingReader) -> Iterator[Item]:
    record = reader.feed(line)
    if isinstance(record, Record):
        yield line.data, record, None  # rare (a long, deep or damaged run's line): its form is made when needed


def _run(run: Run, reader: RecordingReader, form: JsonForm) -> Iterator[Item]:
    lines = run.data.split(b"\n")
    number, offset = run.number, run.offset
    if number == 1:  # the header (and a byte order mark) are the reader's alone
        yield from _one(Line(1, offset, lines[0], True), reader)
        number, offset, lines = 2, offset + len(lines[0]) + 1, lines[1:]
    try:
        text = b"\n".join(lines).decode("utf-8")  # the reader decodes each line as strict UTF-8 too
    except UnicodeDecodeError:
        text = None  # the reader says which line is not
    pos, last_seq, scan, exact = 0, reader.last_seq, scan_at, form.exact
    for line in lines:
        record = value = None
        if text is not None:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            if len(line) <= RECORD_DEPTH or line.count(b"{") + line.count(b"[") <= RECORD_DEPTH:  # nor nest deeper
                try:
                    value, stop = scan(text, pos)
                    record = from_dict(value) if stop == end else None
                except (StopIteration, ValueError, RecursionError, RecordError):
                    record = None
                if record is not None and record.seq <= last_seq:
                    record = None  # the reader says it does not increase
            pos = end + 1
        if record is not None:
            last_seq = record.seq
            yield line, record, value if exact(value, record) else None
        else:
            reader.last_seq = last_seq
            yield from _one(Line(number, offset, line, True), reader)
            last_seq = reader.last_seq
        number, offset = number + 1, offset + len(line) + 1
    reader.last_seq = last_seq


PLAIN_FORMS = {MESSAGE: ("seq", "t", "kind", "dir", "msg"), STDERR: ("seq", "t", "kind", "text"),
               EVENT: ("seq", "t", "kind", "event", "detail")}
"""The keys, in order, of the JSON form of a record of these kinds that has none of the optional fields (origin,
follows, http): what nearly every line of a recording holds."""


class JsonForm:
    """Tells whether a line's decoded value is exactly its record's JSON form, `to_dict`'s dict: the same keys in
    the same order with equal values (so the line, as JSON, says what `to_dict`'s JSON says)."""

    def __init__(self) -> None:
        self._t, self._t_kept = None, False
        """The last time looked at, and whether to_dict's rounding keeps it: a flood's records share their time."""

    def exact(self, value: dict, record: Record) -> bool:
        t = value["t"]
        if t.__class__ is not float:  # an int t is a float in the form
            return False
        keys = PLAIN_FORMS.get(record.kind)
        if keys is None or tuple(value) != keys:
            form = record.to_dict()  # an optional field, another kind, an unknown key: compared whole (rare)
            return tuple(form) == tuple(value) and form == value
        if t != self._t:
            self._t, self._t_kept = t, round(t, 6) == t
        # The kinds' own fields are the value's (from_dict checked dir, event and detail), but a text that is
        # not a string is None in the record.
        return self._t_kept and (record.kind != STDERR or record.text is value["text"])
