"""The server diff: pure tables, no servers."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.protocol.diff import ABSENT, Change, diff_servers, diff_values, item_keys, schema_still_fits, text_diff


def tool(name: str = "word_count", description: str = "Count the words in a text.", **extra) -> dict:
    """A tool as a server lists it."""
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            **extra}


def snap(**sections) -> dict:
    """A snapshot with defaults for every section."""
    base = {"serverInfo": {"name": "fixture", "version": "1.0"}, "capabilities": {"tools": {"listChanged": True}},
            "instructions": "Use word_count for words.", "tools": [tool()], "resources": [],
            "resourceTemplates": [], "prompts": []}
    return {**base, **sections}


def with_tool(**changes) -> dict:
    """A snapshot whose only tool is the default one with `changes` applied."""
    return snap(tools=[{**tool(), **changes}])


def schema_with_text_type(type_: str) -> dict:
    schema = copy.deepcopy(tool()["inputSchema"])
    schema["properties"]["text"]["type"] = type_
    return schema


CASES = [
    # (id, before, after, {section: (added, removed, changed {key: [(path, before, after)]}) or [changes]}, summary)
    ("description edit", snap(), with_tool(description="Count words."),
     {"tools": ([], [], {"word_count": [("/description", "Count the words in a text.", "Count words.")]})},
     "tools: +0 −0 ~1 (word_count: description changed)"),
    ("tool added", snap(), snap(tools=[tool(), tool("count_lines", "Lines.")]),
     {"tools": (["count_lines"], [], {})},
     "tools: +1 −0 ~0 (count_lines added)"),
    ("tool removed", snap(tools=[tool(), tool("count_lines")]), snap(),
     {"tools": ([], ["count_lines"], {})},
     "tools: +0 −1 ~0 (count_lines removed)"),
    ("property type", snap(), with_tool(inputSchema=schema_with_text_type("integer")),
     {"tools": ([], [], {"word_count": [("/inputSchema/properties/text/type", "string", "integer")]})},
     "tools: +0 −0 ~1 (word_count: inputSchema changed)"),
    ("annotations added", snap(), with_tool(annotations={"readOnlyHint": True}),
     {"tools": ([], [], {"word_count": [("/annotations", ABSENT, {"readOnlyHint": True})]})},
     "tools: +0 −0 ~1 (word_count: annotations changed)"),
    ("annotation flipped", with_tool(annotations={"readOnlyHint": True}),
     with_tool(annotations={"readOnlyHint": False}),
     {"tools": ([], [], {"word_count": [("/annotations/readOnlyHint", True, False)]})},
     "tools: +0 −0 ~1 (word_count: annotations changed)"),
    ("required list", snap(), with_tool(inputSchema={**tool()["inputSchema"], "required": []}),
     {"tools": ([], [], {"word_count": [("/inputSchema/required", ["text"], [])]})},
     "tools: +0 −0 ~1 (word_count: inputSchema changed)"),
    ("instructions", snap(), snap(instructions="Use word_count for counting words."),
     {"instructions": [("", "Use word_count for words.", "Use word_count for counting words.")]},
     "instructions changed"),
    ("instructions gone", snap(), snap(instructions=None),
     {"instructions": [("", "Use word_count for words.", ABSENT)]}, "instructions removed"),
    ("capability added", snap(), snap(capabilities={"tools": {"listChanged": True}, "logging": {}}),
     {"capabilities": [("/logging", ABSENT, {})]}, "capabilities: +logging"),
    ("capability changed", snap(), snap(capabilities={"tools": {"listChanged": False}, "prompts": {}}),
     {"capabilities": [("/tools/listChanged", True, False), ("/prompts", ABSENT, {})]},
     "capabilities: ~tools +prompts"),
    ("server version", snap(), snap(serverInfo={"name": "fixture", "version": "1.1"}),
     {"serverInfo": [("/version", "1.0", "1.1")]}, "server version 1.0 → 1.1"),
    ("server renamed", snap(), snap(serverInfo={"name": "other", "version": "1.0", "title": "Other"}),
     {"serverInfo": [("/name", "fixture", "other"), ("/title", ABSENT, "Other")]}, "server info: ~name +title"),
    ("nothing", snap(), copy.deepcopy(snap()), {}, "nothing changed"),
    ("true is not 1", with_tool(annotations={"x": 1}), with_tool(annotations={"x": True}),
     {"tools": ([], [], {"word_count": [("/annotations/x", 1, True)]})},
     "tools: +0 −0 ~1 (word_count: annotations changed)"),
    ("1 is 1.0", with_tool(annotations={"x": 1}), with_tool(annotations={"x": 1.0}), {}, "nothing changed"),
    ("items without names", snap(tools=[{"description": "a"}, {"description": "b"}]),
     snap(tools=[{"description": "a"}, {"description": "c"}, {"description": "d"}]),
     {"tools": (["[2]"], [], {"[1]": [("/description", "b", "c")]})},
     "tools: +1 −0 ~1 ([2] added; [1]: description changed)"),
    ("resources by uri", snap(resources=[{"uri": "file:///a", "name": "a"}]),
     snap(resources=[{"uri": "file:///a", "name": "A"}, {"uri": "file:///b", "name": "b"}]),
     {"resources": (["file:///b"], [], {"file:///a": [("/name", "a", "A")]})},
     "resources: +1 −0 ~1 (file:///b added; file:///a: name changed)"),
    ("templates and prompts", snap(prompts=[{"name": "p"}]),
     snap(resourceTemplates=[{"uriTemplate": "x://{id}", "name": "x"}], prompts=[]),
     {"resourceTemplates": (["x://{id}"], [], {}), "prompts": ([], ["p"], {})},
     "templates: +1 −0 ~0 (x://{id} added); prompts: +0 −1 ~0 (p removed)"),
    ("several sections", snap(),
     snap(tools=[{**tool(), "description": "Words.", "inputSchema": {"type": "object"}}, tool("count_words")],
          instructions="New."),
     {"tools": (["count_words"], [], {"word_count": [
         ("/description", "Count the words in a text.", "Words."),
         ("/inputSchema/properties", {"text": {"type": "string"}}, ABSENT),
         ("/inputSchema/required", ["text"], ABSENT)]}),
      "instructions": [("", "Use word_count for words.", "New.")]},
     "instructions changed; tools: +1 −0 ~1 (count_words added; word_count: description, inputSchema changed)"),
]


@pytest.mark.parametrize("before, after, expected, summary", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diff_servers(before, after, expected, summary):
    diff = diff_servers(before, after)
    got = {}
    for name, section in diff.sections.items():
        if section.is_empty:
            continue
        if section.changes:
            got[name] = [(c.path, c.before, c.after) for c in section.changes]
        else:
            got[name] = (section.added, section.removed,
                         {k: [(c.path, c.before, c.after) for c in cs] for k, cs in section.changed.items()})
    assert got == expected
    assert diff.summary() == summary
    assert diff.is_empty == (not expected)
    json.dumps(diff.to_json())  # the recording's diff event must be JSON as it is


def test_to_json_shape():
    after = snap(tools=[{**tool(), "description": "Words.", "annotations": {"readOnlyHint": True}},
                        tool("count_words")], instructions=None)
    data = diff_servers(snap(), after).to_json()
    assert data == {
        "sections": {
            "instructions": {"changes": [{"path": "", "before": "Use word_count for words."}]},
            "tools": {"added": ["count_words"], "removed": [], "changed": {"word_count": [
                {"path": "/description", "before": "Count the words in a text.", "after": "Words."},
                {"path": "/annotations", "after": {"readOnlyHint": True}}]}},
        },
        "summary": "instructions removed; tools: +1 −0 ~1 (count_words added; word_count: description, "
                   "annotations changed)",
    }
    assert diff_servers(snap(), snap()).to_json() == {"sections": {}, "summary": "nothing changed"}


def test_tool_names_for_marking():
    after = snap(tools=[tool(description="x"), tool("a"), tool("b")])
    diff = diff_servers(snap(), after)
    assert diff.changed_tool_names() == ["word_count"]
    assert diff.added_tool_names() == ["a", "b"]
    assert diff_servers(snap(), snap()).changed_tool_names() == []


def test_missing_and_odd_sections():
    assert diff_servers({}, {}).is_empty
    diff = diff_servers({}, snap())
    assert diff.added_tool_names() == ["word_count"]
    assert diff.summary().startswith("server info: +name +version; capabilities: +tools; instructions added; tools")
    assert diff_servers({"tools": "not a list"}, {"tools": None}).is_empty


def test_summary_caps_long_lists():
    after = snap(tools=[tool(), *(tool(f"t{i}") for i in range(6))])
    assert diff_servers(snap(), after).summary() == "tools: +6 −0 ~0 (t0, t1, t2 and 3 more added)"


def test_duplicate_names_fall_back_to_position():
    assert list(item_keys([tool("a"), tool("a"), {"name": 3}], "name")) == ["a", "[1]", "[2]"]


def test_paths_are_json_pointers():
    changes = diff_values({"a/b": {"~x": 1}}, {"a/b": {"~x": 2}})
    assert changes == [Change("/a~1b/~0x", 1, 2)]
    assert changes[0].op == "changed"
    assert [c.op for c in diff_values({"a": 1}, {"b": 1})] == ["removed", "added"]


def test_arrays_of_objects_compare_item_by_item():
    before = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    after = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert diff_values(before, after) == [Change("/anyOf/0/type", "string", "integer")]
    assert diff_values({"anyOf": [{}]}, {"anyOf": [{}, {}]}) == [Change("/anyOf", [{}], [{}, {}])]


# -- text_diff ------------------------------------------------------------------------------------------------

def test_text_diff_words():
    assert text_diff("Count the words in a text.", "Count the words in some text!") == [
        ("equal", "Count the words in "), ("delete", "a text."), ("insert", "some text!")]
    assert text_diff("same", "same") == [("equal", "same")]
    assert text_diff(None, "new text") == [("insert", "new text")]
    assert text_diff("old", "") == [("delete", "old")]
    assert text_diff("", None) == []


def test_text_diff_huge_falls_back():
    before, after = "a " * 4000, "b " * 4000
    assert text_diff(before, after) == [("delete", before), ("insert", after)]


@given(st.text(alphabet="ab \n.", max_size=60), st.text(alphabet="ab \n.", max_size=60))
def test_text_diff_rebuilds_both_sides(before, after):
    ops = text_diff(before, after)
    assert "".join(t for op, t in ops if op != "insert") == before
    assert "".join(t for op, t in ops if op != "delete") == after
    assert all(t for _, t in ops) and all(a[0] != b[0] for a, b in zip(ops, ops[1:]))


# -- schema_still_fits ------------------------------------------------------------------------------------------

OLD = {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}

FITS = [
    ("schema unchanged, even bad input", OLD, copy.deepcopy(OLD), '{"text": 5', True),
    ("nothing typed", OLD, {"type": "object"}, "  ", True),
    ("empty object", OLD, {"type": "object", "properties": {}}, {}, True),
    ("still valid", OLD, {**OLD, "description": "x"}, {"text": "hi", "n": 2}, True),
    ("json text valid", OLD, {**OLD, "description": "x"}, '{"text": "hi"}', True),
    ("new required property", OLD, {**OLD, "required": ["text", "lang"],
                                    "properties": {**OLD["properties"], "lang": {"type": "string"}}},
     {"text": "hi"}, True),
    ("narrower constraint", OLD, {**OLD, "properties": {**OLD["properties"], "text": {"type": "string",
                                                                                     "maxLength": 1}}},
     {"text": "hello"}, True),
    ("integer is a number", OLD, {**OLD, "properties": {"text": {"type": "string"}, "n": {"type": "number"}},
                                  "required": ["text", "x"]}, {"n": 2}, True),
    ("property renamed", OLD, {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]},
     {"text": "hi"}, False),
    ("type changed", OLD, {**OLD, "properties": {"text": {"type": "integer"}}}, {"text": "hi"}, False),
    ("not json", OLD, {"type": "object", "required": ["x"]}, "{text: hi}", False),
    ("not an object", OLD, {"type": "object", "required": ["x"]}, "[1, 2]", False),
    ("additional allowed", OLD, {"type": "object"}, {"anything": 1}, True),
    ("broken schema", OLD, {"type": "object", "properties": {"text": {"type": "strin"}}}, {"text": "hi"}, False),
    ("broken schema, property ok", OLD, {"type": 5, "properties": {"text": {}}}, {"text": "hi"}, True),
]


@pytest.mark.parametrize("old, new, arguments, fits", [c[1:] for c in FITS], ids=[c[0] for c in FITS])
def test_schema_still_fits(old, new, arguments, fits):
    assert schema_still_fits(old, new, arguments) is fits


def test_schema_refs_are_never_fetched(monkeypatch):
    import urllib.request

    def no_network(*args, **kwargs):
        raise AssertionError("a schema made us fetch a URL")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    new = {"type": "object", "properties": {"text": {"$ref": "http://127.0.0.1:9/evil.json"}}, "required": ["x"]}
    assert schema_still_fits(OLD, new, {"text": "hi"}) is True  # unresolvable: the property check decides
    local = {"$defs": {"s": {"type": "string"}}, "type": "object", "properties": {"text": {"$ref": "#/$defs/s"}}}
    assert schema_still_fits(OLD, local, {"text": "hi"}) is True
    assert schema_still_fits(OLD, {**local, "additionalProperties": False}, {"text": 5}) is True  # lenient: a $ref has no `type` to check
