"""A small checker of the GitHub Markdown our reports write: every fence closed by a fence at least as long, every
HTML tag outside fences one of ours and balanced, every table row exactly its columns, no unescaped code span
left open. Server text that escaped its escaping breaks one of these."""

from __future__ import annotations

import re

OUR_TAGS = {"details", "summary", "code"}
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")


def unescaped(line: str, char: str) -> int:
    """How many times char occurs in line not preceded by an odd number of backslashes."""
    return sum(1 for m in re.finditer(r"(\\*)" + re.escape(char), line) if len(m.group(1)) % 2 == 0)


def check_markdown(text: str, columns: int = 2) -> dict:
    """Raise AssertionError naming the line where the structure breaks; return counts of what was seen."""
    fence: str | None = None
    stack: list[str] = []
    seen = {"fences": 0, "details": 0}
    for number, line in enumerate(text.split("\n"), 1):
        if fence is not None:
            m = _FENCE.fullmatch(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
            continue
        m = _FENCE.fullmatch(line)
        if m:
            assert "`" not in m.group(2), f"line {number}: a backtick fence's info string has a backtick: {line!r}"
            fence = m.group(1)
            seen["fences"] += 1
            continue
        for closing, name in _TAG.findall(line):
            name = name.lower()
            assert name in OUR_TAGS, f"line {number}: a <{name}> tag outside a fence: {line!r}"
            if closing:
                assert stack and stack[-1] == name, f"line {number}: </{name}> closes {stack[-1:]}: {line!r}"
                stack.pop()
            else:
                stack.append(name)
                seen["details"] += name == "details"
        assert unescaped(line, "`") % 2 == 0, f"line {number}: an unbalanced code span: {line!r}"
        if line.startswith("|"):
            assert unescaped(line, "|") == columns + 1, f"line {number}: a table row with a broken cell: {line!r}"
    assert fence is None, f"a fence {fence!r} is never closed"
    assert not stack, f"tags never closed: {stack}"
    return seen
