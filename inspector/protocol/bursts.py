"""Stderr bursts: which consecutive stderr lines the timeline shows as one row (a traceback, a multi-line log record).

Pure: the Store feeds every record through `Bursts.observe` in seq order and keeps, per stderr row, the seq of
its burst's first line (the head). Each line stays its own record; only the page groups them. Everything here
depends on the recorded `t` and the text, never on when the page looks, so a recording groups the same way in
`view` as it did live.

The rule, line by line:
- a stderr line more than GAP_SECONDS after the burst's previous line starts a new burst;
- so does a line once the burst holds MAX_LINES (a server that never pauses still gets rows);
- `Traceback (most recent call last):` starts a new burst, unless the open burst holds no traceback yet (a log
  record's message line such as "Tool 'fail' raised an unexpected exception" heads its own traceback) or Python
  is chaining exceptions ("The above exception was the direct cause of the following exception:");
- a record to the server or an event (spawn, exit, restart...) ends the burst; a message or an invalid line
  FROM the server does not: stdout and stderr are read by two threads, so a tool's answer is often recorded in
  the middle of the traceback the server wrote before answering.
"""

from __future__ import annotations

from typing import NamedTuple

GAP_SECONDS = 0.5
"""A line more than this after the previous line of its burst starts a new burst."""
MAX_LINES = 400
"""The most lines one burst row holds."""
TRACEBACK = "Traceback (most recent call last):"
CHAINING = ("The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:")


class OpenBurst(NamedTuple):
    """The burst the next stderr line may join (a tuple: one is made per stderr line, so it must be cheap)."""

    head: int
    """The seq of its first line."""
    last_t: float
    """The recorded time of its newest line."""
    lines: int
    has_traceback: bool = False
    chained: bool = False
    """Its newest non-blank line announces a chained exception: the next Traceback continues it."""


def follow(burst: OpenBurst | None, seq: int, t: float, text: str) -> OpenBurst:
    """The burst a stderr line belongs to: `burst` grown by it, or a new one headed by it."""
    # One call per stderr line (a flood's million of them in `view`): the rule is spelled out here, not in helpers,
    # and the tuples are made with tuple.__new__ (OpenBurst(...) adds a Python-level call per line).
    starts_traceback = text.startswith(TRACEBACK)
    if burst is None:
        return _make(OpenBurst, (seq, t, 1, starts_traceback, False))
    head, last_t, lines, has_traceback, was_chained = burst
    if (t - last_t > GAP_SECONDS or lines >= MAX_LINES
            or (starts_traceback and has_traceback and not was_chained)):
        return _make(OpenBurst, (seq, t, 1, starts_traceback, False))
    if was_chained:  # a blank line keeps the announcement open
        stripped = text.strip()
        chained = not stripped or stripped in CHAINING
    else:  # both announcements say "exception": most lines are cleared by that one search
        chained = "exception" in text and text.strip() in CHAINING
    return _make(OpenBurst, (head, max(t, last_t), lines + 1, has_traceback or starts_traceback,
                             chained))


_make = tuple.__new__


def interrupts(kind: str, direction: str | None) -> bool:
    """Whether a record that is not a stderr line ends the open burst (see the module's rule)."""
    return not (kind in ("message", "invalid") and direction == "from_server")


class Bursts:
    """The open burst of one timeline; the Store calls `observe` for each record, in seq order."""

    def __init__(self) -> None:
        self.open: OpenBurst | None = None

    def observe(self, kind: str, direction: str | None, seq: int, t: float, text: str | None) -> int | None:
        """The head seq of the burst a stderr record belongs to; None for any other record."""
        if kind == "stderr":
            self.open = follow(self.open, seq, t, text or "")
            return self.open.head
        if interrupts(kind, direction):
            self.open = None
        return None


# -- reading a burst's lines ------------------------------------------------------------------------------------

def headline(lines: list[str]) -> str:
    """What a burst row's summary shows: its last non-blank line (a traceback's exception line)."""
    for line in reversed(lines):
        if line.strip():
            return line
    return lines[-1] if lines else ""


def exception_lines(lines: list[str]) -> list[str]:
    """The exception line of each traceback in a burst (`ValueError: boom`), oldest first.

    A traceback's exception line is the first unindented, non-blank line after its `Traceback` line."""
    found: list[str] = []
    inside = False
    for line in lines:
        if line.startswith(TRACEBACK):
            inside = True
        elif inside and line.strip() and not line[:1].isspace():
            found.append(line)
            inside = False
    return found
