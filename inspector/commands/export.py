"""`mcp-inspect export FILE -o OUT`: a copy of a recording fit for a bug report, secrets masked: the recording
itself (jsonl) or a report made from it (html: one self-contained page; md: GitHub Markdown for an issue).

Export only reads and writes files: it never runs the command a recording names. The output is created
exclusively with mode 0600, like every recording. The masking itself is inspector.recording.export's, which the
page's Export button uses too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from inspector.protocol import jsonrpc
from inspector.protocol.redact import Rules
from inspector.recording.export import in_selection, parse_selection, redact_recording
from inspector.recording.files import RecordingError, RecordingWriter, read_recording
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
        loaded = read_recording(args.file)
    except (UsageError, ValueError, RecordingError) as exc:
        return fail(str(exc))
    if loaded.header is None:
        return fail(f"{args.file}: not an mcp-inspect recording (no header line)")
    for problem in loaded.problems:
        fail(f"warning: {problem}")
    picked = lambda seq: in_selection(seq, ranges)  # noqa: E731
    if args.format == "jsonl":
        result = redact_recording(loaded.header, [r for r in loaded.records if picked(r.seq)], rules)
        data = b"".join([jsonrpc.encode(result.header)] + [jsonrpc.encode(r) for r in result.records])
        what = f"{len(result.records)} records"
    else:
        result = redact_recording(loaded.header, loaded.records, rules)
        data = REPORTS[args.format].render(result, loaded.problems, picked).encode()
        what = f"a {args.format} report of {sum(1 for r in result.records if picked(r['seq']))} records"
    findings = [(seq, f) for seq, f in result.findings if seq is None or picked(seq)]
    try:
        _write(args.output, data)
    except RecordingError as exc:
        return fail(str(exc))
    for seq, finding in findings:
        where = "header" if seq is None else f"record {seq}"
        fail(f"masked {finding.kind}: {where} {finding.path}")
    fail(f"exported {what} to {'stdout' if args.output == '-' else args.output}; {len(findings)} values masked")
    return 0


def _write(output: str, data: bytes) -> None:
    """Write to stdout (-) or a new file, created exclusively with mode 0600 like every recording."""
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    writer = RecordingWriter.create(Path(output), unique=False)
    try:
        writer.write_lines(data)
    finally:
        writer.close()


if __name__ == "__main__":  # python -m inspector.commands.export
    sys.exit(export_main(sys.argv[1:]))
