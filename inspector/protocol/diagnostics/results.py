"""Pure: does a server's result have the shape its method defines in the negotiated protocol revision?

The wire types come from `mcp_types` (the SDK's types for 2025-11-25 and 2026-07-28). Older handshake revisions
(2024-11-05 .. 2025-06-18) are checked with the 2025-11-25 types, leniently: everything those revisions require is
still required in 2025-11-25, and fields that appeared later are optional there. A few checks the types cannot make
are done here: content block types, base64 data, structuredContent against the tool's outputSchema.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from inspector.protocol import schemas
from inspector.protocol.eras import LEGACY_VERSION, MODERN_VERSION, STRUCTURED_CONTENT_SINCE

LEGACY_SCHEMA = LEGACY_VERSION
"""The mcp_types revision the handshake-era results are checked with."""
MODERN = MODERN_VERSION
CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def schema_version(version: str | None) -> tuple[str | None, str]:
    """(the mcp_types revision to validate with, a note for the text); (None, "") when nothing applies."""
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    if not version:
        return None, ""
    if version == MODERN:
        return MODERN, ""
    if version == LEGACY_SCHEMA:
        return LEGACY_SCHEMA, ""
    if version in KNOWN_PROTOCOL_VERSIONS:
        return version, f" (checked with the {LEGACY_SCHEMA} types, applied leniently to {version})"
    return LEGACY_SCHEMA, f" (unknown revision {version!r}: checked with the {LEGACY_SCHEMA} types, leniently)"


def is_base64(data: Any) -> bool:
    """Standard base64 with padding (what image/audio data and blobs must be)."""
    if not isinstance(data, str) or len(data) % 4 or not _BASE64.fullmatch(data):
        return False
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def content_problems(blocks: Any, where: str) -> list[str]:
    """Unknown content block types and data that is not base64."""
    if not isinstance(blocks, list):
        return []
    problems = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            problems.append(f"{where}[{i}] is not an object")
            continue
        kind = block.get("type")
        if kind not in CONTENT_TYPES:
            problems.append(f"{where}[{i}] has unknown type {kind!r} (known: {', '.join(CONTENT_TYPES)})")
        elif kind in ("image", "audio") and "data" in block and not is_base64(block["data"]):
            problems.append(f"{where}[{i}] ({kind}) data is not base64")
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "blob" in block["resource"] \
                and not is_base64(block["resource"]["blob"]):
            problems.append(f"{where}[{i}].resource.blob is not base64")
    return problems


def _own_checks(method: str, result: dict, tool: dict | None, version: str) -> list[str]:
    problems: list[str] = []
    if method == "tools/call":
        problems += content_problems(result.get("content"), "content")
        schema = tool.get("outputSchema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and result.get("isError") is not True and version >= STRUCTURED_CONTENT_SINCE:
            if "structuredContent" not in result:
                problems.append(f"tool {tool.get('name')!r} has an outputSchema but the result has no "
                                "structuredContent")
            else:
                problems += _match_output_schema(schema, result["structuredContent"])
    elif method == "prompts/get":
        for i, message in enumerate(result.get("messages") or []):
            if isinstance(message, dict) and isinstance(message.get("content"), dict):
                problems += content_problems([message["content"]], f"messages[{i}].content")
    elif method == "resources/read":
        for i, item in enumerate(result.get("contents") or []):
            if isinstance(item, dict) and "blob" in item and not is_base64(item["blob"]):
                problems.append(f"contents[{i}].blob is not base64")
    return problems


def output_schema_problem(tool: Any, result: Any) -> str:
    """Why a tool's outputSchema could not check this result's structuredContent (an unresolvable or remote $ref,
    ...), or "" when it could (or there is nothing to check). A schema the metaschema rejects is the tool review's
    to report."""
    schema = tool.get("outputSchema") if isinstance(tool, dict) else None
    if not (isinstance(schema, dict) and isinstance(result, dict) and "structuredContent" in result) \
            or result.get("isError") is True or schemas.check(schema) is not None:
        return ""
    # $refs resolve lazily, so only checking the actual value shows whether the ones it reaches resolve.
    problem = schemas.validate(schema, result["structuredContent"])
    return f"tool {tool.get('name')!r}: its outputSchema cannot be used: {problem}" \
        if isinstance(problem, schemas.SchemaProblem) else ""


def _match_output_schema(schema: dict, value: Any) -> list[str]:
    error = schemas.best_error(schema, value)
    if error is None or isinstance(error, schemas.SchemaProblem):
        return []  # a schema that cannot be used is reported on its own (output_schema_problem, the review)
    place = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return [f"structuredContent does not match the outputSchema at {place}: {error.message}"]


def _pydantic_problems(method: str, version: str, result: dict) -> list[str]:
    import pydantic
    from mcp_types import methods

    try:
        methods.validate_server_result(method, version, result)
    except (KeyError, ValueError) as exc:
        if isinstance(exc, pydantic.ValidationError):
            return _summarize(exc)
        return []  # no type for this method in this revision
    return []


def _summarize(exc: Any, limit: int = 3) -> list[str]:
    seen: list[str] = []
    for err in exc.errors():
        # Union members appear in the location as model names (e.g. content.0.TextContent.type): drop them.
        loc = ".".join(str(p) for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper()))
        line = f"{loc or '(top)'}: {err['msg']}"
        if line not in seen:
            seen.append(line)
    more = f" (and {len(seen) - limit} more)" if len(seen) > limit else ""
    return ["; ".join(seen[:limit]) + more] if seen else []


def _task_problems(result: dict) -> list[str]:
    """A task-augmented request's answer: a CreateTaskResult (handshake era, 2025-11-25 types)."""
    import pydantic
    from mcp_types._v2025_11_25 import CreateTaskResult

    try:
        CreateTaskResult.model_validate(result)
    except pydantic.ValidationError as exc:
        return _summarize(exc)
    return []


def result_problems(method: str, version: str | None, result: Any, tool: dict | None = None, *,
                    task: bool = False) -> str:
    """One text naming what is wrong with a result, or "" when it fits (or nothing can be checked).

    `task`: the request carried `task`, so the handshake era answers it with a CreateTaskResult."""
    types_version, note = schema_version(version)
    if types_version is None:
        return ""
    if not isinstance(result, dict):
        return f"the {method} result is not an object{note}"
    if task and types_version != MODERN:
        problems = _task_problems(result)
        return (f"the {method} result of a task-augmented request does not fit CreateTaskResult in the "
                f"{types_version} schema{note}: " + "; ".join(problems)) if problems else ""
    problems = []
    if types_version == MODERN and "resultType" not in result:
        problems.append(f"resultType is missing (required on every result since {MODERN})")
        result = {**result, "resultType": "complete"}
    if result.get("resultType") in ("input_required", "task"):
        # Not the method's own result yet: the answer asks for input, or names a task that will produce it.
        requests = result.get("inputRequests")
        if result["resultType"] == "input_required" and not (
                isinstance(requests, dict) and all(isinstance(v, dict) and isinstance(v.get("method"), str)
                                                   for v in requests.values())):
            problems.append("inputRequests must be an object of {method, params} requests")
        return (f"the {method} result does not fit the {types_version} schema{note}: " + "; ".join(problems)
                if problems else "")
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    effective = version if version in KNOWN_PROTOCOL_VERSIONS else types_version
    own = _own_checks(method, result, tool, effective)
    problems += own
    if not own:  # the types would repeat our own findings less clearly
        problems += _pydantic_problems(method, types_version, result)
    if not problems:
        return ""
    return f"the {method} result does not fit the {types_version} schema{note}: " + "; ".join(problems)
