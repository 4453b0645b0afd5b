"""inspector.protocol.json and jsondiff: the one JSON equality, pointer, JSONPath step, ABSENT and the one diff."""

import copy

import pytest
from jsonpath_ng.ext import parse

from inspector.protocol.json import ABSENT, REDACTED, escape, json_equal, jsonpath_child, pointer, unescape
from inspector.protocol.jsondiff import ALIGNED, ELEMENTWISE, NAME_KEYS, Match, jsonpath, pointer_path, walk


@pytest.mark.parametrize("a, b, equal", [
    (1, 1.0, True),  # one JSON number type, as JSON Schema's const/enum say
    (True, 1, False),  # Python says equal; JSON does not
    (False, 0, False),
    (0, 0.0, True),
    ({"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]}, True),
    ({"a": 1}, {"a": 1, "b": None}, False),
    ([1, 2], [2, 1], False),
    ({"x": 1, "y": 2}, {"y": 2, "x": 1}, True),
    (None, ABSENT, False),  # null is a value; ABSENT is no value at all
    (ABSENT, ABSENT, True),
    ("1", 1, False),
])
def test_json_equal(a, b, equal):
    assert json_equal(a, b) is equal and json_equal(b, a) is equal


def test_absent_is_one_falsy_marker_that_survives_copies():
    assert not ABSENT and repr(ABSENT) == "ABSENT"
    assert copy.deepcopy({"v": ABSENT})["v"] is ABSENT and copy.copy(ABSENT) is ABSENT
    assert REDACTED == "[REDACTED]"


def test_pointer_escapes_tilde_before_slash():
    assert pointer(()) == "" and pointer(("a/b", "c~d", 0)) == "/a~1b/c~0d/0"
    assert unescape(escape("~1/~0")) == "~1/~0"


@pytest.mark.parametrize("key", ["plain", "with space", "dash-ed", 'quote"d', "ünï", 3])
def test_jsonpath_child_parses_back(key):
    value = {key: "found"} if isinstance(key, str) else [0, 1, 2, "found"]
    path = jsonpath_child("$", key)
    assert [m.value for m in parse(path).find(value)] == ["found"]


def test_one_walk_two_renderers():
    before = {"tools": [{"name": "a", "x": 1}, {"name": "b/c"}], "n": True}
    after = {"tools": [{"name": "b/c", "y": 2}], "n": 1}
    found = list(walk(before, after, arrays=ELEMENTWISE, keyed=NAME_KEYS))
    assert found == [(("tools", Match("name", "a")), {"name": "a", "x": 1}, ABSENT),
                     (("tools", Match("name", "b/c"), "y"), ABSENT, 2),
                     (("n",), True, 1)]
    assert [jsonpath(s) for s, _, _ in found] == ['$.tools[?(@.name=="a")]', '$.tools[?(@.name=="b/c")].y', "$.n"]
    assert [pointer_path(s) for s, _, _ in found] == ["/tools/a", "/tools/b~1c/y", "/n"]


def test_aligned_arrays_are_one_difference_unless_same_length_containers():
    assert list(walk({"r": ["a"]}, {"r": ["a", "b"]}, arrays=ALIGNED)) == [(("r",), ["a"], ["a", "b"])]
    assert list(walk([{"a": 1}], [{"a": 2}], arrays=ALIGNED)) == [((0, "a"), 1, 2)]
    assert list(walk(["a"], ["a", "b"], arrays=ELEMENTWISE)) == [((1,), ABSENT, "b")]
