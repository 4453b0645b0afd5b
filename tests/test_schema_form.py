"""inspector.protocol.forms: JSON Schema → form fields, form → typed arguments, validation by field.

Real-world schemas come from the official Python SDK (MCPServer, pydantic) and zod-to-json-schema shapes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import enum
import json
import socket
from typing import Annotated, Literal, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol.forms import (
    INDEX, Field, arguments_from_form, build_form, default_pairs, form_from_arguments, validate,
)
from inspector.protocol.json import ABSENT


def find(field: Field, key: str) -> Field:
    """The field with this form key (branches, rows, templates and extras included)."""
    todo = [field]
    while todo:
        f = todo.pop(0)  # breadth first: an object comes before its `extra`, which shares its key
        if f.key == key:
            return f
        todo += f.children + [x for x in (f.template, f.extra) if x is not None]
    raise KeyError(key)


def widgets(field: Field) -> dict[str, str]:
    """key → widget for the field and its descendants (not templates)."""
    out = {field.key: field.widget}
    for c in field.children:
        out.update(widgets(c))
    return out


def args(schema, pairs):
    result = arguments_from_form(schema, pairs)
    return result.arguments, result.errors


def canon(value):
    """JSON text with sorted keys: equal only if the types are equal too (5 ≠ 5.0 ≠ "5", 1 ≠ True)."""
    return json.dumps(value, sort_keys=True)


def round_trip(schema, value):
    return arguments_from_form(schema, default_pairs(build_form(schema, value)))


def obj(props, required=(), **extra):
    return {"type": "object", "properties": props, "required": list(required), **extra}


# --- the table: one schema per construct, its widget, and arguments for given form input ------------------

WIDGET_CASES = [
    ("string", {"type": "string"}, "text"),
    ("string email", {"type": "string", "format": "email"}, "email"),
    ("string uri", {"type": "string", "format": "uri"}, "url"),
    ("string date", {"type": "string", "format": "date"}, "date"),
    ("string date-time", {"type": "string", "format": "date-time"}, "datetime"),
    ("string long", {"type": "string", "maxLength": 4000}, "textarea"),
    ("number", {"type": "number"}, "number"),
    ("integer", {"type": "integer"}, "integer"),
    ("enum", {"type": "string", "enum": ["a", "b"]}, "select"),
    ("oneOf const", {"oneOf": [{"const": 1, "title": "One"}, {"const": 2, "title": "Two"}]}, "select"),
    ("anyOf const", {"anyOf": [{"const": "x"}, {"const": "y"}]}, "select"),
    ("const", {"const": "fixed"}, "select"),
    ("nullable type list", {"type": ["integer", "null"]}, "integer"),
    ("nullable anyOf", {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}, "text"),
    ("array of strings", {"type": "array", "items": {"type": "string"}}, "array"),
    ("array of objects", {"type": "array", "items": obj({"a": {"type": "string"}})}, "array"),
    ("array of enums", {"type": "array", "items": {"enum": ["r", "g", "b"]}, "uniqueItems": True}, "multiselect"),
    ("nested object", obj({"b": obj({"c": {"type": "string"}})}), "object"),
    ("additionalProperties", {"type": "object", "additionalProperties": {"type": "integer"}}, "keyvalue"),
    ("free object", {"type": "object"}, "keyvalue"),
    ("oneOf objects", {"oneOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "integer"}})]}, "oneof"),
    ("type list union", {"type": ["string", "integer"]}, "oneof"),
    ("anything", {}, "json"),
    ("allOf several", {"allOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "string"}})]}, "json"),
    ("if/then", {"type": "object", "if": {}, "then": {}}, "json"),
    ("not", {"not": {"type": "string"}}, "json"),
    ("patternProperties", {"type": "object", "patternProperties": {"^x": {}}}, "json"),
    ("tuple", {"type": "array", "prefixItems": [{"type": "string"}]}, "json"),
    ("remote ref", {"$ref": "https://example.com/schema.json"}, "json"),
]


@pytest.mark.parametrize("name,sub,widget", WIDGET_CASES, ids=[c[0] for c in WIDGET_CASES])
def test_widget_per_construct(name, sub, widget):
    form = build_form(obj({"x": sub}))
    x = find(form, "/x")
    assert x.widget == widget
    assert "x" in x.label
    assert x.pointer == "/x"
    if widget == "json" and name != "anything":
        assert x.problem  # says why the form gave up on this subtree, and only this subtree
    assert form.widget == "object"


def test_boolean_required_is_a_checkbox_optional_is_tristate():
    form = build_form(obj({"r": {"type": "boolean"}, "o": {"type": "boolean"}}, ["r"]))
    assert find(form, "/r").widget == "checkbox" and find(form, "/r").name == "f:/r"
    assert find(form, "/o").widget == "tristate" and find(form, "/o").name == "set:/o"


def test_field_attributes_bounds_lengths_and_annotations():
    schema = obj({
        "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10, "description": "count", "examples": [3]},
        "x": {"type": "number", "multipleOf": 0.5, "default": 2.5, "title": "X value"},
        "s": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 8},
        "l": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
    }, ["n"])
    form = build_form(schema)
    n, x, s, lst = (find(form, k) for k in ("/n", "/x", "/s", "/l"))
    assert (n.min, n.max, n.step, n.required, n.description, n.examples) == (1, 9, 1, True, "count", [3])
    assert (x.step, x.input_value, x.title, x.required, x.has_default) == (0.5, "2.5", "X value", False, True)
    assert (s.pattern, s.min_length, s.max_length) == ("^[a-z]+$", 2, 8)
    assert (lst.min_items, lst.max_items) == (1, 3)
    assert lst.template.key == "/l/" + INDEX and lst.template.widget == "text"


def test_select_options_carry_json_and_show_titles():
    schema = obj({"c": {"oneOf": [{"const": 1, "title": "One"}, {"const": "1", "title": "Text one"}]},
                  "e": {"enum": ["a", 2, True, None]}})
    form = build_form(schema)
    assert find(form, "/c").options == [("1", "One"), ('"1"', "Text one")]
    assert find(form, "/e").options == [('"a"', "a"), ("2", "2"), ("true", "true"), ("null", "null")]
    assert args(schema, [("f:/c", "1"), ("f:/e", "null")]) == ({"c": 1, "e": None}, {})
    assert args(schema, [("f:/c", '"1"'), ("f:/e", "true")]) == ({"c": "1", "e": True}, {})


FORM_CASES = [
    # (id, schema, submitted pairs, expected arguments)
    ("integer typed", obj({"n": {"type": "integer"}}), [("f:/n", "5")], {"n": 5}),
    ("integer as 5.0", obj({"n": {"type": "integer"}}), [("f:/n", " 5.0 ")], {"n": 5}),
    ("number int", obj({"x": {"type": "number"}}), [("f:/x", "5")], {"x": 5}),
    ("number float", obj({"x": {"type": "number"}}), [("f:/x", "5.5")], {"x": 5.5}),
    ("number exponent", obj({"x": {"type": "number"}}), [("f:/x", "1e3")], {"x": 1000.0}),
    ("optional empty omitted", obj({"s": {"type": "string"}, "n": {"type": "integer"}}),
     [("f:/s", ""), ("f:/n", "")], {}),
    ("required empty string kept", obj({"s": {"type": "string"}}, ["s"]), [("f:/s", "")], {"s": ""}),
    ("required empty integer omitted", obj({"n": {"type": "integer"}}, ["n"]), [("f:/n", "")], {}),
    ("whitespace kept", obj({"s": {"type": "string"}}), [("f:/s", "  a b  ")], {"s": "  a b  "}),
    ("textarea CRLF", obj({"s": {"type": "string"}}), [("f:/s", "a\r\nb")], {"s": "a\nb"}),
    ("datetime-local read as UTC", obj({"t": {"type": "string", "format": "date-time"}}),
     [("f:/t", "2024-05-01T10:30")], {"t": "2024-05-01T10:30:00Z"}),
    ("date", obj({"d": {"type": "string", "format": "date"}}), [("f:/d", "2024-05-01")], {"d": "2024-05-01"}),
    ("required boolean unchecked", obj({"b": {"type": "boolean"}}, ["b"]), [], {"b": False}),
    ("required boolean checked", obj({"b": {"type": "boolean"}}, ["b"]), [("f:/b", "true")], {"b": True}),
    ("required boolean browser default", obj({"b": {"type": "boolean"}}, ["b"]), [("f:/b", "on")], {"b": True}),
    ("tristate unset", obj({"b": {"type": "boolean"}}), [("set:/b", "")], {}),
    ("tristate false", obj({"b": {"type": "boolean"}}), [("set:/b", "false")], {"b": False}),
    ("tristate true", obj({"b": {"type": "boolean"}}), [("set:/b", "true")], {"b": True}),
    ("enum", obj({"e": {"enum": ["a", "b"]}}), [("f:/e", '"b"')], {"e": "b"}),
    ("enum unset", obj({"e": {"enum": ["a", "b"]}}), [("f:/e", "")], {}),
    ("nullable null chosen", obj({"n": {"type": ["integer", "null"]}}), [("null:/n", "1"), ("f:/n", "7")],
     {"n": None}),
    ("nullable value", obj({"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}), [("f:/n", "7")], {"n": 7}),
    ("nullable empty omitted", obj({"n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}}),
     [("f:/n", "")], {}),
    ("array rows in submitted order, gaps and all",
     obj({"l": {"type": "array", "items": {"type": "integer"}}}),
     [("row:/l/7", ""), ("f:/l/7", "3"), ("row:/l/2", ""), ("f:/l/2", "1"), ("row:/l/10", ""), ("f:/l/10", "2")],
     {"l": [3, 1, 2]}),
    ("array rows without markers", obj({"l": {"type": "array", "items": {"type": "string"}}}),
     [("f:/l/1", "b"), ("f:/l/0", "a")], {"l": ["b", "a"]}),
    ("array template ignored", obj({"l": {"type": "array", "items": {"type": "string"}}}),
     [("row:/l/0", ""), ("f:/l/0", "a"), ("row:/l/" + INDEX, ""), ("f:/l/" + INDEX, "")], {"l": ["a"]}),
    ("optional array with no rows omitted", obj({"l": {"type": "array", "items": {"type": "string"}}}), [], {}),
    ("required array with no rows", obj({"l": {"type": "array", "items": {"type": "string"}}}, ["l"]), [],
     {"l": []}),
    ("present empty array", obj({"l": {"type": "array", "items": {"type": "string"}}}), [("present:/l", "1")],
     {"l": []}),
    ("array of objects", obj({"l": {"type": "array", "items": obj({"a": {"type": "integer"}, "b": {"type": "boolean"}},
                                                                  ["b"])}}),
     [("row:/l/0", ""), ("f:/l/0/a", "1"), ("row:/l/1", ""), ("f:/l/1/b", "true")],
     {"l": [{"a": 1, "b": False}, {"b": True}]}),
    ("multiselect", obj({"m": {"type": "array", "items": {"enum": ["r", "g", 3]}}}),
     [("f:/m", '"g"'), ("f:/m", "3")], {"m": ["g", 3]}),
    ("nested objects", obj({"a": obj({"b": obj({"c": {"type": "integer"}})})}), [("f:/a/b/c", "4")],
     {"a": {"b": {"c": 4}}}),
    ("untouched optional object omitted",
     obj({"size": obj({"w": {"type": "integer"}, "h": {"type": "integer", "default": 3}}, ["w"])}),
     [("f:/size/w", ""), ("f:/size/h", "3")], {}),
    ("touched optional object kept",
     obj({"size": obj({"w": {"type": "integer"}, "h": {"type": "integer", "default": 3}}, ["w"])}),
     [("f:/size/w", "2"), ("f:/size/h", "3")], {"size": {"w": 2, "h": 3}}),
    ("required object always sent", obj({"o": obj({"s": {"type": "string"}})}, ["o"]), [], {"o": {}}),
    ("present empty object", obj({"o": obj({"s": {"type": "string"}})}), [("present:/o", "1")], {"o": {}}),
    ("key/value rows", obj({"env": {"type": "object", "additionalProperties": {"type": "integer"}}}),
     [("row:/env/~kv/3", ""), ("kv-key:/env/~kv/3", "B"), ("f:/env/~kv/3", "2"),
      ("row:/env/~kv/1", ""), ("kv-key:/env/~kv/1", "A"), ("f:/env/~kv/1", "1"),
      ("kv-key:/env/~kv/2", ""), ("f:/env/~kv/2", "")], {"env": {"B": 2, "A": 1}}),
    ("free object values as JSON", obj({"o": {"type": "object"}}),
     [("kv-key:/o/~kv/0", "k"), ("json:/o/~kv/0", '{"deep": [1]}')], {"o": {"k": {"deep": [1]}}}),
    ("properties plus extras", obj({"o": obj({"a": {"type": "string"}}, additionalProperties={"type": "string"})}),
     [("f:/o/a", "x"), ("kv-key:/o/~kv/0", "b"), ("f:/o/~kv/0", "y")], {"o": {"a": "x", "b": "y"}}),
    ("oneOf branch chosen, others ignored",
     obj({"p": {"oneOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "integer"}})]}}, ["p"]),
     [("branch:/p", "1"), ("f:/p/@0/a", "ignored"), ("f:/p/@1/b", "5")], {"p": {"b": 5}}),
    ("scalar union", obj({"k": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}),
     [("branch:/k", "1"), ("f:/k/@0", ""), ("f:/k/@1", "5")], {"k": "5"}),
    ("json subtree", obj({"x": {}, "s": {"type": "string"}}), [("json:/x", '[1, {"a": null}]'), ("f:/s", "t")],
     {"x": [1, {"a": None}], "s": "t"}),
    ("json empty omitted", obj({"x": {}}), [("json:/x", "  ")], {}),
    ("json null", obj({"x": {}}), [("json:/x", "null")], {"x": None}),
    ("escaped keys", obj({"a/b": obj({"~c": {"type": "integer"}})}), [("f:/a~1b/~0c", "1")], {"a/b": {"~c": 1}}),
]


@pytest.mark.parametrize("name,schema,pairs,expected", FORM_CASES, ids=[c[0] for c in FORM_CASES])
def test_arguments_from_form(name, schema, pairs, expected):
    arguments, errors = args(schema, pairs)
    assert errors == {}
    assert canon(arguments) == canon(expected)


@pytest.mark.parametrize("kind,text,message", [
    ("integer", "5x", "'5x' is not an integer"),
    ("integer", "5.5", "'5.5' is not an integer"),
    ("number", "five", "'five' is not a number"),
    ("number", "1e999", "'1e999' is out of range"),
    ("number", "NaN", "'NaN' is out of range"),
])
def test_conversion_errors_are_per_field_and_keep_the_input(kind, text, message):
    schema = obj({"o": obj({"n": {"type": kind}})})
    arguments, errors = args(schema, [("f:/o/n", text)])
    assert errors == {"/o/n": [message]}
    # "Send anyway" sends what was typed: as the JSON number it is when it is one (finding 6), else as text
    assert arguments == {"o": {"n": 5.5 if text == "5.5" else text}}


def test_other_conversion_errors():
    schema = obj({"x": {}, "l": {"type": "array", "items": {"type": "integer"}},
                  "m": {"type": "object", "additionalProperties": {"type": "string"}}})
    pairs = [("json:/x", "{nope"), ("row:/l/4", ""), ("f:/l/4", ""), ("kv-key:/m/~kv/0", "k"),
             ("kv-key:/m/~kv/1", "k"), ("f:/m/~kv/1", "v")]
    arguments, errors = args(schema, pairs)
    assert arguments == {"x": "{nope", "l": [None], "m": {"k": ""}}
    assert errors["/x"][0].startswith("invalid JSON")
    assert errors["/l/0"] == ["empty item: fill it in or remove it"]
    assert errors["/m/k"] == ["duplicate key 'k'"]


def test_errors_inside_an_omitted_optional_object_are_dropped():
    schema = obj({"o": obj({"n": {"type": "integer"}, "h": {"type": "integer", "default": 3}})})
    assert args(schema, [("f:/o/h", "3")]) == ({}, {})
    assert args(schema, [("f:/o/n", "x"), ("f:/o/h", "3")]) == ({"o": {"n": "x", "h": 3}},
                                                                 {"/o/n": ["'x' is not an integer"]})


# --- defaults, required, pre-fill ---------------------------------------------------------------------------


def test_defaults_prefill_and_pass_through():
    schema = obj({"units": {"enum": ["c", "f"], "default": "c"}, "n": {"type": "integer", "default": 3},
                  "b": {"type": "boolean", "default": True}, "tags": {"type": "array", "items": {"type": "string"},
                                                                      "default": ["x"]},
                  "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}})
    form = build_form(schema)
    assert find(form, "/units").selected == ['"c"']
    assert find(form, "/n").input_value == "3"
    assert find(form, "/b").input_value == "true"
    assert [c.input_value for c in find(form, "/tags").children] == ["x"]
    note = find(form, "/note")
    assert note.nullable and not note.is_null and note.input_value == ""  # default null is not pre-selected
    arguments, _ = args(schema, default_pairs(form))
    assert arguments == {"units": "c", "n": 3, "b": True, "tags": ["x"]}  # no "note": null sent


def test_form_from_arguments_uses_exactly_the_arguments():
    schema = obj({"n": {"type": "integer", "default": 3}, "s": {"type": "string", "default": "d"}})
    form = form_from_arguments(schema, {"n": 7})
    assert find(form, "/n").input_value == "7" and find(form, "/s").input_value == ""
    assert args(schema, default_pairs(form))[0] == {"n": 7}


def test_values_that_do_not_fit_fall_back_to_json_for_that_field_only():
    schema = obj({"n": {"type": "integer"}, "s": {"type": "string"}, "o": obj({"a": {"type": "string"}})})
    values = {"n": [1], "s": 5, "o": {"a": "x", "extra": {"y": 1}}, "unknown": True}
    form = build_form(schema, values)
    assert find(form, "/n").widget == "json" and find(form, "/s").widget == "json"
    assert find(form, "/o/a").widget == "text"
    assert round_trip(schema, values).arguments == values  # nothing lost going JSON → form → JSON


def test_values_outside_the_enum_are_kept():
    schema = obj({"e": {"enum": ["a"]}, "m": {"type": "array", "items": {"enum": ["a", "b"]}}})
    values = {"e": "zz", "m": ["b", "a", "a"]}
    form = build_form(schema, values)
    assert find(form, "/e").options[-1] == ('"zz"', "zz (not allowed)")
    assert find(form, "/m").widget == "array"  # a multi-select would lose the order and the duplicate
    assert round_trip(schema, values).arguments == values


def test_datetime_widget_only_when_the_value_fits_it():
    schema = obj({"t": {"type": "string", "format": "date-time"}})
    utc = build_form(schema, {"t": "2024-05-01T10:30:00Z"})
    assert find(utc, "/t").widget == "datetime" and find(utc, "/t").input_value == "2024-05-01T10:30:00"
    zoned = build_form(schema, {"t": "2024-05-01T10:30:00+02:00"})
    assert find(zoned, "/t").widget == "text"
    for value in ("2024-05-01T10:30:00Z", "2024-05-01T10:30:00+02:00", "2024-05-01T10:30:00.5Z"):
        assert round_trip(schema, {"t": value}).arguments == {"t": value}


def test_long_or_multiline_text_gets_a_textarea():
    schema = obj({"s": {"type": "string"}})
    assert find(build_form(schema, {"s": "a\nb"}), "/s").widget == "textarea"
    assert find(build_form(schema, {"s": "x" * 200}), "/s").widget == "textarea"
    assert find(build_form(schema, {"s": "short"}), "/s").widget == "text"


def test_optional_empty_string_survives_the_json_toggle():
    schema = obj({"s": {"type": "string"}})
    form = build_form(schema, {"s": ""})
    s = find(form, "/s")
    assert s.include_control and s.present and s.present_name == "present:/s"
    assert round_trip(schema, {"s": ""}).arguments == {"s": ""}


# --- $ref, allOf, cycles, remote refs -----------------------------------------------------------------------


def test_local_refs_defs_definitions_and_properties():
    schema = {
        "type": "object",
        "$defs": {"Dim": obj({"w": {"type": "integer"}}, ["w"], title="Dim")},
        "definitions": {"Color": {"enum": ["red", "blue"]}},
        "properties": {
            "a": {"$ref": "#/$defs/Dim", "description": "outer description wins"},
            "b": {"$ref": "#/definitions/Color"},
            "c": {"$ref": "#/properties/a"},  # zod-to-json-schema reuses earlier properties this way
            "d": {"allOf": [{"$ref": "#/$defs/Dim"}], "title": "D"},  # pydantic v1 / older SDKs
        },
    }
    form = build_form(schema)
    assert widgets(form) == {"": "object", "/a": "object", "/a/w": "integer", "/b": "select", "/c": "object",
                             "/c/w": "integer", "/d": "object", "/d/w": "integer"}
    assert find(form, "/a").description == "outer description wins"
    assert find(form, "/d").title == "D"
    assert args(schema, [("f:/a/w", "1"), ("f:/b", '"blue"'), ("f:/d/w", "2")])[0] == {
        "a": {"w": 1}, "b": "blue", "d": {"w": 2}}


def test_recursive_ref_is_cut_at_a_depth_and_edited_as_json_there():
    schema = {"type": "object", "$defs": {"Node": obj({"name": {"type": "string"},
                                                       "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}})},
              "properties": {"tree": {"$ref": "#/$defs/Node"}, "self": {"$ref": "#"}}}
    form = build_form(schema)
    template = find(form, "/tree").children[1].template
    depth = 1
    while template.widget != "json":
        template = template.children[1].template
        depth += 1
    assert depth == 3 and "recursive $ref" in template.problem
    value = {"tree": {"name": "a", "kids": [{"name": "b", "kids": [{"name": "c", "kids": [{"name": "d"}]}]}]}}
    assert round_trip(schema, value).arguments == value
    assert validate(schema, value) == {}


def test_remote_refs_are_never_fetched(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("network access")
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    schema = obj({"r": {"$ref": "https://example.com/s.json#/$defs/X"}, "n": {"type": "integer"}})
    form = build_form(schema)
    assert find(form, "/r").widget == "json" and "remote $ref not fetched" in find(form, "/r").problem
    arguments, _ = args(schema, [("json:/r", '{"any": 1}'), ("f:/n", "x")])
    assert validate(schema, arguments) == {"/n": ["'x' is not of type 'integer'"]}


def test_unresolvable_local_ref():
    form = build_form(obj({"r": {"$ref": "#/$defs/Nope"}}))
    assert find(form, "/r").widget == "json" and "unresolvable" in find(form, "/r").problem


# --- validation ---------------------------------------------------------------------------------------------


def test_validation_errors_keyed_by_field_pointer():
    schema = obj({"name": {"type": "string", "minLength": 2},
                  "size": obj({"w": {"type": "integer", "minimum": 1}, "h": {"type": "integer"}}, ["w", "h"]),
                  "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}},
                  "mail": {"type": "string", "format": "email"}}, ["name", "size"])
    errors = validate(schema, {"size": {"w": 0}, "tags": ["ok", "toolong"], "mail": "nope"})
    assert errors == {
        "/name": ["'name' is a required property"],
        "/size/w": ["0 is less than the minimum of 1"],
        "/size/h": ["'h' is a required property"],
        "/tags/1": ["'toolong' is too long"],
        "/mail": ["'nope' is not a 'email'"],
    }


def test_validation_looks_inside_the_meant_union_branch():
    schema = obj({"n": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
                  "pet": {"oneOf": [obj({"kind": {"const": "cat"}, "lives": {"type": "integer"}}, ["kind"]),
                                    obj({"kind": {"const": "dog"}, "good": {"type": "boolean"}}, ["kind", "good"])]},
                  "k": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})
    errors = validate(schema, {"n": -1, "pet": {"kind": "dog"}, "k": "5x"})
    assert errors == {"/n": ["-1 is less than the minimum of 0"], "/pet/good": ["'good' is a required property"],
                      "/k": ["'5x' is not of type 'integer' or 'null'"]}


def test_validation_dialect_from_schema_keyword():
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    assert validate(draft7, {"n": 0}) == {"/n": ["0 is less than or equal to the minimum of 0"]}
    assert validate({"type": "object", "properties": {"n": {"type": "frob"}}}, {"n": 1})[""][0].startswith(
        "the schema could not be checked")


# --- real schemas: the official Python SDK (MCPServer + pydantic) ------------------------------------------


# The SDK's models live at module level, so their annotations resolve.
from pydantic import BaseModel
from pydantic import Field as PField


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Dimensions(BaseModel):
    width: int = PField(description="Width in cm")
    height: int = 30


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


class Node(BaseModel):
    name: str
    children: list[Node] = []


def sdk_schemas() -> dict[str, dict]:
    """Each tool's inputSchema exactly as the official Python SDK publishes it."""
    from mcp.server import MCPServer

    server = MCPServer(name="schema-form-test")

    @server.tool()
    def optional_int(count: Optional[int] = None) -> str:  # noqa: UP045  (the spelling servers use)
        return ""

    @server.tool()
    def str_list(tags: list[str]) -> str:
        return ""

    @server.tool()
    def nested(size: Dimensions, box: Dimensions | None = None,
               many: list[Dimensions] = PField(default_factory=list)) -> str:
        return ""

    @server.tool()
    def literal(mode: Literal["a", "b"] = "a") -> str:
        return ""

    @server.tool()
    def enumerated(color: Color) -> str:
        return ""

    @server.tool()
    def mapping(counts: dict[str, int]) -> str:
        return ""

    @server.tool()
    def union(pet: Annotated[Cat | Dog, PField(discriminator="kind")], k: int | str = 1) -> str:
        return ""

    @server.tool()
    def misc(when: datetime.datetime, day: datetime.date | None = None, flag: bool = False,
             ratio: Annotated[float, PField(ge=0, le=1)] = 0.5, picks: set[Literal["x", "y"]] = PField(default_factory=set),
             tree: Node | None = None) -> str:
        return ""

    # On a thread of its own: Playwright's sync API may already run an event loop on this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        tools = pool.submit(asyncio.run, server.list_tools()).result()
    return {t.name: t.model_dump(by_alias=True, exclude_none=True)["inputSchema"] for t in tools}


@pytest.fixture(scope="module")
def sdk():
    return sdk_schemas()


SDK_CASES = [
    # (tool, expected widgets (subset), form pairs, expected arguments)
    ("optional_int", {"/count": "integer"}, [("f:/count", "")], {}),
    ("optional_int", {}, [("f:/count", "4")], {"count": 4}),
    ("optional_int", {}, [("null:/count", "1")], {"count": None}),
    ("str_list", {"/tags": "array"}, [("row:/tags/0", ""), ("f:/tags/0", "a"), ("row:/tags/1", ""),
                                      ("f:/tags/1", "")], {"tags": ["a", ""]}),
    ("nested", {"/size": "object", "/size/width": "integer", "/box": "object", "/many": "array"},
     [("f:/size/width", "40"), ("f:/size/height", "30"), ("f:/box/height", "30"),
      ("row:/many/0", ""), ("f:/many/0/width", "1"), ("f:/many/0/height", "2")],
     {"size": {"width": 40, "height": 30}, "many": [{"width": 1, "height": 2}]}),
    ("literal", {"/mode": "select"}, [("f:/mode", '"b"')], {"mode": "b"}),
    ("enumerated", {"/color": "select"}, [("f:/color", '"green"')], {"color": "green"}),
    ("mapping", {"/counts": "keyvalue"}, [("kv-key:/counts/~kv/0", "a"), ("f:/counts/~kv/0", "2")],
     {"counts": {"a": 2}}),
    ("union", {"/pet": "oneof", "/pet/@0": "object", "/pet/@1/good": "checkbox", "/k": "oneof"},
     [("branch:/pet", "1"), ("f:/pet/@0/kind", '"cat"'), ("f:/pet/@0/lives", "9"), ("f:/pet/@1/kind", '"dog"'),
      ("f:/pet/@1/good", "true"), ("branch:/k", "1"), ("f:/k/@1", "one")],
     {"pet": {"kind": "dog", "good": True}, "k": "one"}),
    ("misc", {"/when": "datetime", "/day": "date", "/flag": "tristate", "/ratio": "number", "/picks": "multiselect",
              "/tree": "object"},
     [("f:/when", "2024-01-02T03:04"), ("f:/day", ""), ("set:/flag", "true"), ("f:/ratio", "0.25"),
      ("f:/picks", '"y"'), ("f:/tree/name", "")],
     {"when": "2024-01-02T03:04:00Z", "flag": True, "ratio": 0.25, "picks": ["y"]}),
]


@pytest.mark.parametrize("tool,expected_widgets,pairs,expected", SDK_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SDK_CASES)])
def test_sdk_schemas(sdk, tool, expected_widgets, pairs, expected):
    schema = sdk[tool]
    form = build_form(schema)
    for key, widget in expected_widgets.items():
        assert find(form, key).widget == widget, key
    arguments, errors = args(schema, pairs)
    assert errors == {}
    assert canon(arguments) == canon(expected)
    assert validate(schema, arguments) == {}


def test_sdk_prefilled_form_sends_valid_arguments_without_nulls(sdk):
    for name, schema in sdk.items():
        form = build_form(schema)
        arguments, errors = args(schema, default_pairs(form))
        assert errors == {}
        assert None not in arguments.values(), name
    # what the defaults alone produce (required fields still empty)
    assert args(sdk["misc"], default_pairs(build_form(sdk["misc"])))[0] == {"when": "", "flag": False, "ratio": 0.5}
    assert args(sdk["union"], default_pairs(build_form(sdk["union"])))[0] == {"pet": {"kind": "cat", "lives": 9},
                                                                              "k": 1}


def test_sdk_titles_labels_and_descriptions(sdk):
    form = build_form(sdk["nested"])
    width = find(form, "/size/width")
    assert (width.label, width.title, width.description, width.required) == ("width", "Width", "Width in cm", True)
    assert find(form, "/many").template.children[0].key == "/many/" + INDEX + "/width"
    union = find(build_form(sdk["union"]), "/pet")
    assert union.branch_titles == ["Cat", "Dog"] and union.chosen == 0
    assert find(union, "/pet/@0/kind").selected == ['"cat"']


def test_sdk_round_trips(sdk):
    cases = {
        "nested": {"size": {"width": 1, "height": 2}, "box": {"width": 3, "height": 30}, "many": []},
        "union": {"pet": {"kind": "dog", "good": False}, "k": "text"},
        "misc": {"when": "2024-01-02T03:04:05Z", "day": None, "picks": ["x", "y"],
                 "tree": {"name": "r", "children": [{"name": "c", "children": []}]}},
        "mapping": {"counts": {}},
        "optional_int": {"count": None},
    }
    for name, value in cases.items():
        result = round_trip(sdk[name], value)
        assert (result.errors, canon(result.arguments)) == ({}, canon(value)), name
        assert validate(sdk[name], value) == {}, name
    chosen = find(build_form(sdk["union"], cases["union"]), "/pet")
    assert chosen.chosen == 1


# --- TypeScript servers: zod-to-json-schema shapes ----------------------------------------------------------

ZOD = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
        "alert": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "point": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                  "required": ["lat", "lon"], "additionalProperties": False},
        "home": {"$ref": "#/properties/point"},
        "shape": {"anyOf": [
            {"type": "object", "properties": {"type": {"type": "string", "const": "circle"}, "r": {"type": "number"}},
             "required": ["type", "r"], "additionalProperties": False},
            {"type": "object", "properties": {"type": {"type": "string", "const": "square"}, "s": {"type": "number"}},
             "required": ["type", "s"], "additionalProperties": False}]},
        "meta": {"type": "object", "additionalProperties": {"type": "string"}},
        "site": {"type": "string", "format": "uri"},
    },
    "required": ["city", "shape"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}


def test_zod_shapes():
    form = build_form(ZOD)
    assert widgets(form) | {} == {
        "": "object", "/city": "text", "/units": "select", "/days": "integer", "/alert": "text", "/tags": "array",
        "/point": "object", "/point/lat": "number", "/point/lon": "number", "/home": "object", "/home/lat": "number",
        "/home/lon": "number", "/shape": "oneof", "/shape/@0": "object", "/shape/@0/type": "select",
        "/shape/@0/r": "number", "/shape/@1": "object", "/shape/@1/type": "select", "/shape/@1/s": "number",
        "/meta": "keyvalue", "/site": "url"}
    assert find(form, "/alert").nullable and find(form, "/city").required
    assert form.extra is None and find(form, "/point").extra is None  # additionalProperties: false: no extra rows
    typed = {"f:/city": "Oslo", "branch:/shape": "1", "f:/shape/@1/s": "2.5", "f:/point/lat": "59.9",
             "f:/point/lon": "10.7"}
    pairs = [(n, typed.get(n, v)) for n, v in default_pairs(form)] + [("null:/alert", "1")]
    arguments, errors = args(ZOD, pairs)
    assert errors == {}
    assert arguments == {"city": "Oslo", "units": "celsius", "days": 3, "alert": None,
                         "point": {"lat": 59.9, "lon": 10.7}, "shape": {"type": "square", "s": 2.5}}
    assert validate(ZOD, arguments) == {}
    assert validate(ZOD, {**arguments, "extra": 1}) == {
        "": ["Additional properties are not allowed ('extra' was unexpected)"]}


# --- the naming contract ------------------------------------------------------------------------------------


def test_input_names():
    schema = obj({"s": {"type": "string"}, "b": {"type": "boolean"}, "x": {}, "n": {"type": ["integer", "null"]},
                  "l": {"type": "array", "items": {"type": "string"}},
                  "m": {"type": "object", "additionalProperties": {"type": "string"}},
                  "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]}})
    form = build_form(schema, {"l": ["a"], "m": {"k": "v"}})
    assert [find(form, k).name for k in ("/s", "/b", "/x", "/u", "/u/@1", "/l/0")] == [
        "f:/s", "set:/b", "json:/x", "branch:/u", "f:/u/@1", "f:/l/0"]
    assert find(form, "/n").null_name == "null:/n" and find(form, "/l").present_name == "present:/l"
    assert find(form, "/l/0").row_name == "row:/l/0" and find(form, "/l/0").index == 0
    row = find(form, "/m").children[0]
    assert (row.key, row.kv_key, row.kv_key_name, row.name, row.pointer) == (
        "/m/~kv/0", "k", "kv-key:/m/~kv/0", "f:/m/~kv/0", "/m/k")
    assert default_pairs(form) == [
        ("f:/s", ""), ("set:/b", ""), ("json:/x", ""), ("f:/n", ""), ("present:/l", "1"), ("row:/l/0", ""),
        ("f:/l/0", "a"), ("present:/m", "1"), ("row:/m/~kv/0", ""), ("kv-key:/m/~kv/0", "k"), ("f:/m/~kv/0", "v"),
        ("branch:/u", "0"), ("f:/u/@0", ""), ("f:/u/@1", "")]


def test_missing_is_falsy_and_distinct_from_null():
    assert not ABSENT and ABSENT is not None
    f = build_form(obj({"a": {"type": "string"}}))
    assert not find(f, "/a").has_value and not find(f, "/a").has_default


# --- property-based: generated schemas and instances round-trip, and validate ------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=12)
KEYS = st.sampled_from(["a", "b", "name", "0", "@0", "~kv", "a/b", "~1", "x.y", "é", " "])
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), TEXT,
                         st.floats(allow_nan=False, allow_infinity=False))


def schema_eq(value):
    """JSON Schema equality: 0 and 0.0 are the same value (so two consts with them break a oneOf)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else canon(value)


def _scalar():
    ints = st.tuples(st.integers(-1000, 0), st.integers(0, 1000)).map(
        lambda b: ({"type": "integer", "minimum": b[0], "maximum": b[1]}, st.integers(b[0], b[1])))
    enums = st.lists(JSON_SCALARS, min_size=1, max_size=4, unique_by=canon).map(
        lambda vs: ({"enum": vs}, st.sampled_from(vs)))
    consts = st.lists(st.tuples(JSON_SCALARS, TEXT), min_size=2, max_size=3, unique_by=lambda t: schema_eq(t[0])).map(
        lambda cs: ({"oneOf": [{"const": v, "title": t} for v, t in cs]}, st.sampled_from([v for v, _ in cs])))
    return st.one_of(
        st.just(({"type": "string"}, TEXT)),
        st.sampled_from(["email", "uri", "date", "date-time"]).map(
            lambda f: ({"type": "string", "format": f}, st.sampled_from(
                {"email": ["a@b.c"], "uri": ["https://x.org/p?q=1"], "date": ["2024-02-29"],
                 "date-time": ["2024-02-29T23:59:59Z", "2024-02-29T23:59:59.25+01:00"]}[f]))),
        st.just(({"type": "number"}, st.floats(allow_nan=False, allow_infinity=False) | st.integers())),
        ints,
        st.just(({"type": "boolean"}, st.booleans())),
        enums,
        consts,
    )


def _nullable(pair):
    schema, values = pair
    if isinstance(schema.get("type"), str) and "enum" not in schema:
        wrapped = {**schema, "type": [schema["type"], "null"]}
    else:
        wrapped = {"anyOf": [schema, {"type": "null"}], "default": None}
    return wrapped, st.none() | values


def _array(pair):
    schema, values = pair
    return {"type": "array", "items": schema}, st.lists(values, max_size=3)


def _object(pairs_and_required):
    props, required = pairs_and_required
    schema = obj({k: s for k, (s, _v) in props.items()}, [k for k in props if k in required])
    req = {k: v for k, (_s, v) in props.items() if k in required}
    opt = {k: v for k, (_s, v) in props.items() if k not in required}
    return schema, st.fixed_dictionaries(req, optional=opt)


def _keyvalue(pair):
    schema, values = pair
    return {"type": "object", "additionalProperties": schema}, st.dictionaries(TEXT.filter(bool), values, max_size=3)


def _union(children):
    tagged = [(obj({"tag": {"const": f"t{i}"}, "v": s}, ["tag"]), v.map(lambda x, i=i: {"tag": f"t{i}", "v": x}))
              for i, (s, v) in enumerate(children)]
    return {"oneOf": [s for s, _v in tagged]}, st.one_of([v for _s, v in tagged])


def _extend(children):
    return st.one_of(
        children.map(_nullable),
        children.map(_array),
        children.map(_keyvalue),
        st.tuples(st.dictionaries(KEYS, children, min_size=1, max_size=4), st.sets(KEYS)).map(_object),
        st.lists(children, min_size=2, max_size=3).map(_union),
        st.lists(children, min_size=2, max_size=3).map(
            lambda cs: ({"anyOf": [s for s, _v in cs]}, st.one_of([v for _s, v in cs]))),
        children.map(lambda c: ({"allOf": [c[0]], "description": "pydantic wraps refs like this"}, c[1])),
    )


SCHEMAS = st.recursive(_scalar(), _extend, max_leaves=8)
ROOTS = st.tuples(st.dictionaries(KEYS, SCHEMAS, max_size=4), st.sets(KEYS)).map(_object)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_round_trip_generated(data):
    schema, instances = data.draw(ROOTS)
    instance = data.draw(instances)
    assert validate(schema, instance) == {}
    result = round_trip(schema, instance)
    assert result.errors == {}
    assert canon(result.arguments) == canon(instance)
    assert validate(schema, result.arguments) == {}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_defaults_only_form_never_errors_on_conversion(data):
    schema, _instances = data.draw(ROOTS)
    result = arguments_from_form(schema, default_pairs(build_form(schema)))
    assert result.errors == {}
    assert isinstance(result.arguments, dict)


SCHEMA_WORDS = st.sampled_from(["type", "properties", "items", "anyOf", "oneOf", "allOf", "$ref", "enum", "const",
                                "default", "required", "additionalProperties", "format", "minimum", "title", "$defs",
                                "a", "b"])
SCHEMA_VALUES = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.sampled_from(
    ["string", "integer", "null", "object", "array", "#", "#/$defs/a", "#/properties/a", "date-time", "a",
     "https://example.com/x"])
ANY_JSON = st.recursive(SCHEMA_VALUES, lambda c: st.lists(c, max_size=3) | st.dictionaries(SCHEMA_WORDS, c, max_size=4),
                        max_leaves=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(SCHEMA_WORDS, ANY_JSON, max_size=5), ANY_JSON)
def test_malformed_schemas_and_values_never_crash(schema, value):
    for form in (build_form(schema), build_form(schema, value)):
        result = arguments_from_form(schema, default_pairs(form))
        assert isinstance(validate(schema, result.arguments), dict)


def test_one_json_equality_1_is_1_0_but_true_is_not_1():
    """The forms use protocol.json.json_equal like the diff and replay do: 1.0 selects the option 1, true does not."""
    one_or_two = {"enum": [1, 2]}
    schema = {"type": "object", "properties": {"n": one_or_two, "m": {"type": "array", "items": one_or_two}}}
    form = build_form(schema, {"n": 1.0, "m": [1.0, 2]})
    n, m = find(form, "/n"), find(form, "/m")
    assert n.selected == ["1"] and [text for text, _ in n.options] == ["1", "2"]
    assert m.widget == "multiselect" and m.selected == ["1", "2"]
    flagged = find(build_form(schema, {"n": True}), "/n")
    assert flagged.selected == ["true"] and flagged.options[-1] == ("true", "true (not allowed)")
