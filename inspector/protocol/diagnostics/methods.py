"""Pure: which methods each protocol revision has (from mcp_types), and which capability each message of the
server needs: the tables the ProtocolChecker (protocol.py) checks messages against."""

from __future__ import annotations

from typing import Any, Iterable

from inspector.protocol import jsonrpc
from inspector.protocol.records import FROM_SERVER, TO_SERVER

# Server notification -> (capability path it needs in the legacy era, in the modern era).
SERVER_NOTIFICATION_CAPS = {
    "notifications/message": (("logging",), ("logging",)),
    "notifications/resources/updated": (("resources", "subscribe"), ("resources",)),
    "notifications/resources/list_changed": (("resources", "listChanged"), ("resources", "listChanged")),
    "notifications/tools/list_changed": (("tools", "listChanged"), ("tools", "listChanged")),
    "notifications/prompts/list_changed": (("prompts", "listChanged"), ("prompts", "listChanged")),
}
# Server -> client request -> the client capability it needs.
SERVER_REQUEST_CAPS = {"sampling/createMessage": ("sampling",), "elicitation/create": ("elicitation",),
                       "roots/list": ("roots",)}


def method_tables() -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(direction, message kind) -> the (method, version) pairs mcp_types knows."""
    from mcp_types import methods

    return {(TO_SERVER, jsonrpc.REQUEST): set(methods.CLIENT_REQUESTS),
            (TO_SERVER, jsonrpc.NOTIFICATION): set(methods.CLIENT_NOTIFICATIONS),
            (FROM_SERVER, jsonrpc.REQUEST): set(methods.SERVER_REQUESTS),
            (FROM_SERVER, jsonrpc.NOTIFICATION): set(methods.SERVER_NOTIFICATIONS)}


def known_versions() -> Iterable[str]:
    """The revisions mcp_types knows, looked up once per checker: an import statement per message cost about as
    much as the rest of checking a notification."""
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    return KNOWN_PROTOCOL_VERSIONS


def has_capability(capabilities: Any, path: Iterable[str]) -> bool:
    """Does a capabilities object declare the capability at path (present, and neither false nor null)?"""
    node = capabilities
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return node is not False and node is not None
