"""A recording made fit to share: records picked by seq, secrets masked. Pure: both faces use it, `export` on a file
and the page's Export button on the live session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Container, Iterable, Sequence

from inspector.protocol.records import Record, RecordError, from_dict
from inspector.protocol.redact import Finding, Rules, Screen, redact_argv, redact_value, secrets_under_keys
from inspector.protocol.json import loads
from inspector.recording.files import RECORD_DEPTH, REDACTED


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
    typed: list[Record] | None = None
    """The masked records that still read as records, as Records (a clear one is the record as given), in order:
    what summary.as_records(records) gives, without decoding 100,000 dicts again. None: not made."""
    typed_lines: list[bytes | None] | None = None
    """Beside `typed`: each record's line as read when that line is its JSON form exactly and nothing in it was
    masked (a report copies it instead of encoding the record again), else None. None: no lines were given."""


SCREEN_BYTES = 1 << 20
"""How many bytes of lines the Screen looks at in one scan."""


def redact_recording(header: dict | None, records: Iterable[Record], rules: Rules,
                     lines: Sequence[bytes] | None = None, forms: Sequence[dict | None] | None = None) -> Redacted:
    """Mask secrets in a header and its records (pure). Secrets found under secret keys are then searched for
    everywhere else too, raw or encoded. `lines`, when given, are the records' lines as read: a line the Screen
    clears is not walked (nothing in it can be masked); they are screened about a megabyte at a time, not one by
    one. `forms`, beside them: each line's value when it is exactly its record's JSON form (record_runs gives
    them), else None; a clear record's dict is then that value, and its line stands for it in `typed_lines`."""
    records = list(records)
    masking = Masking(rules)
    masking.learn_header(header)
    suspects = _suspects(masking.screen, lines) if lines is not None else None
    for i, record in enumerate(records):
        if suspects is None or i in suspects:
            masking.learn(record.to_dict())
    if masking.learned_all() and lines is not None:
        suspects = _suspects(masking.screen, lines)  # a learned secret makes more lines suspect
    out = Redacted(header=None, records=[], typed=[], typed_lines=None if lines is None else [])
    if header is not None:
        out.header, found = masking.header(header)
        out.findings += found
    add_line = out.typed_lines.append if out.typed_lines is not None else None
    for i, record in enumerate(records):
        masked = None
        if suspects is None or i in suspects:
            masked, found = masking.record(record, None if lines is None else lines[i])
            out.findings += found
            if not found and forms is not None and masked == forms[i]:
                masked = None  # walked (an event, a non-ASCII text), and nothing in it masked: its line stands
        if masked is None:
            form = forms[i] if forms is not None else None
            out.records.append(record.to_dict() if form is None else form)
            out.typed.append(record)
            if add_line is not None:
                add_line(None if form is None else lines[i])
            continue
        out.records.append(masked)
        try:
            out.typed.append(from_dict(masked))
        except RecordError:
            continue  # masking left a record that no longer reads as one: the reports leave it out
        if add_line is not None:
            add_line(None)
    return out


def _suspects(screen: Screen, lines: Sequence[bytes]) -> set[int]:
    """The indices of the lines the Screen cannot clear, found a chunk of lines at a time."""
    found: set[int] = set()
    start, size = 0, 0
    for end, line in enumerate(lines, 1):
        size += len(line) + 1
        if size >= SCREEN_BYTES or end == len(lines):
            found.update(start + i for i in screen.suspect_lines(b"\n".join(lines[start:end])))
            start, size = end, 0
    return found


class Masking:
    """Export masking in two passes, so a file can be streamed rather than held: learn from the header and every
    record (values under secret keys become literals searched for everywhere), then `learned_all`, then mask the
    `header` and each `record`. A line the Screen clears is neither walked nor decoded for learning."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.screen = Screen(rules)
        self._learned: list[str] = []
        self._suspects: set[int] | None = set()
        """The numbers of the lines learn_line found suspect (None: not known, look again)."""
        self._screened = 0
        """The last line learn_line saw: a recording still being written may have more by the second pass."""
        self.head: dict | None = None
        """The header as read (set by the streaming export's first pass)."""

    def learn_header(self, header: dict | None) -> None:
        """The header's env and HTTP header values are secrets wherever else they appear."""
        self._learned += _header_secrets(header)

    def learn(self, value: Any, line: bytes | None = None) -> None:
        """Note the secrets under secret keys in a record's value (none can be in a line the Screen clears)."""
        if line is None or self.screen.suspect(line):
            self._learned += secrets_under_keys(value, self.rules)

    def learn_line(self, number: int, line: bytes) -> None:
        """`learn` from whole line `number` as read (lines in order), decoding it only when the Screen cannot clear it
        (one that does not decode teaches nothing: the reader skips it). The verdict is kept for `record`."""
        self._screened = number
        if self.screen.suspect(line):
            self._suspects.add(number)
            try:
                self._learned += secrets_under_keys(loads(line.decode("utf-8"), RECORD_DEPTH), self.rules)
            except ValueError:
                pass

    def learn_run(self, number: int, lines: bytes) -> None:
        """`learn_line` for whole lines joined by newlines, the first numbered `number`, screened in one scan."""
        suspects = self.screen.suspect_lines(lines)
        if suspects:
            split = lines.split(b"\n")
            for index in suspects:
                self.learn_line(number + index, split[index])
        self._screened = number + lines.count(b"\n")

    def suspects_in(self, number: int, lines: bytes) -> Container[int]:
        """The numbers of the lines that `record` would not find clear among whole lines joined by newlines, the
        first numbered `number`: the first pass's verdicts where it saw them, else one scan of the lines."""
        if self._suspects is not None and number + lines.count(b"\n") <= self._screened:
            return self._suspects
        found = {number + index for index in self.screen.suspect_lines(lines)}
        if self._suspects is None:
            return found
        return {n for n in found if n > self._screened} | {n for n in self._suspects if n >= number}

    def learned_all(self) -> bool:
        """Everything was learned from: mask with what it taught (a new secret needs a new look at every line).
        Whether it taught anything (the Screen changed)."""
        if self._learned:
            self.rules = self.rules.with_literals(self._learned)
            self.screen = Screen(self.rules)
            self._suspects = None
        return bool(self._learned)

    def record(self, record: Record, line: bytes | None, number: int | None = None
               ) -> tuple[dict | None, list[tuple[int, Finding]]]:
        """The record masked and what was masked, or (None, []) when its line is clear: copy the line as it is.
        `number`: the line's number, whose verdict `learn_line` may have kept."""
        if number is not None and self._suspects is not None and number <= self._screened:
            clear = number not in self._suspects  # a line that came after the first pass is looked at below
        else:
            clear = line is not None and not self.screen.suspect(line)
        if clear:
            return None, []
        value = record.to_dict()
        findings: list = []
        if record.kind == "event" and isinstance(value.get("detail"), dict):
            value["detail"] = dict(value["detail"])
            _mask_argv(value["detail"], "command", "$.detail.command", record.seq, findings)
        masked, found = redact_value(value, self.rules)
        return masked, findings + [(record.seq, f) for f in found]

    def header(self, header: dict) -> tuple[dict, list[tuple[None, Finding]]]:
        """The header masked: env and header values always, the server command's secret options, then the rules."""
        findings: list = []
        head = dict(header)
        if isinstance(head.get("env"), dict):  # recordings write [REDACTED] here; a hand-edited file may not
            head["env"] = _mask_all(head["env"], "$.env", findings)
        target = dict(head["target"]) if isinstance(head.get("target"), dict) else None
        if target is not None:
            for key in ("env", "headers"):
                if isinstance(target.get(key), dict):
                    target[key] = _mask_all(target[key], f"$.target.{key}", findings)
            _mask_argv(target, "command", "$.target.command", None, findings)
            head["target"] = target
        masked, found = redact_value(head, self.rules)
        return masked, findings + [(None, f) for f in found]


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
