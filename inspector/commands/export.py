"""`mcp-inspect export FILE -o OUT`: a copy of a recording fit for a bug report, secrets masked.

Export only reads and writes files: it never runs the command a recording names. The output is created
exclusively with mode 0600, like every recording. `redact_recording` is the pure part, for the page's Export button.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from inspector.protocol import jsonrpc
from inspector.recording.files import REDACTED, RecordingError, RecordingWriter, read_recording
from inspector.protocol.records import Record
from inspector.protocol.redact import Finding, Rules, redact_argv, redact_value, secrets_under_keys
from inspector.commands.common import Parser, UsageError, fail

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
    parser.add_argument("-o", "--output", required=True, metavar="OUT.jsonl", help="the new file (must not exist)")
    parser.add_argument("--redact-key", action="append", default=[], metavar="KEY",
                        help="mask the value under this key anywhere (case-insensitive, repeatable)")
    parser.add_argument("--redact-regex", action="append", default=[], metavar="RE",
                        help="mask every match of this regular expression (repeatable)")
    parser.add_argument("--also-redact", action="append", default=[], metavar="VALUE",
                        help="mask this exact value, e.g. the inspector's launch token (repeatable)")
    parser.add_argument("--seq", metavar="LIST", help="export only these records, e.g. 3,5-9")
    return parser


def parse_selection(text: str) -> list[tuple[int, int]]:
    """'3,5-9' → [(3, 3), (5, 9)]; raises UsageError."""
    ranges = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise UsageError(f"--seq takes numbers and ranges like 3,5-9, got {part!r}")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            raise UsageError(f"--seq range {part.strip()} runs backwards")
        ranges.append((low, high))
    return ranges


@dataclass
class Redacted:
    """A recording with its secrets masked."""

    header: dict | None
    records: list[dict]
    findings: list[tuple[int | None, Finding]] = field(default_factory=list)
    """(record seq, or None for the header; what and where)."""


def redact_recording(header: dict | None, records: Iterable[Record], rules: Rules) -> Redacted:
    """Mask secrets in a header and its records (pure). Secrets found under secret keys are then searched for
    everywhere else too, raw or encoded."""
    records = list(records)
    learned = list(_header_secrets(header))
    for record in records:
        learned += secrets_under_keys(record.to_dict(), rules)
    rules = rules.with_literals(learned)
    out = Redacted(header=None, records=[])
    if header is not None:
        head = dict(header)
        if isinstance(head.get("env"), dict):  # recordings write [REDACTED] here; a hand-edited file may not
            head["env"] = _mask_all(head["env"], "$.env", out.findings)
        target = dict(head["target"]) if isinstance(head.get("target"), dict) else None
        if target is not None:
            for key in ("env", "headers"):
                if isinstance(target.get(key), dict):
                    target[key] = _mask_all(target[key], f"$.target.{key}", out.findings)
            _mask_argv(target, "command", "$.target.command", None, out.findings)
            head["target"] = target
        out.header, found = redact_value(head, rules)
        out.findings += [(None, f) for f in found]
    for record in records:
        value = record.to_dict()
        if record.kind == "event" and isinstance(value.get("detail"), dict):
            value["detail"] = dict(value["detail"])
            _mask_argv(value["detail"], "command", "$.detail.command", record.seq, out.findings)
        masked, found = redact_value(value, rules)
        out.records.append(masked)
        out.findings += [(record.seq, f) for f in found]
    return out


def _header_secrets(header: dict | None) -> Iterable[str]:
    if not isinstance(header, dict):
        return
    target = header.get("target") if isinstance(header.get("target"), dict) else {}
    for mapping in (header.get("env"), target.get("env"), target.get("headers")):
        if isinstance(mapping, dict):
            yield from (v for v in mapping.values() if isinstance(v, str) and len(v) >= 4 and v != REDACTED)


def _mask_all(mapping: dict, path: str, findings: list) -> dict:
    for key, value in mapping.items():
        if value != REDACTED:
            findings.append((None, Finding("env or header value", f"{path}.{key}")))
    return {key: REDACTED for key in mapping}


def _mask_argv(holder: dict, key: str, path: str, seq: int | None, findings: list) -> None:
    argv = holder.get(key)
    if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
        holder[key], masked = redact_argv(argv)
        findings += [(seq, Finding("command option value", f"{path}[{i}]")) for i in masked]


def _in(seq: int, ranges: list[tuple[int, int]] | None) -> bool:
    return ranges is None or any(low <= seq <= high for low, high in ranges)


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
    chosen = [r for r in loaded.records if _in(r.seq, ranges)]
    result = redact_recording(loaded.header, chosen, rules)
    try:
        writer = RecordingWriter.create(Path(args.output), unique=False)
    except RecordingError as exc:
        return fail(str(exc))
    try:
        lines = [jsonrpc.encode(result.header)] + [jsonrpc.encode(r) for r in result.records]
        writer.write_lines(b"".join(lines))
    finally:
        writer.close()
    for seq, finding in result.findings:
        where = "header" if seq is None else f"record {seq}"
        fail(f"masked {finding.kind}: {where} {finding.path}")
    fail(f"exported {len(result.records)} records to {args.output}; {len(result.findings)} values masked")
    return 0


if __name__ == "__main__":  # python -m inspector.commands.export
    sys.exit(export_main(sys.argv[1:]))
