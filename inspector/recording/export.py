"""A recording made fit to share: records picked by seq, secrets masked. Pure: both faces use it, `export` on a file
and the page's Export button on the live session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from inspector.protocol.records import Record
from inspector.protocol.redact import Finding, Rules, redact_argv, redact_value, secrets_under_keys
from inspector.recording.files import REDACTED


def parse_selection(text: str) -> list[tuple[int, int]]:
    """'3,5-9' → [(3, 3), (5, 9)]; raises ValueError, whose message names the --seq option."""
    ranges = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise ValueError(f"--seq takes numbers and ranges like 3,5-9, got {part!r}")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            raise ValueError(f"--seq range {part.strip()} runs backwards")
        ranges.append((low, high))
    return ranges


def in_selection(seq: int, ranges: list[tuple[int, int]] | None) -> bool:
    """Whether record `seq` is picked by parse_selection's ranges (None picks every record)."""
    return ranges is None or any(low <= seq <= high for low, high in ranges)


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
