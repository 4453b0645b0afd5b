"""Pure: JSON Schema → a tree of form `Field`s for the page to render, and the pairs a browser would submit.

Names follow the contract in the package docstring (inspector/protocol/forms/__init__.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field as _field
from typing import Any

from inspector.protocol import schemas
from inspector.protocol.forms.schema import (
    Node, classify, dump, num_at, properties_of, required_names, str_at, takes_no_arguments, title_of,
)
from inspector.protocol.forms.validate import local_schema
from inspector.protocol.json import ABSENT, escape, json_equal, pointer

INDEX = "~new"  # row placeholder in template keys ("~n" cannot come from escaping a property name)
LONG_TEXT = 80  # longer values get a multi-line box
TEXT_WIDGETS = ("text", "textarea", "email", "url", "date", "datetime")
CONTAINERS = ("object", "array", "multiselect", "keyvalue", "oneof")
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_UTC_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z", re.ASCII)  # what datetime-local can show


@dataclass(eq=False)
class Field:
    """One field of the form.  ``value``/``default`` are :data:`ABSENT` when absent (see ``has_value``)."""

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
    default: Any = ABSENT
    value: Any = ABSENT
    children: list = _field(default_factory=list)  # object: properties; array/keyvalue: rows; oneof: branches
    template: Field | None = None  # array/keyvalue: a blank row whose key ends in INDEX
    extra: Field | None = None  # object: a keyvalue Field for additionalProperties (same key as the object)
    branch_titles: list = _field(default_factory=list)
    chosen: int = 0
    index: int | None = None  # array row position
    kv_key: str | None = None  # key/value row: its key
    is_row: bool = False  # an array or key/value row (or its template): labelled by position, not the parent's name
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
    has_value = property(lambda self: self.value is not ABSENT)
    has_default = property(lambda self: self.default is not ABSENT)


class _Builder:
    def __init__(self, root: Any):
        self.root = root if isinstance(root, dict) else {}
        self._validator: Any = None

    def build(self, schema: Any, stack: tuple, path: tuple, key: str, label: str, required: bool, value: Any,
              use_defaults: bool) -> Field:
        """The Field for ``value`` (ABSENT: empty, or the schema's default when ``use_defaults``)."""
        node = classify(schema, self.root, stack)
        s = node.schema
        default = s.get("default", ABSENT)
        given = value is not ABSENT  # a given value (not a default) keeps its optional container included
        if value is ABSENT and use_defaults:
            # Optional[X] = None: leave it empty, so it is omitted rather than sent as null.
            value = ABSENT if default is None and not required else default
            if value is ABSENT and "const" in s:
                value = s["const"]
        examples = s.get("examples") if isinstance(s.get("examples"), list) else (
            [s["example"]] if "example" in s else [])
        f = Field(path, key, label, node.kind, title=str_at(s, "title"), description=str_at(s, "description"),
                  examples=examples, required=required, nullable=node.nullable, default=default, value=value,
                  problem=node.problem, format=str_at(s, "format"))
        if node.nullable and value is None:
            f.is_null, value = True, ABSENT
        if value is None and not any(v is None for v, _ in node.options) and node.kind != "json":
            self._as_json(f, value, "null does not fit the form")
        else:
            getattr(self, "_" + node.kind)(f, node, value, use_defaults)
        f.include_control = not required and (f.widget in CONTAINERS or (f.widget in TEXT_WIDGETS and value == ""))
        # Ticked whenever the value will be sent: given, or a default the form shows pre-filled (finding 21).
        f.present = f.include_control and value is not ABSENT and (
            given or (f.widget in ("array", "multiselect", "keyvalue") and bool(value)))  # rows are sent as shown
        return f

    def _as_json(self, f: Field, value: Any, problem: str | None = None) -> None:
        """Edit this subtree as JSON text (the schema, or the value, does not fit the form)."""
        f.widget, f.problem = "json", problem or f.problem
        f.input_value = "" if value is ABSENT else dump(value, indent=2)

    def _string(self, f: Field, node: Node, value: Any, _: bool) -> None:
        if not (value is ABSENT or isinstance(value, str)):
            return self._as_json(f, value, "the value is not a string")
        s, text = node.schema, value or ""
        f.min_length, f.max_length, f.pattern = num_at(s, "minLength"), num_at(s, "maxLength"), str_at(s, "pattern")
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

    def _number(self, f: Field, node: Node, value: Any, _: bool) -> None:
        if isinstance(value, bool) or not (value is ABSENT or isinstance(value, (int, float, str))):
            return self._as_json(f, value, "the value is not a number")
        s, integer = node.schema, node.kind == "integer"
        f.input_value = value if isinstance(value, str) else "" if value is ABSENT else dump(value)
        f.min, f.max = num_at(s, "minimum"), num_at(s, "maximum")
        low, high = num_at(s, "exclusiveMinimum"), num_at(s, "exclusiveMaximum")  # draft-04's booleans: ignored
        if low is not None:
            f.min = math.floor(low) + 1 if integer else low  # HTML bounds are inclusive
        if high is not None:
            f.max = math.ceil(high) - 1 if integer else high
        f.step = num_at(s, "multipleOf") or (1 if integer else "any")

    _integer = _number

    def _boolean(self, f: Field, node: Node, value: Any, _: bool) -> None:
        if not (value is ABSENT or isinstance(value, bool)):
            return self._as_json(f, value, "the value is not a boolean")
        if f.required:
            f.widget, f.checked = "checkbox", value is True
        else:
            f.widget, f.input_value = "tristate", "" if value is ABSENT else dump(value)

    def _select(self, f: Field, node: Node, value: Any, _: bool) -> None:
        f.options = [(dump(v), t) for v, t in node.options]
        if value is not ABSENT:
            text = _option_text(node.options, value)
            if text is None:  # keep the input; validation will flag it
                text = dump(value)
                f.options.append((text, f"{title_of(value)} (not allowed)"))
            f.selected, f.input_value = [text], text

    def _object(self, f: Field, node: Node, value: Any, use_defaults: bool) -> None:
        if not (value is ABSENT or isinstance(value, dict)):
            return self._as_json(f, value, "the value is not an object")
        s = node.schema
        props, required = properties_of(s), required_names(s)
        given = value if isinstance(value, dict) else {}
        inherit = use_defaults and value is ABSENT  # a given object says exactly what is set
        f.children = [self.build(sub, node.stack, f.path + (name,), f"{f.key}/{escape(name)}", name,
                                 name in required, given.get(name, ABSENT), inherit)
                      for name, sub in props.items()]
        extras = {k: v for k, v in given.items() if k not in props}
        if extras or isinstance(s.get("additionalProperties"), dict) and s["additionalProperties"]:
            f.extra = Field(f.path, f.key, f.label, "keyvalue")
            self._keyvalue(f.extra, node, extras, False)

    def _keyvalue(self, f: Field, node: Node, value: Any, use_defaults: bool) -> None:
        if not (value is ABSENT or isinstance(value, dict)):
            return self._as_json(f, value, "the value is not an object")
        sub = node.schema.get("additionalProperties")
        sub = sub if isinstance(sub, dict) else {}
        for n, (k, v) in enumerate((value or {}).items()):
            row = self.build(sub, node.stack, f.path + (k,), f"{f.key}/~kv/{n}", f.label, True, v, False)
            row.kv_key, row.is_row = k, True
            f.children.append(row)
        f.template = self.build(sub, node.stack, f.path + (INDEX,), f"{f.key}/~kv/{INDEX}", f.label, True,
                                ABSENT, True)
        f.template.kv_key, f.template.is_row = "", True

    def _array(self, f: Field, node: Node, value: Any, use_defaults: bool) -> None:
        if not (value is ABSENT or isinstance(value, list)):
            return self._as_json(f, value, "the value is not an array")
        s = node.schema
        f.min_items, f.max_items = num_at(s, "minItems"), num_at(s, "maxItems")
        items = s.get("items", {})
        item = classify(items, self.root, node.stack)
        if item.kind == "select" and not item.nullable:
            # A multi-select submits options in their own order, once each: only use it if that loses nothing.
            order = [dump(v) for v, _t in item.options]
            chosen = [_option_text(item.options, v) or dump(v) for v in value or []]
            if all(c in order for c in chosen) and chosen == sorted(set(chosen), key=order.index):
                f.widget, f.options, f.selected = "multiselect", [(dump(v), t) for v, t in item.options], chosen
                return
        for i, v in enumerate(value or []):
            row = self.build(items, node.stack, f.path + (i,), f"{f.key}/{i}", f.label, True, v, False)
            row.index, row.is_row = i, True
            f.children.append(row)
        f.template = self.build(items, node.stack, f.path + (INDEX,), f"{f.key}/{INDEX}", f.label, True, ABSENT,
                                True)
        f.template.is_row = True

    def _oneof(self, f: Field, node: Node, value: Any, use_defaults: bool) -> None:
        chosen = 0 if value is ABSENT else self._choose(node, value)
        if chosen is None:
            return self._as_json(f, value, "the value matches no branch")
        f.chosen, f.branch_titles = chosen, [t for t, _s in node.branches]
        for i, (_t, branch) in enumerate(node.branches):
            mine = i == chosen
            child = self.build(branch, node.stack, f.path, f"{f.key}/@{i}", f.label, f.required,
                               value if mine else ABSENT, use_defaults if mine else True)
            child.include_control = child.present = False  # the union's own control covers its branches
            f.children.append(child)

    def _choose(self, node: Node, value: Any) -> int | None:
        """The branch for a value: one it validates against whose kind matches its JSON type (0.0 goes to a
        number branch, not an integer one), else any it validates against, else the first that fits."""
        kinds = {bool: ("boolean",), str: ("string",), int: ("integer", "number"), float: ("number",),
                 list: ("array",), dict: ("object", "keyvalue")}.get(type(value), ()) + ("select", "json")
        fitting = [i for i, (_t, b) in enumerate(node.branches) if classify(b, self.root, node.stack).kind in kinds]
        valid = [i for i, (_t, b) in enumerate(node.branches) if self._valid(b, value)]
        return next((i for i in valid if i in fitting), valid[0] if valid else fitting[0] if fitting else None)

    def _valid(self, branch: Any, value: Any) -> bool:
        if self._validator is None:  # one validator for the root, so a branch's local $refs resolve against it
            self._validator = schemas.validator(local_schema(self.root))
        if isinstance(self._validator, schemas.SchemaProblem):
            return False  # a server's schema can be anything; it just does not help choose
        return schemas.errors(self._validator.evolve(schema=branch), value) == []

    def _json(self, f: Field, node: Node, value: Any, _: bool) -> None:
        self._as_json(f, value)


def _option_text(options: list, value: Any) -> str | None:
    """The option text a value selects (1.0 selects the option 1: one JSON number), or None when none fits."""
    return next((dump(v) for v, _t in options if json_equal(v, value)), None)


def build_form(schema: dict, values: Any | None = None) -> Field:
    """The form for ``schema``; pre-filled from ``values`` (the arguments) if given, else from defaults."""
    if takes_no_arguments(schema) and not values:
        return Field((), "", "arguments", "object", required=True)  # no field at all: just Call
    b = _Builder(schema)
    given = values is not None
    root = b.build(schema, (), (), "", "arguments", True, values if given else ABSENT, not given)
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
