"""Pure peeking into JSON-RPC messages and HTTP answers: ids, methods, the era a message declares, header values.

No I/O: the transport looks inside messages only to choose headers and to know which requests are answered.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from inspector.protocol.json import loads
from inspector.protocol.eras import META_VERSION, MODERN, era_of_version

if TYPE_CHECKING:
    import httpx

EVENT_STREAM = "text/event-stream"
BODY_PREVIEW_CHARS = 500
# Methods whose Mcp-Name header (2026-07-28) mirrors one of their params.
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_DATE_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
_SAFE_HEADER = re.compile(r"[\x20-\x7e]*")
NOT_JSON = object()


def id_key(value: Any) -> str:
    """A key for a JSON-RPC id that keeps 1, "1" and true apart."""
    return json.dumps(value, sort_keys=True, default=str)


def request_ids(msg: Any) -> dict[str, Any]:
    """The ids of the requests in an outgoing message (a batch may hold several), by key."""
    items = msg if isinstance(msg, list) else [msg]
    return {id_key(item["id"]): item["id"] for item in items
            if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item}


def response_items(value: Any) -> list[dict]:
    """The responses (result or error, no method) in an incoming message."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and "method" not in item
            and ("result" in item or "error" in item)]


def looks_jsonrpc(value: Any) -> bool:
    """A JSON value an MCP server could mean as JSON-RPC (a message, or a non-empty batch of them)."""
    if isinstance(value, list):
        return bool(value) and all(looks_jsonrpc(item) for item in value)
    return isinstance(value, dict) and any(key in value for key in ("jsonrpc", "method", "result", "error"))


def is_jsonrpc_error(value: Any) -> bool:
    """Does the value hold a JSON-RPC error object (what tells a Streamable HTTP refusal from a legacy server)?"""
    return any("error" in item for item in response_items(value))


def names_unknown_session(value: Any) -> bool:
    """A JSON-RPC error that says our session id is not (or no longer) valid: the TypeScript SDK answers a
    forgotten session with HTTP 400 "Bad Request: No valid session ID provided" where the spec says 404."""
    return any("session" in str((item.get("error") or {}).get("message", "")).lower()
               for item in response_items(value) if isinstance(item.get("error"), dict))


def parse_json(body: bytes) -> Any:
    """The parsed value, or NOT_JSON (null is a JSON value, so None cannot mean "not JSON")."""
    try:
        return loads(body)
    except ValueError:
        return NOT_JSON


def method_of(msg: Any) -> str | None:
    """The method of a request or notification; None for anything else."""
    return msg.get("method") if isinstance(msg, dict) and isinstance(msg.get("method"), str) else None


def params_of(msg: Any) -> dict:
    """The message's params when they are an object, else {}."""
    params = msg.get("params") if isinstance(msg, dict) else None
    return params if isinstance(params, dict) else {}


def modern_version(msg: Any) -> str | None:
    """The 2026-07-28-or-later version a message declares in `params._meta`, else None (handshake era)."""
    meta = params_of(msg).get("_meta")
    version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    if isinstance(version, str) and _DATE_VERSION.fullmatch(version) and era_of_version(version) == MODERN:
        return version
    return None


def header_value(value: str) -> str:
    """A header value as 2026-07-28 writes it: verbatim if printable ASCII, else `=?base64?<utf-8 b64>?=`."""
    looks_wrapped = value.startswith("=?base64?") and value.endswith("?=")
    if _SAFE_HEADER.fullmatch(value) and value == value.strip() and not looks_wrapped:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def media_type_of(response: httpx.Response) -> str:
    """The Content-Type without its parameters, lower case ("" when there is none)."""
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def is_json_type(media_type: str) -> bool:
    """application/json or a +json type."""
    return media_type == "application/json" or media_type.endswith("+json")


def preview(body: bytes | None) -> str | None:
    """The start of a body as text, for an event; None when there is no body."""
    if not body:
        return None
    return body.decode("utf-8", "replace")[:BODY_PREVIEW_CHARS]


def one_line(text: str) -> str:
    """The text with every run of whitespace, line breaks included, as one space."""
    return " ".join(str(text).split())
