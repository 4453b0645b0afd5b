"""Pure text helpers for Markdown reports: escaping server text, fences that cannot be closed from inside, and
trimming the middle of long values (saying how much went)."""

from __future__ import annotations

import datetime as _dt
import html
import re
from typing import Any, Iterable, Iterator

_BACKTICK_RUN = re.compile(r"`+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
"""Terminal colour and cursor sequences, common in stderr: dropped, not shown as replacement characters."""
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# What Markdown reads as syntax in the middle of a line: code spans, emphasis, links, strike-through and table cell
# breaks. A backslash makes each literal; `<` and `&` become entities. Inline text never starts a line (a list
# marker or a cell comes first), so block syntax such as `#` or `1.` needs nothing.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~])")


def fence(body: str, info: str = "") -> str:
    """A fenced code block holding body verbatim: its fence is one backtick longer than any run inside, so no line
    of server text can close it early."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = _CONTROL.sub("\ufffd", _ANSI.sub("", body).replace("\r\n", "\n").replace("\r", "\n"))
    return f"{ticks}{info}\n{body.rstrip(chr(10))}\n{ticks}\n"


INLINE_LIMIT = 300
"""Characters kept of one piece of inline text (a table cell, a summary): a server name cannot fill the report."""


def html_text(text: Any, limit: int = INLINE_LIMIT) -> str:
    """Server text for an HTML context such as a <summary>, where Markdown is not read: entities only, one line."""
    return html.escape(_one_line(text, limit), quote=True)


def inline(text: Any, limit: int = INLINE_LIMIT) -> str:
    """Server text for a Markdown line or table cell: no tag, link, emphasis, code span or cell break survives."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(_one_line(text, limit), quote=False))


def _one_line(text: Any, limit: int) -> str:
    # A zero-width space after "@" keeps GitHub from notifying whoever a server's text happens to name.
    text = _MENTION.sub("@\u200b", _ANSI.sub("", trim_middle(str(text), limit)[0]))  # cut first: cheap on huge text
    return _CONTROL.sub(" ", re.sub(r"\s*[\r\n]+\s*", " ", text)).strip()


def trim_middle(text: str, limit: int) -> tuple[str, int]:
    """text cut to about limit characters by dropping its middle; (new text, characters dropped)."""
    if len(text) <= limit:
        return text, 0
    keep = max(limit - 40, 2)
    head, tail = text[:keep // 2], text[len(text) - keep // 2:]
    dropped = len(text) - len(head) - len(tail)
    return f"{head} …[{dropped:,} characters trimmed]… {tail}", dropped


def trim_lines_middle(lines: list[str], limit: int) -> tuple[str, int]:
    """trim_middle("\\n".join(lines), limit), without joining what the middle drops (a million stderr lines)."""
    total = sum(map(len, lines)) + max(len(lines) - 1, 0)
    if total <= limit:
        return "\n".join(lines), 0
    half = max(limit - 40, 2) // 2
    head = "\n".join(_until(lines, half))[:half]
    tail = "\n".join(reversed(list(_until(reversed(lines), half))))
    tail = tail[len(tail) - half:]
    dropped = total - len(head) - len(tail)
    return f"{head} …[{dropped:,} characters trimmed]… {tail}", dropped


def _until(lines: Iterable[str], chars: int) -> Iterator[str]:
    """Lines from the start of `lines` until they hold at least `chars` characters with their newlines."""
    taken = 0
    for line in lines:
        yield line
        taken += len(line) + 1
        if taken > chars:
            return


def trim_value(value: Any, *, text_limit: int, items_limit: int) -> tuple[Any, bool]:
    """A JSON value with long strings, lists and objects trimmed in the middle; (value, whether anything went).

    Markers are strings in the value itself, so the result is still JSON and says where it was cut."""
    trimmed = False

    def walk(node: Any) -> Any:
        nonlocal trimmed
        if isinstance(node, str):
            cut, dropped = trim_middle(node, text_limit)
            trimmed = trimmed or dropped > 0
            return cut
        if isinstance(node, list):
            if len(node) <= items_limit:
                return [walk(item) for item in node]
            trimmed, half = True, items_limit // 2
            marker = f"…[{len(node) - 2 * half:,} items trimmed]…"
            return [walk(item) for item in node[:half]] + [marker] + [walk(item) for item in node[-half:]]
        if isinstance(node, dict):
            keys = list(node)
            if len(keys) > items_limit:
                trimmed = True
                out = {key: walk(node[key]) for key in keys[:items_limit]}
                out["…"] = f"[{len(keys) - items_limit:,} more keys trimmed]"
                return out
            return {key: walk(item) for key, item in node.items()}
        return node

    return walk(value), trimmed


def when(created: str, duration_s: float | None) -> str:
    """'2026-11-30 10:12:03 UTC, 4.2 s' from the header's time and the recording's length."""
    try:
        start = _dt.datetime.fromisoformat(created.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        start = created
    return start if duration_s is None else f"{start}, {duration_s:.1f} s"
