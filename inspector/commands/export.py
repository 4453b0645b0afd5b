"""`mcp-inspect export FILE -o OUT`: a copy of a recording fit for a bug report, secrets masked: the recording
itself (jsonl) or a report made from it (html: one self-contained page; md: GitHub Markdown for an issue).

Export only reads and writes files: it never runs the command a recording names. The output is created
exclusively with mode 0600, like every recording. The masking itself is inspector.recording.export's, which the
page's Export button uses too.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Iterator

from inspector.protocol import jsonrpc
from inspector.protocol.redact import Rules
from inspector.protocol.json import scan_at
from inspector.protocol.records import Record, RecordError, record_fields
from inspector.recording.export import Masking, Redacted, in_selection, parse_selection, redact_recording
from inspector.recording.files import (
    BLOCK_BYTES, RECORD_DEPTH, RecordingError, RecordingReader, RecordingWriter, Line,
)
from inspector.recording.reading import file_blocks
from inspector.recording.record_runs import stream_records
from inspector.recording.row_load import Run, split_runs
from inspector.recording.reports.formats import REPORTS
from inspector.commands.common import Parser, UsageError, fail

EPILOG = """\
always masked: env values and auth headers (already "[REDACTED]" in recordings), values under keys such as
authorization, cookie, x-api-key, api_key, password, secret, access_token; the values of --token-style options in the
server command; bearer tokens, JWTs, sk-/ghp_/xoxb-/AKIA-style keys, and long random values after token=, key=,
secret=, password=, also when they appear base64- or URL-encoded. What was masked is listed on stderr (never the
secret itself). Look through the file before you share it: a scan cannot know every secret.

--format md writes GitHub Markdown to paste into an issue (at most 65,000 characters: long values are trimmed in
the middle and calls that do not fit are counted; --seq picks them). Reports mask the whole recording, so a secret
learned anywhere in it is masked in every part shown. --format html writes one page that opens from disk in any
browser, with no network: the timeline with filters and search, the problems, the tool calls and restarts."""


def build_parser() -> Parser:
    """The parser for `export`."""
    parser = Parser(prog="mcp-inspect export", epilog=EPILOG,
                    usage="mcp-inspect export FILE.jsonl -o OUT [--format {jsonl,html,md}] [OPTIONS]",
                    description="Write a copy of a recording with secrets masked, for a bug report.")
    parser.add_argument("file", metavar="FILE.jsonl", help="the recording to export")
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="the new file (must not exist); - writes to stdout")
    parser.add_argument("--format", choices=["jsonl", *REPORTS], default="jsonl",
                        help="jsonl (default): the recording itself; html: one self-contained page that opens from disk; "
                             "md: a Markdown report for an issue")
    parser.add_argument("--redact-key", action="append", default=[], metavar="KEY",
                        help="mask the value under this key anywhere (case-insensitive, repeatable)")
    parser.add_argument("--redact-regex", action="append", default=[], metavar="RE",
                        help="mask every match of this regular expression (repeatable)")
    parser.add_argument("--also-redact", action="append", default=[], metavar="VALUE",
                        help="mask this exact value, e.g. the inspector's launch token (repeatable)")
    parser.add_argument("--seq", metavar="LIST", help="export only these records, e.g. 3,5-9")
    return parser


def export_main(argv: list[str]) -> int:
    """Entry point of `mcp-inspect export`."""
    try:
        args = build_parser().parse_args(argv)
        ranges = parse_selection(args.seq) if args.seq else None
        rules = Rules.build(args.redact_key, args.redact_regex, args.also_redact)
        masking = _learn(args.file, Masking(rules)) if args.format == "jsonl" else None
    except (UsageError, ValueError, RecordingError) as exc:
        return fail(str(exc))
    picked = lambda seq: in_selection(seq, ranges)  # noqa: E731
    reader = RecordingReader()
    try:
        if args.format == "jsonl":  # streamed: each line copied as read, or masked, as it is read
            if masking is None:
                return _no_header(args.file)
            head, findings = masking.header(masking.head)
            lines = _exported(args.file, reader, masking, picked if ranges else None, findings)
            what = f"{_write(args.output, chain([jsonrpc.encode(head)], lines)) - 1} records"
            problems = reader.finish()
        else:  # a report is made from the whole recording
            with _collector_paused():
                result = _report(args.file, reader, rules, args.format, picked, args.output)
            if result is None:
                return _no_header(args.file)
            problems, findings = reader.problems, result.findings
            shown = len(result.records) if ranges is None else sum(1 for r in result.records if picked(r["seq"]))
            what = f"a {args.format} report of {shown} records"
    except RecordingError as exc:
        return fail(str(exc))
    for problem in problems:
        fail(f"warning: {problem}")
    findings = [(seq, f) for seq, f in findings if seq is None or picked(seq)]
    for seq, finding in findings:
        where = "header" if seq is None else f"record {seq}"
        fail(f"masked {finding.kind}: {where} {finding.path}")
    fail(f"exported {what} to {'stdout' if args.output == '-' else args.output}; {len(findings)} values masked")
    return 0


def _report(path: str, reader: RecordingReader, rules: Rules, kind: str, picked: Callable[[int], bool],
            output: str) -> Redacted | None:
    """Read the whole recording, mask it and write the report of the picked records; what was masked, or None
    when the file has no header (nothing written). `reader.problems` says what it skipped. Raises RecordingError."""
    records, lines, forms = [], [], []
    for line, record, form in stream_records(path, reader):
        records.append(record)
        lines.append(line)
        forms.append(form)
    problems = reader.finish()
    if reader.header is None:
        return None
    result = redact_recording(reader.header, records, rules, lines, forms)
    # Rendered once the output file is made: an output that exists already is refused before the report's work.
    _write(output, (REPORTS[kind].render(result, problems, picked).encode() for _ in (kind,)))
    return result


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a report is made: reading 100,000 records makes several hundred thousand
    objects, none of them in a cycle, and each of the collector's full passes walked all of those made so far
    (a quarter of a report's time). The command ends soon after; what it leaves is freed then."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _no_header(path: str) -> int:
    return fail(f"{path}: not an mcp-inspect recording (no header line)")


def _learn(path: str, masking: Masking) -> Masking | None:
    """The first pass: what the header and every line teach `masking` (only lines the Screen suspects are decoded;
    it screens runs of whole lines at a time). Returns it ready to mask, its `head` set, or None when the file has
    no header. Raises RecordingError."""
    reader = RecordingReader()
    for item in split_runs(file_blocks(path)):
        if isinstance(item, Run) and item.number == 1:  # the header is the reader's alone
            first, newline, rest = item.data.partition(b"\n")
            item = [Line(1, item.offset, first, True)] + ([Run(2, item.offset + len(first) + 1, rest)] if newline else [])
        for piece in item if isinstance(item, list) else [item]:
            if isinstance(piece, Run):
                masking.learn_run(piece.number, piece.data)
            elif piece.number == 1:
                masking.head = reader.feed(piece)  # raises RecordingError for another format or a newer version
                if reader.header is None:
                    return None
                masking.learn_header(reader.header)
            elif piece.data is not None and piece.ended:  # a cut-off last line may be whole by the second pass
                masking.learn_line(piece.number, piece.data)
    masking.learned_all()
    return masking


def _exported(path: str, reader: RecordingReader, masking: Masking, picked: Callable[[int], bool] | None,
              findings: list) -> Iterator[bytes]:
    """The second pass: each picked record's line, copied as read when the Screen clears it, else masked and
    encoded anew; runs of clear lines are copied as one slice of the file's bytes."""
    for item in split_runs(file_blocks(path)):
        if isinstance(item, Line):
            yield from _masked_line(item, reader, masking, picked, findings)
        else:
            yield from _run(item, reader, masking, picked, findings)


def _run(run: Run, reader: RecordingReader, masking: Masking, picked: Callable[[int], bool] | None,
         findings: list) -> Iterator[bytes]:
    """A run of whole lines. A clear line that is exactly one JSON value passing from_dict's checks, with a seq
    that increases, is what the reader would keep as it is: it is checked from the decoded run (no Record made)
    and copied. Every other line (the header, a suspect one, one the reader may skip) goes through the reader."""
    data, number = run.data, run.number
    suspects = masking.suspects_in(number, data)
    try:
        text = data.decode("utf-8")  # the reader decodes each line as strict UTF-8 too
    except UnicodeDecodeError:
        text = None  # the reader says which line is not
    copied = pos = tpos = 0  # the run's bytes from `copied` on are not yet given; pos, tpos: this line's start
    find, scan, last_seq = (text.find if text is not None else None), scan_at, reader.last_seq
    for line in data.split(b"\n"):
        end = pos + len(line)
        seq = None
        if find is not None:
            tend = find("\n", tpos)
            if number not in suspects and number != 1 and line.count(b"{") + line.count(b"[") <= RECORD_DEPTH:
                try:  # one call per line, in one loop: a 100,000-line export makes every call count
                    value, stop = scan(text, tpos)
                    if stop == tend or (tend < 0 and stop == len(text)):
                        seq = record_fields(value)[1]
                        seq = seq if seq > last_seq else None
                except (StopIteration, ValueError, RecursionError, RecordError):
                    seq = None
            tpos = tend + 1
        if seq is not None:
            last_seq = seq
            if picked is None or picked(seq):
                pos, number = end + 1, number + 1
                continue
        if pos > copied:
            yield data[copied:pos]
        copied = end + 1
        if seq is None:
            reader.last_seq = last_seq
            yield from _masked_line(Line(number, run.offset + pos, line, True), reader, masking, picked, findings)
            last_seq = reader.last_seq
        pos, number = end + 1, number + 1
    reader.last_seq = last_seq
    if copied <= len(data):
        yield data[copied:] + b"\n"


def _masked_line(line: Line, reader: RecordingReader, masking: Masking, picked: Callable[[int], bool] | None,
                 findings: list) -> Iterator[bytes]:
    """One line through the reader: its record's line copied when the Screen clears it, else masked anew."""
    record = reader.feed(line)
    if isinstance(record, Record) and (picked is None or picked(record.seq)):
        masked, found = masking.record(record, line.data, line.number)
        findings += found
        yield line.data + b"\n" if masked is None else jsonrpc.encode(masked)



def _write(output: str, lines: Iterable[bytes]) -> int:
    """Write to stdout (-) or a new file, created exclusively with mode 0600 like every recording, about a megabyte
    per write; return how many lines were written (each item is whole lines)."""
    count, block, size = 0, [], 0
    writer = None if output == "-" else RecordingWriter.create(Path(output), unique=False)
    write = sys.stdout.buffer.write if writer is None else writer.write_lines
    try:
        for line in lines:
            count += line.count(b"\n")
            block.append(line)
            size += len(line)
            if size >= BLOCK_BYTES:
                write(b"".join(block))
                block, size = [], 0
        write(b"".join(block))
    finally:
        if writer is None:
            sys.stdout.flush()
        else:
            writer.close()
    return count


if __name__ == "__main__":  # python -m inspector.commands.export
    sys.exit(export_main(sys.argv[1:]))
