"""Pure: mask secrets in JSON values before a recording is shared.

Three kinds of rule: values under named keys (case-insensitive, anywhere), user regexes, and literal secrets (the
launch token, values learned under secret keys). Then a built-in scan for secret-looking strings: bearer tokens,
common API key shapes, JWTs, and long high-entropy values after token=/key=/secret=/password=. Every rule also
looks inside base64 and URL-encoded text, because a secret pasted into a data URI or a query string is just as
leaked. Masked text becomes "[REDACTED]"; each finding says what and where, never the secret itself.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator
from urllib.parse import unquote_plus

from inspector.protocol.json import REDACTED, jsonpath_child
from inspector.protocol.secrets import base64_cores, literal_variants, mask_argv  # noqa: F401 - re-exported
from inspector.protocol.secrets import FIND_WORDS, trie_pattern


# Keys whose values are secrets whatever they look like (HTTP auth headers, common credential fields).
DEFAULT_KEYS = frozenset({
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "api_key", "apikey",
    "password", "passwd", "secret", "client_secret", "access_token", "refresh_token", "id_token",
})

# (kind, pattern, group to mask, substrings one of which must occur): shapes of real credentials; group 0 masks the
# whole match. The substrings are a cheap pre-check, so a 10 MB text costs a few `in` tests rather than six scans.
BUILTIN_PATTERNS: tuple[tuple[str, re.Pattern, int, tuple[str, ...]], ...] = (
    ("bearer-token", re.compile(r"\b[Bb]earer\s+([A-Za-z0-9\-._~+/]{8,}=*)"), 1, ("earer",)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, ("eyJ",)),
    ("openai-style-key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), 0, ("sk-",)),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("slack-token", re.compile(r"\bxox[bpoars]-[A-Za-z0-9-]{10,}"), 0, ("xox",)),
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0, ("AKIA", "ASIA")),
)
# key=value or "key": "value" inside text; the value is masked when it looks random (or always, for passwords).
ASSIGNMENT_HINT = re.compile(r"(?i)token|key|secret|passw|pwd")
ASSIGNMENT = re.compile(
    r"(?i)\b([\w.-]*?(token|key|secret|password|passwd|pwd)[\w.-]*)[\"']?\s*[=:]\s*[\"']?([^\s\"'&,;<>]{6,})")
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
URL_RUN = re.compile(r"[A-Za-z0-9._~+=:%-]+")  # a plain class: linear, even on a 10 MB text
URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
MAX_DEPTH = 2  # base64 inside URL-encoding inside base64 is as far as anyone goes by accident


@dataclass(frozen=True)
class Rules:
    """What to mask."""

    keys: frozenset[str] = DEFAULT_KEYS
    """Lower-case key names whose values are replaced whole."""
    patterns: tuple[re.Pattern, ...] = ()
    """User regexes (--redact-regex): every match is replaced."""
    literals: tuple[str, ...] = ()
    """Exact secrets (--also-redact, or learned under secret keys), also found base64- and URL-encoded."""
    builtin: bool = True
    """Run the built-in scan for secret-looking strings."""
    _variants: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    _finder: tuple = field(default=(), compare=False, repr=False)

    @classmethod
    def build(cls, keys: Iterable[str] = (), regexes: Iterable[str] = (), literals: Iterable[str] = (),
              builtin: bool = True) -> "Rules":
        """Rules from command-line values; raises ValueError for a regex that does not compile."""
        patterns = []
        for text in regexes:
            try:
                patterns.append(re.compile(text))
            except re.error as exc:
                raise ValueError(f"--redact-regex {text!r}: {exc}") from None
        return cls(keys=DEFAULT_KEYS | {k.lower() for k in keys}, patterns=tuple(patterns),
                   literals=tuple(sorted({s for s in literals if s and s != REDACTED}, key=len, reverse=True)),
                   builtin=builtin)

    def with_literals(self, more: Iterable[str]) -> "Rules":
        """The same rules with more literal secrets."""
        return Rules.build(self.keys, [p.pattern for p in self.patterns], [*self.literals, *more], self.builtin)

    def variants(self) -> tuple[tuple[str, str], ...]:
        """(kind, text) for every literal as it may appear: raw, URL-encoded, and inside base64."""
        if not self._variants and self.literals:
            out: list[tuple[str, str]] = []
            for literal in self.literals:
                out += [("literal" if form == "raw" else f"literal ({form})", text)
                        for form, text in literal_variants(literal)]
            object.__setattr__(self, "_variants", tuple(out))
        return self._variants

    def variant_finder(self) -> tuple[re.Pattern, dict[str, str]]:
        """One pattern that finds, at every position of a text, the longest variant starting there (group 1), and
        each variant's kind: for many literals (each value under a --redact-key is one), where a search per variant
        per string would be literals x strings."""
        if not self._finder:
            kinds: dict[str, str] = {}
            for kind, text in self.variants():
                kinds.setdefault(text, kind)  # as find_spans' loop: of equal texts, the first variant names it
            # A lookahead matches empty, so finditer tries every position: overlapping occurrences are all found.
            pattern = re.compile("(?=(" + trie_pattern(list(kinds)).pattern + "))")
            object.__setattr__(self, "_finder", (pattern, kinds))
        return self._finder


@dataclass(frozen=True)
class Finding:
    """One masked secret: what kind of rule caught it, and where (a JSONPath)."""

    kind: str
    path: str


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


def _looks_secret(name: str, value: str) -> bool:
    if REDACTED in value:
        return False
    if name.lower() in ("password", "passwd", "pwd"):
        return len(value) >= 4
    return len(value) >= 16 and entropy(value) >= 3.0 and any(c.isdigit() for c in value)


def find_spans(text: str, rules: Rules, depth: int = 0) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in text, decoded layers included."""
    spans: list[tuple[int, int, str]] = []
    variants = rules.variants()
    if len(variants) > FIND_WORDS:
        # The longest variant at each position: every shorter one starting there lies within it, so the spans
        # cover what a find per variant covers, and name it alike (masking merges overlapping spans).
        finder, kinds = rules.variant_finder()
        for m in finder.finditer(text):
            found = m.group(1)
            spans.append((m.start(), m.start() + len(found), kinds[found]))
    else:
        for kind, needle in variants:
            start = text.find(needle)
            while start >= 0:
                spans.append((start, start + len(needle), kind))
                start = text.find(needle, start + 1)
    for pattern in rules.patterns:
        spans += [(m.start(), m.end(), "regex") for m in pattern.finditer(text) if m.end() > m.start()]
    if rules.builtin:
        for kind, pattern, group, hints in BUILTIN_PATTERNS:
            if any(hint in text for hint in hints):
                spans += [(m.start(group), m.end(group), kind) for m in pattern.finditer(text)]
        for m in ASSIGNMENT.finditer(text) if ASSIGNMENT_HINT.search(text) else ():
            if _looks_secret(m.group(2), m.group(3)):
                spans.append((m.start(3), m.end(3), f"{m.group(2).lower()}= value"))
    if depth < MAX_DEPTH:
        spans += _encoded_spans(text, rules, depth)
    return spans


def _encoded_spans(text: str, rules: Rules, depth: int) -> list[tuple[int, int, str]]:
    spans = []
    for m in URL_RUN.finditer(text) if "%" in text else ():
        if not URL_ESCAPE.search(m.group(0)):
            continue
        inner = find_spans(unquote_plus(m.group(0)), rules, depth + 1)
        if inner:
            spans.append((m.start(), m.end(), f"{inner[0][2]} (url-encoded)"))
    for m in BASE64_RUN.finditer(text):
        decoded = _b64_text(m.group(0))
        if decoded is None:
            continue
        inner = find_spans(decoded, rules, depth + 1)
        if inner:
            spans.append((m.start(), m.end(), f"{inner[0][2]} (base64)"))
    return spans


def _b64_text(run: str) -> str | None:
    """The run decoded as base64 text, or None when it is not base64 of UTF-8 text (most runs are plain words)."""
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        body = body[:-1]
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    controls = len(_BINARY.findall(decoded))
    return decoded if decoded and controls <= len(decoded) // 10 else None


_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_PRUNED_UP_TO = 64
"""Up to this many screen needles, those within another are pruned and the rest searched one by one; beyond it
(learned literals), one trie pattern."""
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_RUN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
assert re.fullmatch(BASE64_RUN.pattern.encode("ascii"), _RUN_CHARS)
_RUN_MARKS = bytes(0x61 if byte in _RUN_CHARS else 0x20 for byte in range(256))
"""Each byte of a base64 run as "a", every other byte as " ": then bytes.find spots the long runs."""
_LONG_RUN = b"a" * 16


def _base64_runs(text: bytes) -> Iterator[tuple[int, bytes]]:
    """(start, run) for each match of BASE64_RUN in text, as finditer gives them, found with bytes.find on the
    marked text: many times faster than the regex over a long text that has few long runs."""
    marked = text.translate(_RUN_MARKS)
    start = marked.find(_LONG_RUN)
    while start >= 0:
        end = marked.find(b" ", start + 16)
        if end < 0:
            end = len(text)
        end += 2 if text.startswith(b"==", end) else 1 if text.startswith(b"=", end) else 0
        yield start, text[start:end]
        start = marked.find(_LONG_RUN, end)


def redact_text(text: str, rules: Rules) -> tuple[str, list[str]]:
    """text with every secret span replaced by [REDACTED], and the kinds found (in order)."""
    # At one start, name the specific shape (github-token) rather than the generic key=value rule.
    spans = sorted(find_spans(text, rules), key=lambda s: (s[0], "= value" in s[2], -s[1]))
    if not spans:
        return text, []
    out, kinds, cursor = [], [], 0
    merged: list[list] = []
    for start, end, kind in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    for start, end, kind in merged:
        out += [text[cursor:start], REDACTED]
        kinds.append(kind)
        cursor = end
    out.append(text[cursor:])
    return "".join(out), kinds


def redact_value(value: Any, rules: Rules, path: str = "$") -> tuple[Any, list[Finding]]:
    """A copy of a JSON value with secrets masked, and what was masked where."""
    findings: list[Finding] = []
    return _walk(value, rules, path, findings), findings


def _walk(value: Any, rules: Rules, path: str, findings: list[Finding]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            where = jsonpath_child(path, key)
            if isinstance(key, str) and key.lower() in rules.keys and item != REDACTED and item is not None:
                out[key] = REDACTED
                findings.append(Finding(f"key {key}", where))
            else:
                out[key] = _walk(item, rules, where, findings)
        return out
    if isinstance(value, list):
        return [_walk(item, rules, jsonpath_child(path, i), findings) for i, item in enumerate(value)]
    if isinstance(value, str):
        masked, kinds = redact_text(value, rules)
        findings.extend(Finding(kind, path) for kind in kinds)
        return masked
    return value


def secrets_under_keys(value: Any, rules: Rules) -> list[str]:
    """String values found under secret keys: masked where they stand, they are searched for everywhere else too."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.lower() in rules.keys and isinstance(item, str) and len(item) >= 4:
                found.append(item)
            else:
                found += secrets_under_keys(item, rules)
    elif isinstance(value, list):
        for item in value:
            found += secrets_under_keys(item, rules)
    return found


def redact_argv(argv: list[str]) -> tuple[list[str], list[int]]:
    """A server command with the values of --token-style options masked, and the masked positions (the one rule:
    protocol.secrets.mask_argv)."""
    return mask_argv(argv)


class Screen:
    """A cheap look at a recording line's bytes that says when masking could not change it: `suspect(line)` is
    False only for a line that redact_value (and secrets_under_keys) provably leave alone, so an export can copy
    it without decoding and walking it. Anything it cannot rule out is suspect and takes the full walk.

    Why it is safe: a line with no backslash and only ASCII holds every string of its JSON value verbatim between
    quotes, so a secret key, a literal, a built-in pattern's hint, a key=value hint or a URL escape in any string
    shows in the bytes too, and each base64 run of a string is a base64 run of the line. User regexes cannot be
    judged on the encoded line (anchors, lookarounds), so with any of them every line is suspect."""

    def __init__(self, rules: Rules) -> None:
        self.everything = bool(rules.patterns)
        needles = {*rules.keys, "token", "key", "secret", "passw", "pwd", '"event"',
                   *(hint for _, _, _, hints in BUILTIN_PATTERNS for hint in hints),
                   *(text for _, text in rules.variants())}
        lowered = {needle.lower().encode("utf-8") for needle in needles}
        # One needle inside another adds nothing ("api_key" holds "key"); one alternation over the lowered line. Many
        # needles (the literals a --redact-key teaches, each in several forms) are not pruned pairwise (that is
        # quadratic) but made one trie pattern, which costs per byte what a few needles cost.
        self._many = len(lowered) > _PRUNED_UP_TO
        needed = sorted(lowered if self._many else (n for n in lowered if not any(m != n and m in n for m in lowered)),
                        key=len, reverse=True)
        # Also suspect: an escape or a non-ASCII byte (a string's text differs from its bytes), a URL escape, and an
        # event, because its detail.command has --token-style options masked by position, not by shape.
        self._needles = re.compile(b"|".join([rb"[\\%\x7f-\xff]", trie_pattern(needed).pattern] if self._many
                                             else [rb"[\\%\x7f-\xff]", *(re.escape(n) for n in needed)]))
        self._literal_needles = [b"\\", b"%", b"\x7f", *needed]
        self._digit_free = not any(byte in b"0123456789" for needle in needed for byte in needle)
        """The same needles for bytes.find, which scans a long text many times faster than the alternation."""
        self._base64 = re.compile(BASE64_RUN.pattern.encode("ascii"))
        self._text_runs: dict[bytes, bool] = {}
        """Base64-looking run → does it decode to text? Runs repeat (method names), decoding them does not."""

    def suspect(self, line: bytes) -> bool:
        """Could masking change this line (one JSON value, UTF-8, without its newline)?"""
        if self.everything or self._needles.search(line.lower()):  # lower() keeps \\, % and non-ASCII bytes as they are
            return True
        return any(self._decodes(m.group(0)) for m in self._base64.finditer(line))

    def suspect_lines(self, lines: bytes) -> list[int]:
        """The indices (0-based, ascending) of the lines `suspect` would find suspect among whole lines joined by
        newlines, found by one scan of the whole text rather than one per line: neither a needle nor a base64 run
        holds a newline, so each match lies within one line and is found as the line's own scan finds it."""
        if self.everything:
            return list(range(lines.count(b"\n") + 1))
        lowered = lines.lower()
        indices = self._lines_with_needles(lowered)
        positions = [pos for pos, run in _base64_runs(lines) if self._decodes(run)]
        if not positions:
            return indices
        indices += self._line_indices(lines, positions)
        return sorted(set(indices))

    def _lines_with_needles(self, lowered: bytes) -> list[int]:
        """The indices of the lines holding a needle. Recordings repeat themselves (a flood's lines differ in their
        numbers only), and no needle holds a digit: so each distinct line, its digits made 0, is searched once."""
        if not self._digit_free:
            return self._line_indices(lowered, self._needle_positions(lowered))
        normal = lowered.translate(_DIGITS_AS_ZERO).split(b"\n")
        distinct = list(dict.fromkeys(normal))
        if len(distinct) * 4 > len(normal):  # not repetitive enough to gain: search the lines as they are
            return self._line_indices(lowered, self._needle_positions(lowered))
        joined = b"\n".join(distinct)
        suspect = {distinct[i] for i in self._line_indices(joined, self._needle_positions(joined))}
        return [index for index, line in enumerate(normal) if line in suspect] if suspect else []

    def _needle_positions(self, lowered: bytes) -> list[int]:
        """A position of a needle in each line holding one (at least), in lowered text."""
        if self._many:  # the one pattern finds the escapes and non-ASCII bytes too
            return [m.start() for m in self._needles.finditer(lowered)]
        positions = []
        for needle in self._literal_needles:
            pos = lowered.find(needle)
            while pos >= 0:
                positions.append(pos)
                pos = lowered.find(b"\n", pos)  # the rest of a suspect line need not be looked at
                pos = -1 if pos < 0 else lowered.find(needle, pos + 1)
        if not lowered.isascii():
            positions += [m.start() for m in _NON_ASCII.finditer(lowered)]
        return positions

    @staticmethod
    def _line_indices(text: bytes, positions: list[int]) -> list[int]:
        """The (0-based, ascending, distinct) indices of the lines of text that hold these positions."""
        indices: list[int] = []
        index = last = 0
        for pos in sorted(positions):
            index, last = index + text.count(b"\n", last, pos), pos
            if not indices or indices[-1] != index:
                indices.append(index)
        return indices

    def _decodes(self, run: bytes) -> bool:
        known = self._text_runs.get(run)
        if known is None:
            if len(self._text_runs) >= 4096:  # bounded: random runs (ids, hashes) do not pile up
                self._text_runs.clear()
            known = self._text_runs[run] = _b64_text(run.decode("ascii")) is not None
        return known
