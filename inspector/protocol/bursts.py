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

GAP_SECONDS = 0.5
"""A line more than this after the previous line of its burst starts a new burst."""
MAX_LINES = 400
"""The most lines one burst row holds."""
TRACEBACK = "Traceback (most recent call last):"
CHAINING = ("The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:")


def interrupts(kind: str, direction: str | None) -> bool:
    """Whether a record that is not a stderr line ends the open burst (see the module's rule)."""
    return not (kind in ("message", "invalid") and direction == "from_server")


class Bursts:
    """The open burst of one timeline; the Store calls `observe` for each record, in seq order.

    Its state is kept in place, not as a value per line: `view` of a flood's million stderr lines calls `follow`
    a million times, and a tuple made per call was a fifth of the whole view's time."""

    __slots__ = ("open", "_last_t", "_lines", "_has_traceback", "_chained")

    def __init__(self) -> None:
        self.open: int | None = None
        """The seq of the open burst's first line (its head); None when no burst is open."""
        self._last_t = 0.0
        """The recorded time of its newest line."""
        self._lines = 0
        self._has_traceback = False
        self._chained = False
        """Its newest non-blank line announces a chained exception: the next Traceback continues it."""

    def observe(self, kind: str, direction: str | None, seq: int, t: float, text: str | None) -> int | None:
        """The head seq of the burst a stderr record belongs to; None for any other record."""
        if kind == "stderr":
            return self.follow(seq, t, text or "")
        if interrupts(kind, direction):
            self.open = None
        return None

    def follow(self, seq: int, t: float, text: str) -> int:
        """A stderr line: the head seq of the burst it joins, or its own seq when it starts one."""
        # The rule is spelled out here, not in helpers: one call per stderr line, a million of them in a flood.
        starts_traceback = text.startswith(TRACEBACK)
        head = self.open
        if (head is None or t - self._last_t > GAP_SECONDS or self._lines >= MAX_LINES
                or (starts_traceback and self._has_traceback and not self._chained)):
            self.open, self._last_t, self._lines, self._has_traceback, self._chained = \
                seq, t, 1, starts_traceback, False
            return seq
        if self._chained:  # a blank line keeps the announcement open
            stripped = text.strip()
            self._chained = not stripped or stripped in CHAINING
        else:  # both announcements say "exception": most lines are cleared by that one search
            self._chained = "exception" in text and text.strip() in CHAINING
        if t > self._last_t:
            self._last_t = t
        self._lines += 1
        if starts_traceback:
            self._has_traceback = True
        return head


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
