"""Pure: compare a recorded JSON value with the one a replay produced, leaving out what ignore rules match.

Every path in a Difference is a JSONPath that jsonpath-ng parses again, so a report line can be pasted as an
--ignore rule. Lists of objects with a unique "name" or "uri" (tools, prompts, resources) are matched by it, so a
removed tool is one difference rather than every later index shifting.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable

from inspector.protocol.json import ABSENT, REDACTED
from inspector.protocol.jsondiff import ELEMENTWISE, NAME_KEYS, jsonpath, walk

# Values that differ from run to run by nature; --ignore adds to these, --no-default-ignores drops them.
DEFAULT_IGNORES: tuple[tuple[str, str], ...] = (
    ("$.id", "request ids: replay numbers its own requests, and the server numbers its requests to us"),
    ("$.jsonrpc", "the protocol tag, not the server's answer"),
    ("$.._meta.timestamp", "timestamps servers put in _meta"),
    ("$..createdAt", "task creation times"),
    ("$..lastUpdatedAt", "task update times"),
    ("$..taskId", "task ids the server generates"),
    ("$..elicitationId", "elicitation ids the server generates"),
)


@dataclass(frozen=True)
class Difference:
    """One place where the actual value differs from the recorded one."""

    path: str
    """A JSONPath to the place, usable as an --ignore rule."""
    recorded: Any
    """The recorded value, or ABSENT."""
    actual: Any
    """The value this run produced, or ABSENT."""

    def to_dict(self) -> dict:
        """JSON form; a side that does not exist is null plus "absent": "recorded" or "actual"."""
        out = {"path": self.path, "recorded": None if self.recorded is ABSENT else self.recorded,
               "actual": None if self.actual is ABSENT else self.actual}
        if self.recorded is ABSENT or self.actual is ABSENT:
            out["absent"] = "recorded" if self.recorded is ABSENT else "actual"
        return out


@functools.lru_cache(maxsize=256)
def parse_path(text: str):
    """A JSONPath expression (jsonpath-ng's extended syntax, so filters like [?(@.name=="x")] work).

    Raises ValueError with the parser's reason for a bad expression.
    """
    from jsonpath_ng.exceptions import JSONPathError
    from jsonpath_ng.ext import parse  # imported late: only replay needs it

    try:
        return parse(text)
    except (JSONPathError, Exception) as exc:  # ply raises plain Exceptions for some inputs
        raise ValueError(f"not a JSONPath expression: {text!r} ({exc})") from None


class _Ignored:
    def __repr__(self) -> str:
        return "(ignored)"


IGNORED: Any = _Ignored()
"""Stands in for a value an ignore rule matched: equal to anything, even to a value the other side lacks."""


def mark_ignored(value: Any, ignore_paths: Iterable[Any]) -> Any:
    """A copy of value with everything the rules match replaced by IGNORED.

    Replaced rather than deleted: deleting list items would shift the indices later rules and the diff rely on.
    """
    value = copy.deepcopy(value)
    for rule in ignore_paths:
        expr = parse_path(rule) if isinstance(rule, str) else rule
        try:
            value = expr.update(value, IGNORED)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            continue  # the rule does not fit this value's shape: nothing to ignore
    return value


def compare(recorded: Any, actual: Any, ignore_paths: Iterable[Any] = ()) -> list[Difference]:
    """The differences between two JSON values, leaving out what the ignore rules match on either side."""
    rules = list(ignore_paths)
    # Tools, prompts and resources are matched by name or uri, so a removed tool is one difference rather than
    # every later index shifting; IGNORED equals anything, even a value the other side lacks.
    return [Difference(jsonpath(steps), _plain(a), _plain(b))
            for steps, a, b in walk(mark_ignored(recorded, rules), mark_ignored(actual, rules), arrays=ELEMENTWISE,
                                    keyed=NAME_KEYS, skip=lambda v: v is IGNORED)
            if not masked_match(a, b)]


def masked_match(recorded: Any, actual: Any) -> bool:
    """A recorded string an export or the recorder masked matches any actual string that has the same text around
    each [REDACTED] (and a whole [REDACTED] matches any value): a masked recording is not a difference, and the
    live value, often the very secret that was masked, is never shown."""
    if not isinstance(recorded, str) or REDACTED not in recorded or actual is ABSENT:
        return False
    if recorded == REDACTED:
        return True
    if not isinstance(actual, str):
        return False
    pattern = ".*".join(re.escape(part) for part in recorded.split(REDACTED))
    return re.fullmatch(pattern, actual, re.DOTALL) is not None


def _plain(value: Any) -> Any:
    """A value fit for a report: IGNORED markers inside it shown as text."""
    if value is IGNORED:
        return "(ignored)"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
