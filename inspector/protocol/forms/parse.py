"""Pure: the urlencoded pairs a form posts → typed tool arguments, plus what could not be converted.

Reads the names build.py writes (the contract is in the package docstring); a field is classified the same way on
both sides (schema.classify), so what was rendered is what is read back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from inspector.protocol.forms.build import INDEX
from inspector.protocol.forms.schema import Node, classify, dump, properties_of, required_names
from inspector.protocol.json import ABSENT, escape, json_equal, loads, pointer

_LOCAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?", re.ASCII)  # what datetime-local submits


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


def _as_typed(text: str) -> Any:
    """What "Send anyway" sends for a number box that does not fit: the JSON number typed (3.5 into an integer
    field, to test the server's own validation), else the text itself."""
    try:
        value = loads(text)
    except ValueError:
        return text
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return value if number else text


class _Parser:
    def __init__(self, root: Any, form: _Form):
        self.root = root if isinstance(root, dict) else {}
        self.form = form
        self.errors: dict[str, list[str]] = {}

    def error(self, path: tuple, message: str) -> None:
        self.errors.setdefault(pointer(path), []).append(message)

    def parse(self, schema: Any, stack: tuple, key: str, path: tuple, required: bool,
              present: bool = False) -> tuple[Any, bool]:
        """(value or ABSENT, touched): touched means it differs from what an untouched form would send, which
        decides whether an optional object that looks empty is omitted."""
        node = classify(schema, self.root, stack)
        present = present or self.form.get("present:" + key) == "1"
        default = node.schema.get("default", ABSENT)
        if node.nullable and self.form.get("null:" + key) == "1":
            return None, not json_equal(None, default)
        if node.kind == "json" or "json:" + key in self.form.values:
            return self._json(key, path, default)
        return getattr(self, "_" + node.kind)(node, key, path, required, present, default)

    def _json(self, key: str, path: tuple, default: Any) -> tuple[Any, bool]:
        text = self.form.get("json:" + key) or ""
        if not text.strip():
            return ABSENT, False
        try:
            value = loads(text)
        except ValueError as e:
            self.error(path, f"invalid JSON: {e}")
            return text, True
        return value, not json_equal(value, default)

    def _string(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = (self.form.get("f:" + key) or "").replace("\r\n", "\n")  # browsers send textarea lines as CRLF
        if text == "" and not (required or present):
            return ABSENT, False
        if node.schema.get("format") == "date-time" and _LOCAL_TIME.fullmatch(text):
            text += (":00" if len(text) == 16 else "") + "Z"  # a datetime-local input: read as UTC
        return text, text != "" and not json_equal(text, default)  # an empty box is never a change

    def _number(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = (self.form.get("f:" + key) or "").strip()
        if not text:
            return ABSENT, False  # a required one is reported by validation, beside the field
        try:
            value = _to_number(text, node.kind == "integer")
        except ValueError as e:
            self.error(path, str(e))
            return _as_typed(text), True  # "Send anyway" sends what was typed
        return value, not json_equal(value, default)

    _integer = _number

    def _boolean(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        state = self.form.get("set:" + key)
        if state is not None:  # tristate: choosing true or false is deliberate, so it counts as touched
            if state not in ("true", "false"):
                return ABSENT, False
            return state == "true", not json_equal(state == "true", default)
        if not required and "f:" + key not in self.form.values:
            return ABSENT, False
        value = self.form.get("f:" + key) in ("true", "on", "1")  # "on": a checkbox without a value attribute
        return value, not json_equal(value, False if default is ABSENT else default)

    def _select(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = self.form.get("f:" + key) or ""
        if not text:
            return ABSENT, False
        try:
            value = loads(text)
        except ValueError:
            self.error(path, f"{text!r} is not one of the choices")
            return text, True
        return value, not json_equal(value, default)

    def _object(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        saved = {k: list(v) for k, v in self.errors.items()}
        s, out, touched = node.schema, {}, False
        props, needed = properties_of(s), required_names(s)
        for name, sub in props.items():
            value, t = self.parse(sub, node.stack, f"{key}/{escape(name)}", path + (name,), name in needed)
            if value is not ABSENT:
                out[name] = value
            touched = touched or t
        touched = self._rows_kv(node, key, path, out) or touched
        if not (required or present or touched):
            self.errors = saved  # an untouched optional object is omitted, with whatever its fields said
            return ABSENT, False
        return out, touched

    def _keyvalue(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        out: dict = {}
        self._rows_kv(node, key, path, out)
        if not (out or required or present):
            return ABSENT, False
        return out, not json_equal(out, {} if default is ABSENT else default)

    def _rows_kv(self, node: Node, key: str, path: tuple, out: dict) -> bool:
        """Add the key/value rows under ``key`` to ``out``; True if there were any."""
        sub = node.schema.get("additionalProperties")
        sub = sub if isinstance(sub, dict) else {}
        any_row = False
        for seg in self.form.rows(key + "/~kv"):
            row = f"{key}/~kv/{seg}"
            name = self.form.get("kv-key:" + row) or ""
            value, _t = self.parse(sub, node.stack, row, path + (name,), True)
            if name == "":
                if value not in (ABSENT, ""):
                    self.error(path, f"a value without a key: {dump(value)}")
                continue
            if name in out:
                self.error(path + (name,), f"duplicate key {name!r}")
                continue
            if value is ABSENT:
                self.error(path + (name,), "no value")
                value = None
            out[name], any_row = value, True
        return any_row

    def _array(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        items = node.schema.get("items", {})
        rows = self.form.rows(key)
        if rows:
            out = []
            for seg in rows:
                value, _t = self.parse(items, node.stack, f"{key}/{seg}", path + (len(out),), True)
                if value is ABSENT:
                    self.error(path + (len(out),), "empty item: fill it in or remove it")
                    value = None
                out.append(value)
        else:  # a multi-select, or no rows at all
            out = []
            for text in self.form.values.get("f:" + key, []):
                try:
                    out.append(loads(text))
                except ValueError:
                    self.error(path + (len(out),), f"{text!r} is not one of the choices")
                    out.append(text)
        if not (out or required or present):
            return ABSENT, False
        return out, not json_equal(out, [] if default is ABSENT else default)

    def _oneof(self, node: Node, key: str, path: tuple, required: bool, present: bool, default: Any):
        text = self.form.get("branch:" + key) or "0"
        chosen = int(text) if text.isascii() and text.isdigit() and int(text) < len(node.branches) else 0
        return self.parse(node.branches[chosen][1], node.stack, f"{key}/@{chosen}", path, required, present)


def arguments_from_form(schema: dict, pairs: list[tuple[str, str]]) -> FormResult:
    """Typed arguments from the submitted pairs.  Optional fields left empty are omitted; input that cannot be
    converted is kept as typed and reported in ``errors`` (keyed by JSON pointer)."""
    parser = _Parser(schema, _Form(pairs))
    value, _touched = parser.parse(schema, (), "", (), True)
    return FormResult({} if value is ABSENT else value, parser.errors)
