"""Pure JSON-RPC 2.0 helpers: decode one wire line, classify a message, build messages.

No I/O here. Payloads stay plain dicts exactly as they crossed the wire: an inspector must be able to show
(and send) what a stricter library would refuse.
"""

from __future__ import annotations

import json

from inspector.protocol.json import TooDeep, dumps, loads
from inspector.protocol.plain import Plain

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

# Message kinds, as shown in the timeline and used by the filters.
REQUEST = "request"
RESPONSE = "response"
NOTIFICATION = "notification"
ERROR = "error"
INVALID = "invalid"
BATCH = "batch"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class Decoded(Plain):
    """One line read from a server, decoded."""

    __slots__ = ("kind", "msg", "problem", "text")
    __hash__ = Plain.field_hash

    def __init__(self, kind: str, msg: Any = None, problem: str = "", text: str = "") -> None:
        self.kind = kind
        """request, response, error, notification, batch, or invalid."""
        self.msg = msg
        """The parsed JSON value (a dict, or a list for a batch); None when the line is not JSON."""
        self.problem = problem
        """Why the line is invalid (not UTF-8, not JSON, nested too deep, not a JSON-RPC object); empty otherwise."""
        self.text = text
        """The line as text (undecodable bytes replaced), kept for invalid lines."""


def classify(msg: Any) -> tuple[str, str]:
    """Return (kind, problem) for a parsed JSON value; problem is empty for a well-formed message."""
    if isinstance(msg, list):
        return BATCH, "" if msg else "empty batch"
    if not isinstance(msg, dict):
        return INVALID, "not a JSON-RPC object"
    has_method = isinstance(msg.get("method"), str)
    if has_method:
        return (REQUEST if "id" in msg else NOTIFICATION), ""
    if "error" in msg:
        return ERROR, "" if "result" not in msg else "both result and error"
    if "result" in msg:
        return RESPONSE, ""
    if "method" in msg:
        return INVALID, "method is not a string"
    return INVALID, "neither a request, a notification nor a response"


def decode_line(raw: bytes) -> Decoded:
    """Decode one line of a stdio stream (without its newline); whatever it holds, the answer is a Decoded.

    A line nested deeper than protocol.json.MAX_DEPTH is invalid and kept as its text: decoded, it could break every
    later walk of it (re-encoding it for the recording, showing it)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Decoded(INVALID, problem=f"not UTF-8 ({exc.reason} at byte {exc.start})",
                       text=raw.decode("utf-8", "replace"))
    try:
        msg = loads(text)
    except TooDeep as exc:
        return Decoded(INVALID, problem=f"not decoded: {exc}", text=text)
    except ValueError as exc:
        return Decoded(INVALID, problem=f"not JSON ({exc})", text=text)
    kind, problem = classify(msg)
    if kind == INVALID:
        return Decoded(INVALID, msg=msg, problem=problem, text=text)
    return Decoded(kind, msg=msg, problem=problem)


def method_of(msg: Any) -> str | None:
    """The method of a request or notification, else None."""
    if isinstance(msg, dict) and isinstance(msg.get("method"), str):
        return msg["method"]
    return None


def id_key(value: Any) -> str | None:
    """A hashable key for a JSON-RPC id: 1 and "1" are different ids, and never test ids for truthiness."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, str, float)):
        return None
    return json.dumps(value)


def request_ids(msg: Any) -> list[str]:
    """The id keys of the requests in a message (a request, or a batch); notifications and responses have none."""
    items = msg if isinstance(msg, list) else [msg]
    keys = (id_key(item.get("id")) for item in items if isinstance(item, dict) and classify(item)[0] == REQUEST)
    return [key for key in keys if key is not None]


def request(request_id: int | str, method: str, params: dict | None = None) -> dict:
    """Build a request object."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: dict | None = None) -> dict:
    """Build a notification object."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result_response(request_id: Any, result: Any) -> dict:
    """Build a success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict:
    """Build an error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def encode(msg: Any) -> bytes:
    """One wire and recording line: compact JSON, UTF-8, newline-terminated (json.dumps never emits a raw newline),
    with C1 controls, DEL and U+2028/2029 escaped (`protocol.json.dumps`): `cat` on a recording cannot be driven."""
    try:
        return (dumps(msg, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (json.loads makes one of the valid escape "\ud800") has no UTF-8 form: keep it escaped.
        return (json.dumps(msg, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
