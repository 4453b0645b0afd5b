"""Pure: what changed in a server between two runs (info, capabilities, instructions, tools, resources, templates,
prompts), word-level text diffs for the page, and whether a tool's form inputs still fit its new schema.

A snapshot is a plain dict with the keys of SECTIONS, holding the values as the server sent them (lists of MCP
objects, verbatim). Nothing here does I/O.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import schemas
from inspector.protocol.json import ABSENT, is_number, json_equal, loads, unescape
from inspector.protocol.jsondiff import ALIGNED, pointer_path, walk

OBJECT_SECTIONS = ("serverInfo", "capabilities", "instructions")
LIST_KEYS = {"tools": "name", "resources": "uri", "resourceTemplates": "uriTemplate", "prompts": "name"}
SECTIONS = OBJECT_SECTIONS + tuple(LIST_KEYS)
LABELS = {"serverInfo": "server info", "resourceTemplates": "templates"}
"""How the summary names a section (the JSON keeps the MCP names)."""
MAX_NAMES = 3  # names spelled out per group in the summary line before "and N more"
MAX_TEXT_TOKENS = 5000  # past this, text_diff gives delete-all + insert-all (difflib is quadratic at worst)


@dataclass
class Change:
    """One field-level difference inside an item (or an object section)."""

    path: str
    """JSON pointer (RFC 6901) relative to the item: "/description", "/inputSchema/properties/text/type"; "" is
    the whole value (instructions)."""
    before: Any
    """The old value, or ABSENT when the member was added."""
    after: Any
    """The new value, or ABSENT when the member was removed."""

    @property
    def op(self) -> str:
        """added, removed or changed."""
        if self.before is ABSENT:
            return "added"
        return "removed" if self.after is ABSENT else "changed"

    def to_json(self) -> dict:
        """{"path", "before", "after"}; a side that does not exist is left out (JSON has no ABSENT)."""
        out: dict[str, Any] = {"path": self.path}
        if self.before is not ABSENT:
            out["before"] = self.before
        if self.after is not ABSENT:
            out["after"] = self.after
        return out


@dataclass
class SectionDiff:
    """What changed in one section."""

    added: list[str] = field(default_factory=list)
    """Keys of new items (list sections), in the new order."""
    removed: list[str] = field(default_factory=list)
    """Keys of items that are gone (list sections), in the old order."""
    changed: dict[str, list[Change]] = field(default_factory=dict)
    """Per kept item whose content differs (list sections), its changes; in the new order."""
    changes: list[Change] = field(default_factory=list)
    """Object sections (serverInfo, capabilities, instructions): the changes, paths relative to the section."""

    @property
    def is_empty(self) -> bool:
        """Nothing changed in this section."""
        return not (self.added or self.removed or self.changed or self.changes)

    def to_json(self) -> dict:
        """The section's JSON form: added/removed/changed for list sections, changes for object sections."""
        if self.changes:
            return {"changes": [c.to_json() for c in self.changes]}
        return {"added": list(self.added), "removed": list(self.removed),
                "changed": {key: [c.to_json() for c in changes] for key, changes in self.changed.items()}}


@dataclass
class ServerDiff:
    """What changed between two runs of a server."""

    sections: dict[str, SectionDiff] = field(default_factory=dict)
    """Every name in SECTIONS, in that order (empty SectionDiff when unchanged)."""

    @property
    def is_empty(self) -> bool:
        """Nothing changed anywhere."""
        return all(section.is_empty for section in self.sections.values())

    def summary(self) -> str:
        """One short human line: "tools: +1 −0 ~1 (count_words added; word_count: description changed)"."""
        parts = [_section_summary(name, section) for name, section in self.sections.items() if not section.is_empty]
        return "; ".join(parts) if parts else "nothing changed"

    def to_json(self) -> dict:
        """The recording's diff event detail: non-empty sections only, plus the summary."""
        return {"sections": {name: section.to_json() for name, section in self.sections.items()
                             if not section.is_empty},
                "summary": self.summary()}

    def changed_tool_names(self) -> list[str]:
        """Tools kept across the restart whose definition changed (keys as in SectionDiff)."""
        return list(self.sections.get("tools", SectionDiff()).changed)

    def added_tool_names(self) -> list[str]:
        """Tools that are new in this run."""
        return list(self.sections.get("tools", SectionDiff()).added)


def diff_servers(before: dict, after: dict) -> ServerDiff:
    """Compare two snapshots ({"serverInfo", "capabilities", "instructions", "tools", ...}); a missing key is empty."""
    out = ServerDiff()
    for name in OBJECT_SECTIONS:
        old, new = before.get(name), after.get(name)
        if name == "instructions":  # a string is shown whole (with text_diff), never split into characters
            changes = [] if json_equal(old, new) else [Change("", ABSENT if old is None else old,
                                                         ABSENT if new is None else new)]
        else:
            changes = diff_values(old or {}, new or {})
        out.sections[name] = SectionDiff(changes=changes)
    for name, key in LIST_KEYS.items():
        out.sections[name] = diff_items(before.get(name) or [], after.get(name) or [], key)
    return out


def diff_items(before: list, after: list, key: str) -> SectionDiff:
    """Added, removed and changed items of a list section, matching items by their `key` member."""
    old, new = item_keys(before, key), item_keys(after, key)
    section = SectionDiff(added=[k for k in new if k not in old], removed=[k for k in old if k not in new])
    for k, item in new.items():
        if k in old:
            changes = diff_values(old[k], item)
            if changes:
                section.changed[k] = changes
    return section


def item_keys(items: list, key: str) -> dict[str, Any]:
    """Items by key: the `key` member when it is a string seen for the first time, else "[i]" (position i)."""
    out: dict[str, Any] = {}
    for i, item in enumerate(items if isinstance(items, list) else []):
        name = item.get(key) if isinstance(item, dict) else None
        out[name if isinstance(name, str) and name not in out else f"[{i}]"] = item
    return out


def diff_values(before: Any, after: Any, path: str = "") -> list[Change]:
    """Field-level differences: objects member by member, arrays of objects/arrays item by item when the lengths
    match, everything else (scalars, lists of scalars like `required` or `enum`) as one change."""
    return [Change(path + pointer_path(steps), old, new) for steps, old, new in walk(before, after, arrays=ALIGNED)]


def text_diff(before: str | None, after: str | None) -> list[tuple[str, str]]:
    """Word-level diff as (op, text) runs, op in equal/delete/insert; the equal+delete texts join to `before` and
    the equal+insert texts to `after` (whitespace included)."""
    a, b = _tokens(before or ""), _tokens(after or "")
    if len(a) + len(b) > MAX_TEXT_TOKENS:
        opcodes = [("replace", 0, len(a), 0, len(b))]
    else:
        opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    # a lone space between two edits joins them, so "a text." -> "some text!" reads as one replacement
    runs: list[tuple[str, str, str]] = []  # (equal text) or (deleted, inserted) per region
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        old, new = "".join(a[i1:i2]), "".join(b[j1:j2])
        between_edits = 0 < n < len(opcodes) - 1 and old.isspace()
        if tag == "equal" and not between_edits:
            runs.append(("equal", old, ""))
        elif runs and runs[-1][0] == "edit":
            runs[-1] = ("edit", runs[-1][1] + old, runs[-1][2] + new)
        else:
            runs.append(("edit", old, new))
    out: list[tuple[str, str]] = []
    for kind, old, new in runs:
        pieces = [("equal", old)] if kind == "equal" else [("delete", old), ("insert", new)]
        out.extend((op, text) for op, text in pieces if text)
    return out


def schema_still_fits(old_schema: Any, new_schema: Any, arguments: Any) -> bool:
    """Whether a tool's form inputs can be kept after its inputSchema changed from old to new.

    The rule, first match wins:
    1. the schema did not change, or there is nothing to keep (None, "", {}, whitespace): keep;
    2. `arguments` (a dict, or the form's JSON text) that is not a JSON object: drop (nothing can be checked);
    3. the arguments validate against the new schema (jsonschema, the schema's own dialect, 2020-12 by default): keep;
    4. otherwise keep when every provided argument is still a property of the new schema and its value has a JSON
       type the new property allows (its `type`, when it has one): a new required property or a narrower constraint
       leaves the user's typing in place, for them to fix; a renamed property or a changed type does not.
    """
    if json_equal(old_schema, new_schema):
        return True
    if isinstance(arguments, str):
        if not arguments.strip():
            return True
        try:
            arguments = loads(arguments)
        except ValueError:
            return False
    if arguments is None or arguments == {}:
        return True
    if not isinstance(arguments, dict):
        return False
    if not isinstance(new_schema, dict):
        return False
    if schemas.is_valid(new_schema, arguments):  # None (a broken schema, a remote $ref): the property check
        return True
    properties = new_schema.get("properties")
    if not isinstance(properties, dict):
        return False
    for name, value in arguments.items():
        prop = properties.get(name)
        if not isinstance(prop, dict) and prop is not True:
            return False
        allowed = prop.get("type") if isinstance(prop, dict) else None
        if allowed is not None and not _json_type_fits(value, allowed):
            return False
    return True


# -- helpers -----------------------------------------------------------------------------------------------------

def _tokens(text: str) -> list[str]:
    return re.findall(r"\s+|\S+", text)


def _json_type_fits(value: Any, allowed: Any) -> bool:
    types = allowed if isinstance(allowed, list) else [allowed]
    actual = {bool: "boolean", str: "string", dict: "object", list: "array", type(None): "null"}.get(type(value))
    if actual is None and is_number(value):
        actual = "integer" if isinstance(value, int) or float(value).is_integer() else "number"
    return actual in types or (actual == "integer" and "number" in types)


def _section_summary(name: str, section: SectionDiff) -> str:
    label = LABELS.get(name, name)
    if name == "instructions":
        return f"instructions {section.changes[0].op}"
    if section.changes:  # serverInfo, capabilities: +new −gone ~changed members
        top: dict[str, str] = {}
        for change in section.changes:
            member = _top(change.path) or label
            top.setdefault(member, change.op if change.path.count("/") == 1 else "changed")
        if name == "serverInfo" and list(top) == ["version"] and len(section.changes) == 1:
            change = section.changes[0]
            return f"server version {_short(change.before)} → {_short(change.after)}"
        marks = {"added": "+", "removed": "−", "changed": "~"}
        return f"{label}: " + " ".join(marks[op] + member for member, op in top.items())
    details = []
    if section.added:
        details.append(f"{_names(section.added)} added")
    if section.removed:
        details.append(f"{_names(section.removed)} removed")
    items = list(section.changed.items())
    for key, changes in items[:MAX_NAMES]:
        fields = list(dict.fromkeys(_top(c.path) or "value" for c in changes))
        details.append(f"{key}: {', '.join(fields)} changed")
    if len(items) > MAX_NAMES:
        details.append(f"{len(items) - MAX_NAMES} more changed")
    counts = f"+{len(section.added)} −{len(section.removed)} ~{len(section.changed)}"
    return f"{label}: {counts} ({'; '.join(details)})"


def _top(path: str) -> str:
    """The first member of a JSON pointer, unescaped ("" for the whole value)."""
    return unescape(path.split("/")[1]) if path else ""


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:MAX_NAMES])
    return shown if len(keys) <= MAX_NAMES else f"{shown} and {len(keys) - MAX_NAMES} more"


def _short(value: Any) -> str:
    return "(none)" if value is ABSENT else str(value)
