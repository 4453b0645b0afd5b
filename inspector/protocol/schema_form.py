"""JSON Schema → form fields, and a submitted form → typed tool arguments (pure functions, no Flask).

``build_form(schema, values)`` turns a tool's ``inputSchema`` into a tree of :class:`Field`; the page renders
it.  ``arguments_from_form(schema, pairs)`` turns the urlencoded pairs the browser posts back into typed JSON
arguments; ``validate(schema, arguments)`` checks them with jsonschema and keys each error by the field's
JSON pointer.  ``default_pairs(field)`` emits what a browser would submit for a pre-filled form.

Form names.  Every field has a *form key*: the JSON pointer of its value ("/size/width", "/tags/0"), except
that a ``oneOf``/``anyOf`` branch adds a segment ``@<i>`` ("/pet/@1/name": branch 1 of /pet) and
key/value rows live under ``~kv`` ("/env/~kv/0").  ``~kv`` cannot be an escaped property name (JSON pointer
escapes only make ``~0`` and ``~1``), and ``@<i>`` only follows a union's key, so names are never ambiguous.
Inputs are named ``<control>:<key>``:

    f:K        the value: text as typed, checkbox "true", select/multiselect options as JSON text
    set:K      optional boolean: "" (unset), "true" or "false"
    json:K     JSON text of a subtree the form cannot express (or whose value does not fit the form)
    null:K     "1" when the explicit null choice is selected (wins over everything under K)
    present:K  "1" to include an optional object/array/union (or an empty string) even when it looks empty
    branch:K   index of the chosen union branch
    row:K/N    one (empty) marker per array or key/value row, so a row with nothing submitted still exists
    kv-key:K/~kv/N   the key of a key/value row; its value is the field at key K/~kv/N

Rows are taken in the order their names first appear, so N may have gaps or be out of order (reordering
moves DOM nodes, it does not rename them).  A row template's key ends in ``~new`` (:data:`INDEX`): to add a
row, clone it and replace that key, wherever it starts a name, with the same key ending in a fresh number.
Names containing ``~new`` are ignored (a template nested in a clone stays a template).

After a POST, re-render with ``build_form(schema, result.arguments)``: rows are renumbered 0..n-1, so each
field's ``pointer`` matches the keys of ``validate()`` and of ``FormResult.errors``.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass, field as _field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

import referencing
import referencing.jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, UnknownType
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable


class _Missing:
    """No value at all (the property is absent), as opposed to JSON null."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
INDEX = "~new"  # row placeholder in template keys ("~n" cannot come from escaping a property name)
MAX_REF_REPEAT = 3  # a recursive $ref is expanded this many times on one path, then edited as JSON
LONG_TEXT = 80  # longer values get a multi-line box
TEXT_WIDGETS = ("text", "textarea", "email", "url", "date", "datetime")
CONTAINERS = ("object", "array", "multiselect", "keyvalue", "oneof")
# Keys that describe a value; the rest constrain it (and are shared by union branches).
ANNOTATIONS = {"title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
               "writeOnly", "$schema", "$id", "$defs", "definitions", "discriminator"}
UNSUPPORTED = ("not", "if", "then", "else", "patternProperties", "dependentSchemas", "prefixItems", "$dynamicRef",
               "$recursiveRef", "unevaluatedItems")
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_UTC_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z", re.ASCII)  # what datetime-local can show
_LOCAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?", re.ASCII)  # what datetime-local submits


def escape(segment: Any) -> str:
    """One JSON pointer segment."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def pointer(path: tuple | list) -> str:
    """The JSON pointer of a data path: () → "", ("a", 0) → "/a/0"."""
    return "".join("/" + escape(p) for p in path)


def _dump(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, types included (1, 1.0 and True differ)."""
    if a is MISSING or b is MISSING:
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# --- schema classification ---------------------------------------------------------------------------------


@dataclass
class _Node:
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
            seg = seg.replace("~1", "/").replace("~0", "~")
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


def _props(s: dict) -> dict:
    return s["properties"] if isinstance(s.get("properties"), dict) else {}


def _required(s: dict) -> set:
    return {r for r in s["required"] if isinstance(r, str)} if isinstance(s.get("required"), list) else set()


def _str(s: dict, key: str) -> str | None:
    return s[key] if isinstance(s.get(key), str) else None


def _num(s: dict, key: str) -> int | float | None:
    v = s.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _title(value: Any) -> str:
    return value if isinstance(value, str) else _dump(value)


def _classify(schema: Any, root: dict, stack: tuple = ()) -> _Node:
    """Reduce a schema to the one widget kind the form uses for it (the build and parse sides share this)."""
    nullable = False
    for _ in range(64):  # each round peels one $ref, allOf, type list or union layer
        if not isinstance(schema, dict):
            problem = "schema false: no value is valid" if schema is False else None
            return _Node("json", {}, stack, nullable, problem)
        if "$ref" in schema:
            target, problem = _follow(schema["$ref"], root, stack)
            if problem:
                return _Node("json", schema, stack, nullable, problem)
            stack = stack + (schema["$ref"],)
            schema = _merge(target, {k: v for k, v in schema.items() if k != "$ref"})
            continue
        if "allOf" in schema:
            parts = schema["allOf"]
            if not (isinstance(parts, list) and len(parts) == 1):
                return _Node("json", schema, stack, nullable, "allOf of several schemas is edited as JSON")
            schema = _merge(parts[0], {k: v for k, v in schema.items() if k != "allOf"})
            continue
        bad = [k for k in UNSUPPORTED if k in schema]
        if isinstance(schema.get("items"), list):
            bad.append("items (tuple form)")
        if bad:
            return _Node("json", schema, stack, nullable, f"{bad[0]} is not supported by the form")
        if isinstance(schema.get("enum"), list):
            return _Node("select", schema, stack, nullable and None not in schema["enum"],
                         options=[(v, _title(v)) for v in schema["enum"]])
        if "const" in schema:
            return _Node("select", schema, stack, nullable, options=[(schema["const"], _title(schema["const"]))])
        types = schema.get("type")
        if isinstance(types, list):
            real = [t for t in types if t != "null"]
            nullable = nullable or len(real) < len(types)
            if len(real) == 1:
                schema = {**schema, "type": real[0]}
                continue
            if not real:
                return _Node("select", schema, stack, False, options=[(None, "null")])
            return _Node("oneof", schema, stack, nullable, branches=[(t, {**schema, "type": t}) for t in real])
        unions = [k for k in ("oneOf", "anyOf") if k in schema]
        if unions:
            if len(unions) > 1 or not isinstance(schema[unions[0]], list):
                return _Node("json", schema, stack, nullable, "oneOf together with anyOf is edited as JSON")
            rest = {k: v for k, v in schema.items() if k != unions[0]}
            shared = {k: v for k, v in rest.items() if k not in ANNOTATIONS}
            alts = [a for a in schema[unions[0]] if not _is_null(_deref(a, root))]
            nullable = nullable or len(alts) < len(schema[unions[0]])
            peeked = [p if isinstance(p, dict) else {} for p in (_deref(a, root) for a in alts)]
            if not alts:
                return _Node("select", rest, stack, False, options=[(None, "null")])
            if all(_const(p)[0] for p in peeked) and set(shared) <= {"type"}:
                options = [(_const(p)[1], _str(p, "title") or _title(_const(p)[1])) for p in peeked]
                return _Node("select", rest, stack, nullable, options=options)
            if len(alts) == 1:
                schema = _merge(alts[0], rest)  # Optional[X]: the outer title/default win over X's
                continue
            titles = [_str(p, "title") or _str(p, "type") or (str(a.get("$ref", "")).rsplit("/", 1)[-1]
                                                             if isinstance(a, dict) else "") or f"Option {i + 1}"
                      for i, (a, p) in enumerate(zip(alts, peeked))]
            return _Node("oneof", rest, stack, nullable,
                         branches=[(str(t), _merge(a, shared)) for t, a in zip(titles, alts)])
        kind = types or ("object" if "properties" in schema or "additionalProperties" in schema
                         else "array" if "items" in schema else None)
        if kind == "object":
            return _Node("object" if _props(schema) or schema.get("additionalProperties") is False else "keyvalue",
                         schema, stack, nullable)
        if kind in ("array", "string", "number", "integer", "boolean"):
            return _Node(kind, schema, stack, nullable)
        if kind == "null":
            return _Node("select", schema, stack, False, options=[(None, "null")])
        return _Node("json", schema, stack, nullable, None if kind is None else f"unknown type {kind!r}")
    return _Node("json", schema, stack, nullable, "schema nested too deeply")


# --- schema → fields ---------------------------------------------------------------------------------------


@dataclass(eq=False)
class Field:
    """One field of the form.  ``value``/``default`` are :data:`MISSING` when absent (see ``has_value``)."""

    path: tuple  # where the value goes in the arguments: property names and array indexes
    key: str  # form key (module docstring); inputs are named "<control>:<key>"
    label: str  # the property name (array rows, branches and key/value rows: their parent's)
    widget: str
    title: str | None = None
    description: str | None = None
    examples: list = _field(default_factory=list)
    required: bool = False
    nullable: bool = False  # offer an explicit null choice (checkbox named null_name)
    is_null: bool = False  # ... and it is selected
    include_control: bool = False  # optional field that can look empty: offer a checkbox named present_name
    present: bool = False  # ... and it is checked
    options: list = _field(default_factory=list)  # select/multiselect: [(value as JSON text, title)]
    selected: list = _field(default_factory=list)  # select/multiselect: the selected options' JSON text
    checked: bool = False  # checkbox
    input_value: str = ""  # text for the value attribute (text widgets, number, tristate, select, json)
    format: str | None = None
    min: Any = None
    max: Any = None
    step: Any = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: Any = MISSING
    value: Any = MISSING
    children: list = _field(default_factory=list)  # object: properties; array/keyvalue: rows; oneof: branches
    template: Field | None = None  # array/keyvalue: a blank row whose key ends in INDEX
    extra: Field | None = None  # object: a keyvalue Field for additionalProperties (same key as the object)
    branch_titles: list = _field(default_factory=list)
    chosen: int = 0
    index: int | None = None  # array row position
    kv_key: str | None = None  # key/value row: its key
    problem: str | None = None  # why this subtree is edited as JSON

    @property
    def pointer(self) -> str:
        """The JSON pointer validation errors are keyed by."""
        return pointer(self.path)

    @property
    def name(self) -> str:
        """The name of the field's own input ("" for object, array, keyvalue)."""
        prefix = {"tristate": "set:", "json": "json:", "oneof": "branch:"}.get(self.widget, "f:")
        return "" if self.widget in ("object", "array", "keyvalue") else prefix + self.key

    null_name = property(lambda self: "null:" + self.key)
    present_name = property(lambda self: "present:" + self.key)
    row_name = property(lambda self: "row:" + self.key)
    kv_key_name = property(lambda self: "kv-key:" + self.key)
    has_value = property(lambda self: self.value is not MISSING)
    has_default = property(lambda self: self.default is not MISSING)


class _Builder:
    def __init__(self, root: Any):
        self.root = root if isinstance(root, dict) else {}
        self._validator: Any = None

    def build(self, schema: Any, stack: tuple, path: tuple, key: str, label: str, required: bool, value: Any,
              use_defaults: bool) -> Field:
        """The Field for ``value`` (MISSING: empty, or the schema's default when ``use_defaults``)."""
        node = _classify(schema, self.root, stack)
        s = node.schema
        default = s.get("default", MISSING)
        given = value is not MISSING  # a given value (not a default) keeps its optional container included
        if value is MISSING and use_defaults:
            # Optional[X] = None: leave it empty, so it is omitted rather than sent as null.
            value = MISSING if default is None and not required else default
            if value is MISSING and "const" in s:
                value = s["const"]
        examples = s.get("examples") if isinstance(s.get("examples"), list) else (
            [s["example"]] if "example" in s else [])
        f = Field(path, key, label, node.kind, title=_str(s, "title"), description=_str(s, "description"),
                  examples=examples, required=required, nullable=node.nullable, default=default, value=value,
                  problem=node.problem, format=_str(s, "format"))
        if node.nullable and value is None:
            f.is_null, value = True, MISSING
        if value is None and not any(v is None for v, _ in node.options) and node.kind != "json":
            self._as_json(f, value, "null does not fit the form")
        else:
            getattr(self, "_" + node.kind)(f, node, value, use_defaults)
        f.include_control = not required and (f.widget in CONTAINERS or (f.widget in TEXT_WIDGETS and value == ""))
        f.present = f.include_control and given and value is not MISSING
        return f

    def _as_json(self, f: Field, value: Any, problem: str | None = None) -> None:
        """Edit this subtree as JSON text (the schema, or the value, does not fit the form)."""
        f.widget, f.problem = "json", problem or f.problem
        f.input_value = "" if value is MISSING else _dump(value, indent=2)

    def _string(self, f: Field, node: _Node, value: Any, _: bool) -> None:
        if not (value is MISSING or isinstance(value, str)):
            return self._as_json(f, value, "the value is not a string")
        s, text = node.schema, value or ""
        f.min_length, f.max_length, f.pattern = _num(s, "minLength"), _num(s, "maxLength"), _str(s, "pattern")
        f.input_value, fmt = text, f.format
        stripped = text == text.strip()  # email and url inputs trim what they submit
        if "\n" in text or "\r" in text or len(text) > LONG_TEXT or "contentMediaType" in s or (
                isinstance(f.max_length, int) and f.max_length > 255):
            f.widget = "textarea"
        elif fmt in ("email", "idn-email") and stripped:
            f.widget = "email"
        elif fmt in ("uri", "iri", "url") and stripped:
            f.widget = "url"
        elif fmt == "date" and (not text or _DATE.fullmatch(text)):
            f.widget = "date"
        elif fmt == "date-time" and (not text or _UTC_TIME.fullmatch(text)):
            f.widget, f.input_value = "datetime", text[:-1]  # datetime-local shows no zone; read back as UTC
        else:
            f.widget = "text"

    def _number(self, f: Field, node: _Node, value: Any, _: bool) -> None:
        if isinstance(value, bool) or not (value is MISSING or isinstance(value, (int, float, str))):
            return self._as_json(f, value, "the value is not a number")
        s, integer = node.schema, node.kind == "integer"
        f.input_value = value if isinstance(value, str) else "" if value is MISSING else _dump(value)
        f.min, f.max = _num(s, "minimum"), _num(s, "maximum")
        low, high = _num(s, "exclusiveMinimum"), _num(s, "exclusiveMaximum")  # draft-04's booleans: ignored
        if low is not None:
            f.min = math.floor(low) + 1 if integer else low  # HTML bounds are inclusive
        if high is not None:
            f.max = math.ceil(high) - 1 if integer else high
        f.step = _num(s, "multipleOf") or (1 if integer else "any")

    _integer = _number

    def _boolean(self, f: Field, node: _Node, value: Any, _: bool) -> None:
        if not (value is MISSING or isinstance(value, bool)):
            return self._as_json(f, value, "the value is not a boolean")
        if f.required:
            f.widget, f.checked = "checkbox", value is True
        else:
            f.widget, f.input_value = "tristate", "" if value is MISSING else _dump(value)

    def _select(self, f: Field, node: _Node, value: Any, _: bool) -> None:
        f.options = [(_dump(v), t) for v, t in node.options]
        if value is not MISSING:
            if not any(_same(v, value) for v, _t in node.options):  # keep the input; validation will flag it
                f.options.append((_dump(value), f"{_title(value)} (not allowed)"))
            f.selected, f.input_value = [_dump(value)], _dump(value)

    def _object(self, f: Field, node: _Node, value: Any, use_defaults: bool) -> None:
        if not (value is MISSING or isinstance(value, dict)):
            return self._as_json(f, value, "the value is not an object")
        s = node.schema
        props, required = _props(s), _required(s)
        given = value if isinstance(value, dict) else {}
        inherit = use_defaults and value is MISSING  # a given object says exactly what is set
        f.children = [self.build(sub, node.stack, f.path + (name,), f"{f.key}/{escape(name)}", name,
                                 name in required, given.get(name, MISSING), inherit)
                      for name, sub in props.items()]
        extras = {k: v for k, v in given.items() if k not in props}
        if extras or isinstance(s.get("additionalProperties"), dict) and s["additionalProperties"]:
            f.extra = Field(f.path, f.key, f.label, "keyvalue")
            self._keyvalue(f.extra, node, extras, False)

    def _keyvalue(self, f: Field, node: _Node, value: Any, use_defaults: bool) -> None:
        if not (value is MISSING or isinstance(value, dict)):
            return self._as_json(f, value, "the value is not an object")
        sub = node.schema.get("additionalProperties")
        sub = sub if isinstance(sub, dict) else {}
        for n, (k, v) in enumerate((value or {}).items()):
            row = self.build(sub, node.stack, f.path + (k,), f"{f.key}/~kv/{n}", f.label, True, v, False)
            row.kv_key = k
            f.children.append(row)
        f.template = self.build(sub, node.stack, f.path + (INDEX,), f"{f.key}/~kv/{INDEX}", f.label, True,
                                MISSING, True)
        f.template.kv_key = ""

    def _array(self, f: Field, node: _Node, value: Any, use_defaults: bool) -> None:
        if not (value is MISSING or isinstance(value, list)):
            return self._as_json(f, value, "the value is not an array")
        s = node.schema
        f.min_items, f.max_items = _num(s, "minItems"), _num(s, "maxItems")
        items = s.get("items", {})
        item = _classify(items, self.root, node.stack)
        if item.kind == "select" and not item.nullable:
            # A multi-select submits options in their own order, once each: only use it if that loses nothing.
            order = [_dump(v) for v, _t in item.options]
            chosen = [_dump(v) for v in value or []]
            if all(c in order for c in chosen) and chosen == sorted(set(chosen), key=order.index):
                f.widget, f.options, f.selected = "multiselect", [(_dump(v), t) for v, t in item.options], chosen
                return
        for i, v in enumerate(value or []):
            row = self.build(items, node.stack, f.path + (i,), f"{f.key}/{i}", f.label, True, v, False)
            row.index = i
            f.children.append(row)
        f.template = self.build(items, node.stack, f.path + (INDEX,), f"{f.key}/{INDEX}", f.label, True, MISSING,
                                True)

    def _oneof(self, f: Field, node: _Node, value: Any, use_defaults: bool) -> None:
        chosen = 0 if value is MISSING else self._choose(node, value)
        if chosen is None:
            return self._as_json(f, value, "the value matches no branch")
        f.chosen, f.branch_titles = chosen, [t for t, _s in node.branches]
        for i, (_t, branch) in enumerate(node.branches):
            mine = i == chosen
            child = self.build(branch, node.stack, f.path, f"{f.key}/@{i}", f.label, f.required,
                               value if mine else MISSING, use_defaults if mine else True)
            child.include_control = child.present = False  # the union's own control covers its branches
            f.children.append(child)

    def _choose(self, node: _Node, value: Any) -> int | None:
        """The branch for a value: one it validates against whose kind matches its JSON type (0.0 goes to a
        number branch, not an integer one), else any it validates against, else the first that fits."""
        kinds = {bool: ("boolean",), str: ("string",), int: ("integer", "number"), float: ("number",),
                 list: ("array",), dict: ("object", "keyvalue")}.get(type(value), ()) + ("select", "json")
        fitting = [i for i, (_t, b) in enumerate(node.branches) if _classify(b, self.root, node.stack).kind in kinds]
        valid = [i for i, (_t, b) in enumerate(node.branches) if self._valid(b, value)]
        return next((i for i in valid if i in fitting), valid[0] if valid else fitting[0] if fitting else None)

    def _valid(self, branch: Any, value: Any) -> bool:
        try:
            if self._validator is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    cls = validator_for(self.root, default=Draft202012Validator)
                self._validator = cls(self.root, registry=_LOCAL_ONLY)
            return self._validator.evolve(schema=branch).is_valid(value)
        except Exception:  # noqa: BLE001  (a server's schema can be anything; it just does not help choose)
            return False

    def _json(self, f: Field, node: _Node, value: Any, _: bool) -> None:
        self._as_json(f, value)


def build_form(schema: dict, values: Any | None = None) -> Field:
    """The form for ``schema``; pre-filled from ``values`` (the arguments) if given, else from defaults."""
    b = _Builder(schema)
    given = values is not None
    root = b.build(schema, (), (), "", "arguments", True, values if given else MISSING, not given)
    return root


def form_from_arguments(schema: dict, arguments: dict) -> Field:
    """JSON → form (the "JSON" toggle): exactly these arguments, no defaults added."""
    return build_form(schema, arguments if arguments is not None else {})


def _emit(f: Field, out: list) -> None:
    if f.include_control and f.present:
        out.append((f.present_name, "1"))
    if f.is_null:
        out.append((f.null_name, "1"))  # the inner inputs still get submitted; null wins over them
    w = f.widget
    if w in TEXT_WIDGETS + ("number", "integer", "tristate", "select", "json"):
        out.append((f.name, f.input_value))
    elif w == "checkbox" and f.checked:
        out.append((f.name, "true"))
    elif w == "multiselect":
        out.extend((f.name, v) for v in f.selected)
    elif w == "oneof":
        out.append((f.name, str(f.chosen)))
    for child in f.children:
        if w in ("array", "keyvalue"):
            out.append((child.row_name, ""))
        if child.kv_key is not None:
            out.append((child.kv_key_name, child.kv_key))
        _emit(child, out)
    if f.extra is not None:
        _emit(f.extra, out)


def default_pairs(field: Field) -> list[tuple[str, str]]:
    """The (name, value) pairs a browser submits for this form as pre-filled, in document order."""
    out: list = []
    _emit(field, out)
    return out


# --- form → arguments --------------------------------------------------------------------------------------


@dataclass
class FormResult:
    arguments: Any  # a dict for object schemas
    errors: dict  # JSON pointer → messages, for input that could not be converted (kept as typed in arguments)


class _Form:
    """The submitted pairs: first value by name, all values by name, and row order."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.names: list[str] = []
        self.values: dict[str, list[str]] = {}
        for name, value in pairs:
            if INDEX in name:  # a row template that was submitted by mistake
                continue
            self.names.append(name)
            self.values.setdefault(name, []).append(value)

    def get(self, name: str) -> str | None:
        return self.values[name][0] if name in self.values else None

    def rows(self, key: str) -> list[str]:
        """Row ids under ``key``, in the order they first appear."""
        found: dict[str, None] = {}
        for name in self.names:
            k = name.partition(":")[2]
            if k.startswith(key + "/"):
                seg = k[len(key) + 1:].split("/", 1)[0]
                if seg.isascii() and seg.isdigit():
                    found.setdefault(seg)
        return list(found)


def _to_number(text: str, integer: bool) -> int | float:
    if re.fullmatch(r"[+-]?\d+", text, re.ASCII):
        return int(text)
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not {'an integer' if integer else 'a number'}") from None
    if not d.is_finite() or d.adjusted() > 308:
        raise ValueError(f"{text!r} is out of range")
    if integer:
        if d != d.to_integral_value():
            raise ValueError(f"{text!r} is not an integer")
        return int(d)
    return float(text)


class _Parser:
    def __init__(self, root: Any, form: _Form):
        self.root = root if isinstance(root, dict) else {}
        self.form = form
        self.errors: dict[str, list[str]] = {}

    def error(self, path: tuple, message: str) -> None:
        self.errors.setdefault(pointer(path), []).append(message)

    def parse(self, schema: Any, stack: tuple, key: str, path: tuple, required: bool,
              present: bool = False) -> tuple[Any, bool]:
        """(value or MISSING, touched): touched means it differs from what an untouched form would send, which
        decides whether an optional object that looks empty is omitted."""
        node = _classify(schema, self.root, stack)
        present = present or self.form.get("present:" + key) == "1"
        default = node.schema.get("default", MISSING)
        if node.nullable and self.form.get("null:" + key) == "1":
            return None, not _same(None, default)
        if node.kind == "json" or "json:" + key in self.form.values:
            return self._json(key, path, default)
        return getattr(self, "_" + node.kind)(node, key, path, required, present, default)

    def _json(self, key: str, path: tuple, default: Any) -> tuple[Any, bool]:
        text = self.form.get("json:" + key) or ""
        if not text.strip():
            return MISSING, False
        try:
            value = json.loads(text)
        except ValueError as e:
            self.error(path, f"invalid JSON: {e}")
            return text, True
        return value, not _same(value, default)

    def _string(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = (self.form.get("f:" + key) or "").replace("\r\n", "\n")  # browsers send textarea lines as CRLF
        if text == "" and not (required or present):
            return MISSING, False
        if node.schema.get("format") == "date-time" and _LOCAL_TIME.fullmatch(text):
            text += (":00" if len(text) == 16 else "") + "Z"  # a datetime-local input: read as UTC
        return text, text != "" and not _same(text, default)  # an empty box is never a change

    def _number(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = (self.form.get("f:" + key) or "").strip()
        if not text:
            return MISSING, False  # a required one is reported by validation, beside the field
        try:
            value = _to_number(text, node.kind == "integer")
        except ValueError as e:
            self.error(path, str(e))
            return text, True  # "Send anyway" sends what was typed
        return value, not _same(value, default)

    _integer = _number

    def _boolean(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        state = self.form.get("set:" + key)
        if state is not None:  # tristate: choosing true or false is deliberate, so it counts as touched
            if state not in ("true", "false"):
                return MISSING, False
            return state == "true", not _same(state == "true", default)
        if not required and "f:" + key not in self.form.values:
            return MISSING, False
        value = self.form.get("f:" + key) in ("true", "on", "1")  # "on": a checkbox without a value attribute
        return value, not _same(value, False if default is MISSING else default)

    def _select(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = self.form.get("f:" + key) or ""
        if not text:
            return MISSING, False
        try:
            value = json.loads(text)
        except ValueError:
            self.error(path, f"{text!r} is not one of the choices")
            return text, True
        return value, not _same(value, default)

    def _object(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        saved = {k: list(v) for k, v in self.errors.items()}
        s, out, touched = node.schema, {}, False
        props, needed = _props(s), _required(s)
        for name, sub in props.items():
            value, t = self.parse(sub, node.stack, f"{key}/{escape(name)}", path + (name,), name in needed)
            if value is not MISSING:
                out[name] = value
            touched = touched or t
        touched = self._rows_kv(node, key, path, out) or touched
        if not (required or present or touched):
            self.errors = saved  # an untouched optional object is omitted, with whatever its fields said
            return MISSING, False
        return out, touched

    def _keyvalue(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        out: dict = {}
        self._rows_kv(node, key, path, out)
        if not (out or required or present):
            return MISSING, False
        return out, not _same(out, {} if default is MISSING else default)

    def _rows_kv(self, node: _Node, key: str, path: tuple, out: dict) -> bool:
        """Add the key/value rows under ``key`` to ``out``; True if there were any."""
        sub = node.schema.get("additionalProperties")
        sub = sub if isinstance(sub, dict) else {}
        any_row = False
        for seg in self.form.rows(key + "/~kv"):
            row = f"{key}/~kv/{seg}"
            name = self.form.get("kv-key:" + row) or ""
            value, _t = self.parse(sub, node.stack, row, path + (name,), True)
            if name == "":
                if value not in (MISSING, ""):
                    self.error(path, f"a value without a key: {_dump(value)}")
                continue
            if name in out:
                self.error(path + (name,), f"duplicate key {name!r}")
                continue
            if value is MISSING:
                self.error(path + (name,), "no value")
                value = None
            out[name], any_row = value, True
        return any_row

    def _array(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        items = node.schema.get("items", {})
        rows = self.form.rows(key)
        if rows:
            out = []
            for seg in rows:
                value, _t = self.parse(items, node.stack, f"{key}/{seg}", path + (len(out),), True)
                if value is MISSING:
                    self.error(path + (len(out),), "empty item: fill it in or remove it")
                    value = None
                out.append(value)
        else:  # a multi-select, or no rows at all
            out = []
            for text in self.form.values.get("f:" + key, []):
                try:
                    out.append(json.loads(text))
                except ValueError:
                    self.error(path + (len(out),), f"{text!r} is not one of the choices")
                    out.append(text)
        if not (out or required or present):
            return MISSING, False
        return out, not _same(out, [] if default is MISSING else default)

    def _oneof(self, node: _Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = self.form.get("branch:" + key) or "0"
        chosen = int(text) if text.isascii() and text.isdigit() and int(text) < len(node.branches) else 0
        return self.parse(node.branches[chosen][1], node.stack, f"{key}/@{chosen}", path, required, present)


def arguments_from_form(schema: dict, pairs: list[tuple[str, str]]) -> FormResult:
    """Typed arguments from the submitted pairs.  Optional fields left empty are omitted; input that cannot be
    converted is kept as typed and reported in ``errors`` (keyed by JSON pointer)."""
    parser = _Parser(schema, _Form(pairs))
    value, _touched = parser.parse(schema, (), "", (), True)
    return FormResult({} if value is MISSING else value, parser.errors)


# --- validation --------------------------------------------------------------------------------------------


def _no_fetch(uri: str) -> referencing.Resource:
    """Remote $refs are never fetched: they validate as "anything", and the form edits them as JSON."""
    return referencing.Resource.from_contents({}, default_specification=referencing.jsonschema.DRAFT202012)


_LOCAL_ONLY = referencing.Registry(retrieve=_no_fetch)


def _without_remote_refs(schema: Any, base: str) -> Any:
    """A copy of the schema where each remote $ref accepts anything (its document is never fetched)."""
    if isinstance(schema, list):
        return [_without_remote_refs(s, base) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _without_remote_refs(v, base) for k, v in schema.items() if k not in ("enum", "const", "default",
                                                                                 "examples")}
    out.update({k: schema[k] for k in ("enum", "const", "default", "examples") if k in schema})
    ref = schema.get("$ref")
    if isinstance(ref, str) and not (ref.startswith("#") or (base and ref.startswith(base + "#"))):
        del out["$ref"]
    return out


def _entries(err: Any) -> Any:
    """(path, message) for an error, looking inside anyOf/oneOf for the one branch the value was meant for."""
    path = list(err.absolute_path)
    if err.validator in ("anyOf", "oneOf") and err.context:
        groups: dict = {}
        for e in err.context:
            groups.setdefault(e.relative_schema_path[0] if e.relative_schema_path else None, []).append(e)
        # A branch whose type or discriminator (a const/enum just below) does not match was not meant.
        meant = [es for es in groups.values() if not any(
            (e.validator == "type" and not e.relative_path) or
            (e.validator in ("const", "enum") and len(e.relative_path) == 1) for e in es)]
        if len(meant) == 1:
            for e in meant[0]:
                yield from _entries(e)
            return
        expected = [e.validator_value for es in groups.values() for e in es if e.validator == "type" and
                    not e.relative_path]
        if len(expected) == len(groups):
            yield path, f"{err.instance!r} is not of type " + " or ".join(map(repr, expected))
            return
    if err.validator == "required" and isinstance(err.instance, dict):
        for name in err.validator_value:
            if name not in err.instance and err.message == f"{name!r} is a required property":
                yield path + [name], err.message
                return
    yield path, err.message


def validate(schema: dict, arguments: Any) -> dict[str, list[str]]:
    """jsonschema errors by JSON pointer of the field ("" for the whole form).  The dialect is the one
    ``$schema`` names (2020-12 if none); formats are checked; only local $refs are resolved."""
    out: dict[str, list[str]] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an unknown $schema falls back to 2020-12
            cls = validator_for(schema, default=Draft202012Validator)
        base = str(schema.get("$id", "")).split("#")[0] if isinstance(schema, dict) else ""
        schema = _without_remote_refs(schema, base)
        cls.check_schema(schema)  # a malformed schema is reported, not crashed on
        validator = cls(schema, registry=_LOCAL_ONLY, format_checker=cls.FORMAT_CHECKER)
        errors = list(validator.iter_errors(arguments))
    except (Unresolvable, SchemaError, UnknownType) as e:
        return {"": [f"the schema could not be checked: {e}"]}
    for err in errors:
        for path, message in _entries(err):
            messages = out.setdefault(pointer(path), [])
            if message not in messages:
                messages.append(message)
    return out
