"""Pure: a tool's JSON Schema reduced, node by node, to the one form widget kind that edits it.

`classify` follows local $refs (never fetching anything; a recursive one only MAX_REF_REPEAT times on a path), merges
a single allOf, peels type lists and unions, and says why a subtree must be edited as JSON text instead. The build
side (build.py) and the parse side (parse.py) share it, so a form always reads back what it rendered.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field as _field
from typing import Any
from urllib.parse import unquote

from inspector.protocol.json import unescape

MAX_REF_REPEAT = 3  # a recursive $ref is expanded this many times on one path, then edited as JSON
# Keys that describe a value; the rest constrain it (and are shared by union branches).
ANNOTATIONS = {"title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
               "writeOnly", "$schema", "$id", "$defs", "definitions", "discriminator"}
UNSUPPORTED = ("not", "if", "then", "else", "patternProperties", "dependentSchemas", "prefixItems", "$dynamicRef",
               "$recursiveRef", "unevaluatedItems")


def dump(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)



@dataclass
class Node:
    """A schema reduced to one form kind: string, number, integer, boolean, select, object, keyvalue, array,
    oneof or json.  ``schema`` is the resolved schema ($ref and single allOf merged in)."""

    kind: str
    schema: dict
    stack: tuple = ()  # the $refs expanded on the way here (cycle guard)
    nullable: bool = False
    problem: str | None = None
    options: list = _field(default_factory=list)  # select: [(value, title)]
    branches: list = _field(default_factory=list)  # oneof: [(title, schema)]


def _merge(base: Any, over: dict) -> dict:
    """``over`` on top of ``base``; properties and required are unioned, not replaced."""
    if base is False:
        return {**over, "not": {}}
    out = {**(base if isinstance(base, dict) else {}), **over}
    if isinstance(base, dict):
        if isinstance(base.get("properties"), dict) and isinstance(over.get("properties"), dict):
            out["properties"] = {**base["properties"], **over["properties"]}
        if isinstance(base.get("required"), list) and isinstance(over.get("required"), list):
            out["required"] = base["required"] + [r for r in over["required"] if r not in base["required"]]
    return out


def _follow(ref: Any, root: dict, stack: tuple) -> tuple[Any, str | None]:
    """The target of a local $ref, or a problem text.  Never fetches anything."""
    if not isinstance(ref, str):
        return None, "$ref is not a string"
    base = str(root.get("$id", "")).split("#")[0]
    if base and ref.startswith(base + "#"):
        ref = ref[len(base):]
    if not ref.startswith("#"):
        return None, f"remote $ref not fetched: {ref}"
    if stack.count(ref) >= MAX_REF_REPEAT:
        return None, f"recursive $ref {ref}: deeper levels are edited as JSON"
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        return None, f"$ref to an anchor is not supported: {ref}"
    target: Any = root
    try:
        for seg in fragment.split("/")[1:]:
            seg = unescape(seg)
            target = target[int(seg)] if isinstance(target, list) else target[seg]
    except (KeyError, IndexError, ValueError, TypeError):
        return None, f"unresolvable $ref: {ref}"
    return target, None


def _deref(schema: Any, root: dict) -> Any:
    """Follow $refs only (to peek at union alternatives)."""
    for _ in range(8):
        if not (isinstance(schema, dict) and "$ref" in schema):
            break
        target, problem = _follow(schema["$ref"], root, ())
        if problem:
            return {}
        schema = _merge(target, {k: v for k, v in schema.items() if k != "$ref"})
    return schema


def _is_null(s: Any) -> bool:
    return isinstance(s, dict) and (s.get("type") == "null" or s.get("enum") == [None] or
                                    ("const" in s and s["const"] is None))


def _const(s: Any) -> tuple[bool, Any]:
    if isinstance(s, dict) and "const" in s:
        return True, s["const"]
    if isinstance(s, dict) and isinstance(s.get("enum"), list) and len(s["enum"]) == 1:
        return True, s["enum"][0]
    return False, None


def properties_of(s: dict) -> dict:
    return s["properties"] if isinstance(s.get("properties"), dict) else {}


def required_names(s: dict) -> set:
    return {r for r in s["required"] if isinstance(r, str)} if isinstance(s.get("required"), list) else set()


def str_at(s: dict, key: str) -> str | None:
    return s[key] if isinstance(s.get(key), str) else None


def num_at(s: dict, key: str) -> int | float | None:
    v = s.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def title_of(value: Any) -> str:
    return value if isinstance(value, str) else dump(value)


def enum_titles(s: dict) -> list[str]:
    """A title per enum value: the legacy `enumNames` (elicitation's titled enums) when it names each one."""
    names = s.get("enumNames")
    if isinstance(names, list) and len(names) == len(s["enum"]) and all(isinstance(n, str) for n in names):
        return list(names)
    return [title_of(v) for v in s["enum"]]


def takes_no_arguments(schema: Any) -> bool:
    """A tool's inputSchema that lists no property and no schema for extra ones: the tool takes no arguments
    (the Python SDK writes `{"type": "object", "properties": {}, "title": "fArguments"}` for `def f()`)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    if any(k in schema for k in ("$ref", "allOf", "anyOf", "oneOf", "patternProperties") + UNSUPPORTED):
        return False
    extra = schema.get("additionalProperties")
    return not properties_of(schema) and not (isinstance(extra, dict) and extra)


def classify(schema: Any, root: dict, stack: tuple = ()) -> Node:
    """Reduce a schema to the one widget kind the form uses for it (the build and parse sides share this)."""
    nullable = False
    for _ in range(64):  # each round peels one $ref, allOf, type list or union layer
        if not isinstance(schema, dict):
            problem = "schema false: no value is valid" if schema is False else None
            return Node("json", {}, stack, nullable, problem)
        if "$ref" in schema:
            target, problem = _follow(schema["$ref"], root, stack)
            if problem:
                return Node("json", schema, stack, nullable, problem)
            stack = stack + (schema["$ref"],)
            schema = _merge(target, {k: v for k, v in schema.items() if k != "$ref"})
            continue
        if "allOf" in schema:
            parts = schema["allOf"]
            if not (isinstance(parts, list) and len(parts) == 1):
                return Node("json", schema, stack, nullable, "allOf of several schemas is edited as JSON")
            schema = _merge(parts[0], {k: v for k, v in schema.items() if k != "allOf"})
            continue
        bad = [k for k in UNSUPPORTED if k in schema]
        if isinstance(schema.get("items"), list):
            bad.append("items (tuple form)")
        if bad:
            return Node("json", schema, stack, nullable, f"{bad[0]} is not supported by the form")
        if isinstance(schema.get("enum"), list):
            return Node("select", schema, stack, nullable and None not in schema["enum"],
                        options=list(zip(schema["enum"], enum_titles(schema))))
        if "const" in schema:
            return Node("select", schema, stack, nullable, options=[(schema["const"], title_of(schema["const"]))])
        types = schema.get("type")
        if isinstance(types, list):
            real = [t for t in types if t != "null"]
            nullable = nullable or len(real) < len(types)
            if len(real) == 1:
                schema = {**schema, "type": real[0]}
                continue
            if not real:
                return Node("select", schema, stack, False, options=[(None, "null")])
            return Node("oneof", schema, stack, nullable, branches=[(t, {**schema, "type": t}) for t in real])
        unions = [k for k in ("oneOf", "anyOf") if k in schema]
        if unions:
            if len(unions) > 1 or not isinstance(schema[unions[0]], list):
                return Node("json", schema, stack, nullable, "oneOf together with anyOf is edited as JSON")
            rest = {k: v for k, v in schema.items() if k != unions[0]}
            shared = {k: v for k, v in rest.items() if k not in ANNOTATIONS}
            alts = [a for a in schema[unions[0]] if not _is_null(_deref(a, root))]
            nullable = nullable or len(alts) < len(schema[unions[0]])
            peeked = [p if isinstance(p, dict) else {} for p in (_deref(a, root) for a in alts)]
            if not alts:
                return Node("select", rest, stack, False, options=[(None, "null")])
            if all(_const(p)[0] for p in peeked) and set(shared) <= {"type"}:
                options = [(_const(p)[1], str_at(p, "title") or title_of(_const(p)[1])) for p in peeked]
                return Node("select", rest, stack, nullable, options=options)
            if len(alts) == 1:
                schema = _merge(alts[0], rest)  # Optional[X]: the outer title/default win over X's
                continue
            titles = [str_at(p, "title") or str_at(p, "type") or (str(a.get("$ref", "")).rsplit("/", 1)[-1]
                                                                  if isinstance(a, dict) else "") or f"Option {i + 1}"
                      for i, (a, p) in enumerate(zip(alts, peeked))]
            return Node("oneof", rest, stack, nullable,
                        branches=[(str(t), _merge(a, shared)) for t, a in zip(titles, alts)])
        kind = types or ("object" if "properties" in schema or "additionalProperties" in schema
                         else "array" if "items" in schema else None)
        if kind == "object":
            closed = properties_of(schema) or schema.get("additionalProperties") is False
            return Node("object" if closed else "keyvalue", schema, stack, nullable)
        if kind in ("array", "string", "number", "integer", "boolean"):
            return Node(kind, schema, stack, nullable)
        if kind == "null":
            return Node("select", schema, stack, False, options=[(None, "null")])
        return Node("json", schema, stack, nullable, None if kind is None else f"unknown type {kind!r}")
    return Node("json", schema, stack, nullable, "schema nested too deeply")
