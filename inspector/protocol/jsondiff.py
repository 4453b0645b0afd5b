"""Pure: the one structural diff of two JSON values, with two ways to write where a difference is.

`walk` yields (steps, before, after) for every leaf that differs; a side that lacks the member is `ABSENT`. Steps
are member names (str), array indexes (int) and `Match` (an array item found by its "name" or "uri"). Two renderers
turn steps into text:
- `pointer_path`: an RFC 6901 JSON pointer, for the page's "what changed" (protocol/diff.py);
- `jsonpath`: a JSONPath that jsonpath-ng parses back, so replay's report lines paste as --ignore rules.

Equality is `json_equal` (1 == 1.0, true != 1) everywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from inspector.protocol.json import ABSENT, json_equal, jsonpath_child, pointer

ALIGNED = "aligned"
"""Arrays are compared item by item only when both have the same length and hold only objects/arrays; otherwise
the whole array is one difference (a `required` or `enum` list reads better whole)."""
ELEMENTWISE = "elementwise"
"""Arrays are always compared item by item; the longer side's extra items are differences against ABSENT."""
NAME_KEYS = ("name", "uri")
"""Members that identify tools, prompts and resources in a list."""


@dataclass(frozen=True)
class Match:
    """An array item found by `key` == `name` (not by position), so a removed tool is one difference."""

    key: str
    name: str


Steps = tuple
"""The place of a difference: member names (str), indexes (int) and Match steps, from the root down."""


def list_key(items: list, keys: tuple[str, ...] = NAME_KEYS) -> str | None:
    """The first of `keys` under which every item is an object with a unique string, or None."""
    for key in keys:
        names = [item.get(key) for item in items if isinstance(item, dict)]
        if len(names) == len(items) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            return key
    return None


def walk(before: Any, after: Any, *, arrays: str = ALIGNED, keyed: tuple[str, ...] = (),
         skip: Callable[[Any], bool] | None = None, steps: Steps = ()) -> Iterator[tuple[Steps, Any, Any]]:
    """Every place where `after` differs from `before`, depth first, members in `before`'s order then new ones.

    `keyed`: member names that match array items by identity (see `list_key`) when both sides agree on one.
    `skip(value)`: a value (on either side) that counts as equal to anything, e.g. replay's ignored markers.
    """
    if skip is not None and (skip(before) or skip(after)):
        return
    if json_equal(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for k in [*before, *(k for k in after if k not in before)]:
            yield from walk(before.get(k, ABSENT), after.get(k, ABSENT), arrays=arrays, keyed=keyed, skip=skip,
                            steps=steps + (k,))
        return
    if isinstance(before, list) and isinstance(after, list):
        key = _shared_key(before, after, keyed, skip) if keyed else None
        if key is not None:
            by_before = {item[key]: item for item in before if not (skip and skip(item))}
            by_after = {item[key]: item for item in after if not (skip and skip(item))}
            for name in [*by_before, *(n for n in by_after if n not in by_before)]:
                yield from walk(by_before.get(name, ABSENT), by_after.get(name, ABSENT), arrays=arrays,
                                keyed=keyed, skip=skip, steps=steps + (Match(key, name),))
            return
        if arrays == ELEMENTWISE or (len(before) == len(after) and
                                     all(isinstance(v, (dict, list)) for v in [*before, *after])):
            for i in range(max(len(before), len(after))):
                yield from walk(before[i] if i < len(before) else ABSENT, after[i] if i < len(after) else ABSENT,
                                arrays=arrays, keyed=keyed, skip=skip, steps=steps + (i,))
            return
    yield steps, before, after


def pointer_path(steps: Steps) -> str:
    """The JSON pointer of a place ("" for the whole value); a Match step is written as the item's name."""
    return pointer(s.name if isinstance(s, Match) else s for s in steps)


def jsonpath(steps: Steps, root: str = "$") -> str:
    """A JSONPath to a place: $.a[0]["odd key"], and [?(@.name=="x")] for a Match step."""
    path = root
    for step in steps:
        if isinstance(step, Match):
            path = f"{path}[?(@.{step.key}=={json.dumps(step.name, ensure_ascii=False)})]"
        else:
            path = jsonpath_child(path, step)
    return path


def _shared_key(a: list, b: list, keys: tuple[str, ...], skip: Callable[[Any], bool] | None) -> str | None:
    """The key both sides match items by (an empty side agrees with anything), or None."""
    sides = [[x for x in side if not (skip and skip(x))] for side in (a, b)]
    found = {list_key(side, keys) for side in sides if side}
    return found.pop() if len(found) == 1 and None not in found else None
