"""`mcp-inspect export FILE -o OUT`: a copy of a recording fit for a bug report, secrets masked.

Export only reads and writes files: it never runs the command a recording names. The output is created
exclusively with mode 0600, like every recording. The masking itself is inspector.recording.export's, which the
page's Export button uses too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from inspector.protocol import jsonrpc
from inspector.protocol.redact import Rules
from inspector.recording.export import in_selection, parse_selection, redact_recording
from inspector.recording.files import RecordingError, RecordingWriter, read_recording
from inspector.commands.common import Parser, UsageError, fail
from inspector.recording.reports.html import render_html

# --format → a renderer of the redacted recording (header, records, what was masked, the reader's notes) to text;
# jsonl, the default, is the recording itself.
REPORTS = {
    "html": render_html,
}

EPILOG = """\
always masked: env values and auth headers (already "[REDACTED]" in recordings), values under keys such as
authorization, cookie, x-api-key, api_key, password, secret, access_token; the values of --token-style options in the
server command; bearer tokens, JWTs, sk-/ghp_/xoxb-/AKIA-style keys, and long random values after token=, key=,
secret=, password=, also when they appear base64- or URL-encoded. What was masked is listed on stderr (never the
secret itself). Look through the file before you share it: a scan cannot know every secret."""


def build_parser() -> Parser:
    """The parser for `export`."""
    parser = Parser(prog="mcp-inspect export", epilog=EPILOG,
                    usage="mcp-inspect export FILE.jsonl -o OUT.jsonl [OPTIONS]",
                    description="Write a copy of a recording with secrets masked, for a bug report.")
    parser.add_argument("file", metavar="FILE.jsonl", help="the recording to export")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.jsonl",
                        help="the new file (must not exist); with a report format, - writes it on stdout")
    parser.add_argument("--format", choices=("jsonl", *REPORTS), default="jsonl",
                        help="jsonl (default): a recording; html: one self-contained page that opens from disk")
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
        loaded = read_recording(args.file)
    except (UsageError, ValueError, RecordingError) as exc:
        return fail(str(exc))
    if loaded.header is None:
        return fail(f"{args.file}: not an mcp-inspect recording (no header line)")
    for problem in loaded.problems:
        fail(f"warning: {problem}")
    chosen = [r for r in loaded.records if in_selection(r.seq, ranges)]
    result = redact_recording(loaded.header, chosen, rules)
    if args.format != "jsonl":
        masked = [{"seq": seq, "kind": f.kind, "path": f.path} for seq, f in result.findings]
        text = REPORTS[args.format](result.header, result.records, masked, loaded.problems)
        try:
            _write_report(args.output, text)
        except OSError as exc:
            return fail(f"cannot write {args.output}: {exc.strerror or exc}")
        return _summary(args.output, result)
    try:
        writer = RecordingWriter.create(Path(args.output), unique=False)
    except RecordingError as exc:
        return fail(str(exc))
    try:
        lines = [jsonrpc.encode(result.header)] + [jsonrpc.encode(r) for r in result.records]
        writer.write_lines(b"".join(lines))
    finally:
        writer.close()
    return _summary(args.output, result)


def _summary(output: str, result) -> int:
    for seq, finding in result.findings:
        where = "header" if seq is None else f"record {seq}"
        fail(f"masked {finding.kind}: {where} {finding.path}")
    fail(f"exported {len(result.records)} records to {output}; {len(result.findings)} values masked")
    return 0


def _write_report(output: str, text: str) -> None:
    """A report holds the recording: created exclusively with mode 0600 like one, or written on stdout for -."""
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(output, flags, 0o600)
    except FileExistsError:
        raise OSError(f"{output} already exists") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":  # python -m inspector.commands.export
    sys.exit(export_main(sys.argv[1:]))
