"""Recording files: the writer (append-only, one os.write per line), the headless sink; the reader lives in
reading.py and the format's constants in format.py (both re-exported here).

See docs/recording-format.md for the format users share.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterator

from inspector import __version__
from inspector.protocol import jsonrpc
from inspector.protocol.json import REDACTED
from inspector.protocol.records import EVENT, Record, time_text
from inspector.protocol.secrets import Masker

from inspector.recording import format as limits  # the caps are read at call time: tests lower them
from inspector.recording.format import (  # noqa: F401  (the format's names, re-exported for importers)
    BLOCK_BYTES, FORMAT, MAX_LINE_BYTES, RECORD_DEPTH, UTF8_BOM, VERSION, RecordingError,
)

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any
    import datetime as _dt
    from pathlib import Path

    from inspector.recording.reading import Line

# The reading side (recording/reading.py), re-exported for importers and loaded on their first use: `call` and
# `check` write a recording but never read one, and start faster without it.
_READING = frozenset({"Line", "Loaded", "RecordingReader", "check_header", "file_lines", "read_recording",
                      "split_lines", "stream_recording"})


def __getattr__(name: str) -> Any:
    if name in _READING:
        from inspector.recording import reading

        return getattr(reading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def header(target: dict, *, protocol: str = "auto", env_keys: list[str] | tuple[str, ...] = ()) -> dict:
    """The first line of a recording: what was asked for (env values never written)."""
    return {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "created": _utc_now_text(),
        "inspector": __version__,
        "target": target,
        "protocol": protocol,
        "env": {key: REDACTED for key in env_keys},
    }


def _utc_now_text() -> str:
    """Now in UTC as 2026-11-30T21:56:39.465Z (ISO 8601, milliseconds), without importing datetime."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def safe_name(name: str) -> str:
    """Reduce a server name to [A-Za-z0-9._-] for a file name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return cleaned or "server"


def default_path(folder: Path, name: str, now: _dt.datetime | None = None) -> Path:
    """recordings/%Y-%m-%dT%H-%M-%S-<name>.jsonl (UTC)."""
    import datetime as _dt  # the page's recording only: `call` names no file

    now = now or _dt.datetime.now(_dt.timezone.utc)
    return folder / f"{now.strftime('%Y-%m-%dT%H-%M-%S')}-{safe_name(name)}.jsonl"


def ensure_folder(folder: Path) -> None:
    """Create the recordings folder with a .gitignore so users do not commit recordings by accident."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        try:
            ignore.write_text("*\n", encoding="utf-8")
        except OSError:
            pass  # a read-only ignore file is the user's business; recording still works


def _open_exclusive(path: Path) -> int:
    # Read-write: rows are expanded by reading their line back from the same descriptor.
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags, 0o600)


class RecordingWriter:
    """Appends whole lines to a recording; every record reaches the file before anyone sees it."""

    def __init__(self, fd: int, path: Path | None) -> None:
        self._fd = fd
        self.path = path
        """The file's path, or None for an unlinked spool file (--no-record)."""
        self.offset = 0
        """Bytes written so far: where the next line starts (we are the only writer)."""
        self.closed = False
        self.readonly = False

    @classmethod
    def create(cls, path: Path, *, unique: bool = True) -> "RecordingWriter":
        """Create a new file exclusively; with unique, add -2, -3, ... on a name clash."""
        from pathlib import Path  # only for a named file: a `call` without --record spools to an unnamed one

        path = Path(path)
        candidate, n = path, 1
        while True:
            try:
                return cls(_open_exclusive(candidate), candidate)
            except FileExistsError:
                if not unique:
                    if candidate.is_dir():  # O_EXCL says "exists" for a folder too
                        raise RecordingError(f"{candidate} is a folder, not a file: give a file name, such as "
                                             f"{candidate / 'session.jsonl'}") from None
                    raise RecordingError(f"recording file {candidate} already exists") from None
                n += 1
                candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
            except OSError as exc:
                raise RecordingError(f"cannot create recording {candidate}: {exc.strerror}") from None

    @classmethod
    def spool(cls) -> "RecordingWriter":
        """An unlinked temporary file: --no-record still keeps the session for paging and search."""
        try:  # Linux: a file that never has a name (no window in which another process could open it)
            fd = os.open(os.environ.get("TMPDIR") or "/tmp", os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)
        except (AttributeError, OSError):
            import tempfile  # here, not at the top: `call` starts faster without it

            fd, name = tempfile.mkstemp(prefix="mcp-inspect-", suffix=".jsonl")
            os.unlink(name)
        return cls(fd, None)

    @classmethod
    def open_existing(cls, path: Path | str) -> "RecordingWriter":
        """An existing recording, read-only (for `view`): nothing is ever written to it."""
        from pathlib import Path

        path = Path(path)
        try:
            # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever, before the
            # regular-file check below could refuse it.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise RecordingError(f"cannot open {path}: {exc.strerror}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise RecordingError(f"not a regular file: {path}")
        os.set_blocking(fd, True)
        recording = cls(fd, path)
        recording.offset = os.fstat(fd).st_size
        recording.readonly = True
        return recording

    def write_lines(self, data: bytes) -> int:
        """Write whole lines in one os.write (looping only on a short write); return their start offset."""
        if self.readonly:
            raise RecordingError("this recording is open read-only")
        start = self.offset
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self.offset += len(data)
        return start

    def write_header(self, head: dict) -> None:
        """Write the header line."""
        self.write_lines(jsonrpc.encode(head))

    def read_at(self, offset: int, length: int) -> bytes:
        """Read back a line written earlier (for expanding a row)."""
        return os.pread(self._fd, length, offset)

    def read_lines(self) -> Iterator["Line"]:
        """Every line written so far, capped like every reader (see split_lines); the tail may be cut off."""
        from inspector.recording.reading import split_lines

        return split_lines(self.blocks())

    def blocks(self) -> Iterator[bytes]:
        """What is written so far, read back block by block (the file's end as of the call)."""
        end, pos = self.offset, 0
        while pos < end:
            block = os.pread(self._fd, min(limits.BLOCK_BYTES, end - pos), pos)
            if not block:
                return
            pos += len(block)
            yield block

    def read_all_lines(self) -> Iterator[tuple[int, bytes]]:
        """(offset, line) for every whole line written so far, for searches over the whole session.

        A line longer than MAX_LINE_BYTES is left out (and never held in memory whole)."""
        for line in self.read_lines():
            if line.data is not None and line.ended:
                yield line.offset, line.data

    def close(self) -> None:
        """Flush to disk and close."""
        if not self.closed:
            self.closed = True
            if not self.readonly and self.path is not None:  # a spool file has no name: nothing of it outlives us
                try:
                    os.fsync(self._fd)
                except OSError:
                    pass
            os.close(self._fd)


class Sink:
    """Numbers records and appends them to a recording: the part of the page's Store a headless command needs.

    Anything with the same `add` and `add_batch` (a Store, to show a replay in the page) can take its place.
    """

    def __init__(self, writer: RecordingWriter, masker: Masker | None = None) -> None:
        self.writer = writer
        self.masker = masker or Masker()
        """The run's known secrets, masked in every record before it is written (and so in what a command prints)."""
        self._seq = 0
        self._lock = threading.Lock()

    def add(self, record: Record) -> Record:
        """Give the record its seq and time, and write it."""
        Sink.add_batch(self, [record])  # not self.add_batch: check's CheckingSink makes that an add per record
        return record

    def add_batch(self, records: list[Record]) -> list[Record]:
        """Give the records their seqs and time, and write them with one os.write."""
        with self._lock:
            lines = numbered_lines(records, self._seq, self.masker)
            self._seq += len(lines)
            if lines:
                self.writer.write_lines(b"".join(lines))
        return records


def numbered_lines(records: list[Record], seq: int, masker: Masker) -> list[bytes]:
    """Number the records on from `seq`, give those without a time the time now, mask them: their lines."""
    now = time.time()
    for record in records:
        seq += 1
        record.seq = seq
        record.t = record.t or now
    return masker.lines(records, now, time_text(now))  # one text for the batch's time, not one per record


def open_sink(record: str | None, command: list[str], cwd: str | None, *, protocol: str = "auto",
              env_keys: list[str] | tuple[str, ...] = (), http: Any = None, masker: Masker | None = None) -> Sink:
    """A Sink on a new --record file (created exclusively, 0600), or on an unlinked spool file without one.

    `http` is the HttpTarget when the server is a URL; `masker` holds the run's secrets (masked in the header and
    in every record). Raises RecordingError when the file cannot be created.
    """
    masker = masker or Masker()
    writer = RecordingWriter.create(record, unique=False) if record else RecordingWriter.spool()
    if http is not None:
        target = http.recorded()
    else:
        target = {"transport": "stdio", "command": list(command), "cwd": cwd or os.getcwd()}
    writer.write_header(masker.header(header(target, protocol=protocol, env_keys=list(env_keys))))
    return Sink(writer, masker)


def close_sink(sink: Sink) -> None:
    """End the recording cleanly: a session-end line, then close the file."""
    sink.add(Record(EVENT, event="session-end", detail={}))
    sink.writer.close()
