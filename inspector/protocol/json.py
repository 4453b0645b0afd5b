"""Pure: the small JSON primitives every other module shares, one of each, so they cannot disagree.

- `json_equal`: equality as JSON means it. 1 and 1.0 are the same number (JSON has one number type, and JSON Schema's
  `const`/`enum`/`uniqueItems` say so too), but true is not 1 (Python says it is). Used by the server diff, replay's
  compare and the schema forms alike.
- `escape` / `pointer`: RFC 6901 JSON pointers ("/a/0", "~" and "/" escaped).
- `jsonpath_child`: one JSONPath step ($.a, $[3], $["odd key"]) that jsonpath-ng parses back, for pasteable paths.
- `ABSENT`: the value on a side where a member does not exist at all (different from null).
- `REDACTED`: the one text that stands where a secret was.
- `loads`: the one decode of JSON from outside (a server, a file, a form): bounded nesting, only ValueError.
- `dumps`: the one readable encode for files and terminals: UTF-8 text kept, characters that act on a terminal or
  split a line escaped.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from collections.abc import Iterable

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

REDACTED = "[REDACTED]"
"""What a recording, an export or the page shows instead of a secret value."""

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

MAX_DEPTH = 128
"""How deeply arrays and objects may nest in a value decoded from outside (serde_json's default too). Real MCP
messages stay far below it, and re-encoding or pretty-printing such a value stays far below Python's recursion
limit on any thread. A deeper text is refused (a server's line becomes an invalid row that keeps its text)."""

_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class TooDeep(ValueError):
    """A JSON text nested deeper than allowed: not decoded, so nothing can choke on it later."""


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Do the arrays and objects of this JSON text nest deeper than `limit`? (Brackets inside strings do not
    count.) Linear and without recursion; cheap when the text has few brackets."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def loads(data: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` for data that came from outside: raises only ValueError (TooDeep beyond `max_depth` levels,
    UnicodeDecodeError for bytes that are not text), never RecursionError, whatever the text holds."""
    if isinstance(data, (bytes, bytearray)):  # as json.loads reads bytes
        data = bytes(data)
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    try:
        value = _scan_whole(data)
    except RecursionError:  # json's own limit (about 1,000 levels, less on a deep stack)
        raise TooDeep(f"nested more than {max_depth} levels deep") from None
    if too_deep(data, max_depth):
        raise TooDeep(f"nested more than {max_depth} levels deep")
    return value


scan_at = json.JSONDecoder().scan_once
"""json's own (C) scanner: (value, end) for the JSON value starting at a position of a text (StopIteration when
there is none), called without json.loads's wrapping: a flood's lines are decoded at the floor's cost, and a run of
lines is scanned line by line from one decoded text. No depth limit of its own beyond json's: callers bound it."""
_JSON_SPACE = " \t\n\r"


def _scan_whole(text: str) -> Any:
    """json.loads(text), by the scanner straight away when the text is one value (trailing JSON whitespace allowed);
    anything else (leading whitespace, extra data, not JSON) goes through json.loads, which raises its own error."""
    try:
        value, end = scan_at(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return json.loads(text)
    return value


_UNSAFE_IN_TEXT = re.compile("[\x7f-\x9f\u2028\u2029]")
"""What `dumps` writes as \\uXXXX although ensure_ascii=False would keep it raw (json escapes C0 itself):
- U+0080-U+009F, the C1 controls: U+009B is a CSI and U+009D an OSC on many terminals, so `cat recording.jsonl`
  could be driven by a server's text (security.md row 12); U+0085 (NEL) also ends a line for str.splitlines.
- DEL (U+007F): a control character; invisible, and nothing a reader of the file should have to guess at.
- U+2028 and U+2029: line and paragraph separators. Editors, str.splitlines and older JavaScript take them as line
  ends, which would cut a JSON line in two for a reader that splits text rather than bytes."""


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps` with ensure_ascii=False (Zürich stays readable), but with `_UNSAFE_IN_TEXT` escaped: the same
    JSON value, safe to print and to split into lines. Raises what json.dumps raises."""
    text = json.dumps(value, ensure_ascii=False, **options)
    # Those characters can only occur inside JSON strings here, where \uXXXX means exactly the same thing.
    return _UNSAFE_IN_TEXT.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class _Absent:
    """No value at all (the member does not exist), as opposed to JSON null; falsy, so `value or default` works."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:  # one marker, so `is ABSENT` holds across copies and pickles
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> _Absent:
        return self

    def __deepcopy__(self, memo: dict) -> _Absent:
        return self


ABSENT: Any = _Absent()


def is_number(value: Any) -> bool:
    """A JSON number (bool is an int in Python, but not a number in JSON)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: 1 == 1.0, true != 1, objects by members (order ignored), arrays in order.

    ABSENT equals only ABSENT.
    """
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def escape(segment: Any) -> str:
    """One JSON pointer segment: "~" becomes "~0" and "/" becomes "~1"."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def unescape(segment: str) -> str:
    """The member name an escaped JSON pointer segment stands for."""
    return segment.replace("~1", "/").replace("~0", "~")


def pointer(path: Iterable[Any]) -> str:
    """The JSON pointer of a data path: () → "", ("a", 0) → "/a/0"."""
    return "".join("/" + escape(p) for p in path)


def jsonpath_child(path: str, key: Any) -> str:
    """path.key, path[3] or path["odd key"]: a JSONPath to a child."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    if _PLAIN_NAME.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
