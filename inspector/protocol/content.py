"""Content blocks as the page shows them: pure functions from MCP content to plain view dicts.

Used for tool results, resources/read contents and prompt messages alike. Nothing here renders HTML: the
templates escape every string (security.md point 7). Only raster images become data: URIs; audio and binary
contents get a same-origin URL (`base/index`) that panels.py serves with their real type or as an attachment.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from inspector.protocol import schemas
from inspector.protocol.json import pointer
from inspector.protocol.text import RASTER_IMAGE_TYPES, pretty, safe_link, text_block

TEXT_LIMIT = 512 * 1024
"""Characters of one text block shown in the page; the full text stays in the timeline and the recording."""
SOURCE_LIMIT = 64 * 1024
"""Characters of a refused image (SVG) shown as source text."""
MAX_ERRORS = 50
TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml", "application/javascript")
"""Types besides text/* whose blobs the page also shows as text."""
_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$")


# -- small checks ----------------------------------------------------------------------------------------------

def mime_type(value: Any) -> str | None:
    """A syntactically valid type/subtype (lowercased, parameters dropped), or None."""
    if not isinstance(value, str):
        return None
    bare = value.split(";", 1)[0].strip().lower()
    return bare if _MIME.match(bare) else None


def is_raster(mime: Any) -> bool:
    """PNG, JPEG, GIF and WebP: the only images the page shows (SVG can carry script)."""
    return mime_type(mime) in RASTER_IMAGE_TYPES


def is_audio(mime: Any) -> bool:
    """An audio/* type, which the page plays from the content endpoint."""
    bare = mime_type(mime)
    return bare is not None and bare.startswith("audio/")


def decode_base64(data: Any) -> bytes | None:
    """The bytes of strict base64 text, or None when it is not base64."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def is_base64(data: Any) -> bool:
    """Whether data is strict base64 text."""
    return decode_base64(data) is not None


def base64_size(data: str) -> int:
    """Decoded size of base64 text without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def link(url: Any) -> str | None:
    """A server-given URL that the page may link to: http and https only."""
    return safe_link(url)


def download_name(uri: Any, mime: Any = None, fallback: str = "content") -> str:
    """A harmless file name for a download: the URI's last segment, else fallback (plus an extension)."""
    name = ""
    if isinstance(uri, str):
        name = uri.split("?", 1)[0].split("#", 1)[0].split("://", 1)[-1].rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or fallback
    if "." not in name:
        bare = mime_type(mime) or ""
        extension = {"application/octet-stream": "bin", "application/pdf": "pdf", "application/json": "json",
                     "text/plain": "txt", "audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3",
                     "image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg"}.get(bare)
        name += f".{extension}" if extension else ""
    return name


# -- blocks ------------------------------------------------------------------------------------------------------

def _text_view(text: str, mime: Any = None) -> dict:
    cut = len(text) > TEXT_LIMIT
    shown, is_json = text_block(text[:TEXT_LIMIT] if cut else text)
    return {"text": shown, "is_json": is_json, "cut": cut, "mime": mime_type(mime)}


def _binary_view(data: str, mime: Any, url: str, uri: Any = None) -> dict:
    """Blob or audio data: an inline image, a player, or a download, never a data: URI for non-raster bytes."""
    size = base64_size(data)
    if not is_base64(data):
        return {"kind": "bad", "note": "the data is not valid base64", "mime": mime_type(mime)}
    view = {"mime": mime_type(mime) or "application/octet-stream", "size": size, "url": url,
            "download": download_name(uri, mime)}
    if is_raster(mime):
        return {**view, "kind": "image", "src": f"data:{mime_type(mime)};base64,{data}"}
    if is_audio(mime):
        return {**view, "kind": "audio"}
    return {**view, "kind": "download", "text": _blob_text(data, mime)}


def _blob_text(data: str, mime: Any) -> str | None:
    """A text blob's characters (text/*, JSON, XML...), so the page shows it as text too (page.md finding 24)."""
    bare = mime_type(mime) or ""
    if not (bare.startswith("text/") or bare in TEXT_TYPES):
        return None
    try:
        return (decode_base64(data) or b"").decode("utf-8")[:TEXT_LIMIT]
    except UnicodeDecodeError:  # declared text, but not UTF-8: a download only
        return None


def block_view(block: Any, url: str) -> dict:
    """One ContentBlock as a view dict (see _block_view), with its `annotations` as (name, text) pairs."""
    view = _block_view(block, url)
    annotations = block.get("annotations") if isinstance(block, dict) else None
    if isinstance(annotations, dict) and annotations:
        view["annotations"] = annotation_pairs(annotations)
    return view


def annotation_pairs(annotations: dict) -> list[tuple[str, str]]:
    """Content annotations as the page lists them: audience, priority and lastModified first, then any others."""
    known = ("audience", "priority", "lastModified")
    names = [name for name in known if name in annotations] + sorted(k for k in annotations if k not in known)
    pairs = []
    for name in names:
        value = annotations[name]
        if name == "audience" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            text = ", ".join(value)
        else:
            text = value if isinstance(value, str) else pretty(value)[0]
        pairs.append((str(name), text))
    return pairs


def _block_view(block: Any, url: str) -> dict:
    """One ContentBlock (tool result or prompt message content) as a view dict with a "kind".

    Kinds: text, image, image-refused, audio, resource_link, resource (holding `contents`, itself a view of the
    embedded text or blob), download, bad (malformed block), unknown (shown as JSON). `url` is where the content
    endpoint serves this block's bytes.
    """
    if not isinstance(block, dict):
        return {"kind": "unknown", "json": pretty(block)[0]}
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"kind": "text", **_text_view(block["text"])}
    if kind == "image" and isinstance(block.get("data"), str):
        mime = block.get("mimeType")
        if not is_raster(mime):
            return _refused_image(block["data"], mime, url)
        view = _binary_view(block["data"], mime, url)
        return view if view["kind"] == "bad" else {**view, "kind": "image"}
    if kind == "audio" and isinstance(block.get("data"), str):
        view = _binary_view(block["data"], block.get("mimeType"), url)
        if view["kind"] in ("audio", "bad"):
            return view
        return {**view, "kind": "download", "note": f"declared as audio but typed {view['mime']}"}
    if kind == "resource_link" and isinstance(block.get("uri"), str):
        return {"kind": "resource_link", "uri": block["uri"], "name": _str(block.get("name")),
                "title": _str(block.get("title")), "description": _str(block.get("description")),
                "mime": mime_type(block.get("mimeType")), "size": block.get("size") if _is_int(block.get("size")) else None,
                "href": link(block["uri"])}
    if kind == "resource" and isinstance(block.get("resource"), dict):
        return {"kind": "resource", "contents": contents_view(block["resource"], url)}
    return {"kind": "unknown", "json": pretty(block)[0], "type": _str(kind)}


def contents_view(contents: Any, url: str) -> dict:
    """One TextResourceContents / BlobResourceContents (a resources/read item or an embedded resource)."""
    if not isinstance(contents, dict):
        return {"kind": "unknown", "json": pretty(contents)[0]}
    uri, mime = _str(contents.get("uri")), contents.get("mimeType")
    head = {"uri": uri, "href": link(uri)}
    if isinstance(contents.get("text"), str):
        return {**head, "kind": "text", **_text_view(contents["text"], mime)}
    if isinstance(contents.get("blob"), str):
        return {**head, **_binary_view(contents["blob"], mime, url, uri)}
    return {**head, "kind": "unknown", "json": pretty(contents)[0]}


def _refused_image(data: str, mime: Any, url: str) -> dict:
    """A non-raster image (SVG can run script): its source as text when it is text, and a download."""
    raw = decode_base64(data)
    if raw is None:
        return {"kind": "bad", "note": "the image data is not valid base64", "mime": mime_type(mime)}
    try:
        source = raw[:SOURCE_LIMIT].decode("utf-8")
    except UnicodeDecodeError:
        source = None
    return {"kind": "image-refused", "mime": mime_type(mime) or "unknown type", "size": len(raw), "url": url,
            "source": source, "download": download_name(None, mime, "image")}


def blob_of(item: Any) -> tuple[bytes, str | None, str] | None:
    """The bytes, declared type and download name of a block or contents that carries binary data, or None."""
    if not isinstance(item, dict):
        return None
    if item.get("type") == "resource" and isinstance(item.get("resource"), dict):
        item = item["resource"]
    if item.get("type") in ("image", "audio"):
        raw = decode_base64(item.get("data"))
        return (raw, mime_type(item.get("mimeType")), download_name(None, item.get("mimeType"), item["type"])) \
            if raw is not None else None
    raw = decode_base64(item.get("blob"))
    if raw is None:
        return None
    return raw, mime_type(item.get("mimeType")), download_name(item.get("uri"), item.get("mimeType"))


# -- whole results -----------------------------------------------------------------------------------------------

def result_view(result: Any, tool: dict | None, base: str) -> dict:
    """A tools/call result: its blocks, isError, and structuredContent checked against the tool's outputSchema."""
    if not isinstance(result, dict):
        return {"valid_shape": False, "json": pretty(result)[0]}
    content = result.get("content")
    blocks = [block_view(b, f"{base}/{i}") for i, b in enumerate(content)] if isinstance(content, list) else []
    is_error = result.get("isError") is True
    schema = tool.get("outputSchema") if isinstance(tool, dict) else None
    view: dict = {"valid_shape": True, "blocks": blocks, "is_error": is_error,
                  "content_missing": not isinstance(content, list), "structured": None, "validation": None}
    if "structuredContent" in result:
        view["structured"] = pretty(result["structuredContent"])[0]
        if isinstance(schema, dict):
            view["validation"] = validate(result["structuredContent"], schema)
    elif isinstance(schema, dict) and not is_error:
        view["validation"] = {"state": "missing", "errors": []}
    return view


def read_view(result: Any, base: str) -> dict:
    """A resources/read result: each contents item."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return {"valid_shape": False, "json": pretty(result)[0], "contents": []}
    return {"valid_shape": True, "contents": [contents_view(c, f"{base}/{i}") for i, c in enumerate(contents)]}


def prompt_view(result: Any, base: str) -> dict:
    """A prompts/get result: its description and each message's role and content."""
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        return {"valid_shape": False, "json": pretty(result)[0], "messages": []}
    shown = []
    for i, message in enumerate(messages):
        message = message if isinstance(message, dict) else {}
        role = message.get("role") if message.get("role") in ("user", "assistant") else "other"
        shown.append({"role": role, "role_text": _str(message.get("role")) or "(no role)",
                      "content": block_view(message.get("content"), f"{base}/{i}")})
    return {"valid_shape": True, "description": _str(result.get("description")), "messages": shown}


def item_at(kind: str, result: Any, index: int) -> Any:
    """The block or contents that `base/index` names in a call, read or prompt result."""
    key = {"call": "content", "read": "contents", "prompt": "messages"}.get(kind)
    items = result.get(key) if isinstance(result, dict) and key else None
    if not isinstance(items, list) or not 0 <= index < len(items):
        return None
    item = items[index]
    return item.get("content") if kind == "prompt" and isinstance(item, dict) else item


# -- structuredContent against outputSchema ----------------------------------------------------------------------

def validate(value: Any, schema: Any) -> dict:
    """{"state": "valid" | "invalid" | "bad-schema", "errors": [(path, message)]}; never fetches a network $ref."""
    if not isinstance(schema, dict):
        return {"state": "bad-schema", "errors": [("", "the outputSchema is not an object")]}
    checker = schemas.validator(schema)
    if isinstance(checker, schemas.SchemaProblem):  # the metaschema check: the place is inside the schema
        return {"state": "bad-schema", "errors": [(checker.pointer or "/", checker.message)]}
    found = schemas.errors(checker, value)
    if isinstance(found, schemas.SchemaProblem):  # a $ref outside the schema is reported, never retrieved
        return {"state": "bad-schema", "errors": [("", f"the outputSchema cannot be used: {found}")]}
    errors = []
    for error in sorted(found, key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        errors.append((pointer(error.absolute_path) or "/", error.message))
        if len(errors) >= MAX_ERRORS:
            errors.append(("", f"(more errors not shown; first {MAX_ERRORS} listed)"))
            break
    return {"state": "invalid" if errors else "valid", "errors": errors}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
