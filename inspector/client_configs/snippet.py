"""The other way round: our server as an entry of a client's config file ("copy server entry").

Secrets never appear: env and header values, the values of secret options in the command (``--token X``) and a
URL's password and secret query values are ``<set KEY here>`` placeholders (Claude Desktop, Cursor), or
``${input:...}`` password prompts (VS Code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from inspector.client_configs.read import TRANSPORTS
from inspector.protocol.secrets import mask_argv, mask_url, shell_variable

FLAVOURS = ("claude", "cursor", "vscode")


def server_entry_snippet(*, name: str, command: Iterable[str] = (), env_keys: Iterable[str] = (),
                         cwd: str | None = None, url: str | None = None, header_names: Iterable[str] = (),
                         transport: str | None = None, flavour: str) -> str:
    """The JSON that adds this server to a client's config file ("copy server entry").

    flavour "claude" / "cursor" gives ``{"mcpServers": {...}}``, "vscode" gives ``{"servers": {...}, "inputs": [...]}``.
    Secrets never appear: env and header values are ``<set KEY here>`` placeholders, or ``${input:...}`` prompts
    (password inputs) for VS Code. `transport` ("streamable-http" or "sse") matters only with `url`.
    Note that none of these formats can escape a literal ``${`` in argv: such text would be read as a variable.
    """
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour must be one of {', '.join(FLAVOURS)}, not {flavour!r}")
    argv = list(command)
    if bool(argv) == bool(url):
        raise ValueError("give exactly one of command and url")
    kind = transport or ("stdio" if argv else "streamable-http")
    if kind == "http":
        kind = "streamable-http"
    if kind not in TRANSPORTS or (kind == "stdio") != bool(argv):
        raise ValueError(f"transport {kind!r} does not fit {'a command' if argv else 'a url'}")
    inputs: list[dict] = []
    secret = _vscode_secret(name, inputs) if flavour == "vscode" else _placeholder
    entry: dict = {}
    if flavour == "vscode":
        entry["type"] = {"stdio": "stdio", "streamable-http": "http", "sse": "sse"}[kind]
    if argv:
        argv = mask_argv(argv, placeholder=lambda option: secret(shell_variable(option)))[0]
        entry["command"], entry["args"] = argv[0], argv[1:]
        if env_keys := list(env_keys):
            entry["env"] = {key: secret(key) for key in env_keys}
        if cwd:
            entry["cwd"] = cwd
    else:
        if kind == "sse" and flavour != "vscode":
            entry["type"] = "sse"  # without a type a url reads as streamable HTTP
        entry["url"] = mask_url(url, placeholder=lambda part: secret(shell_variable(part)))
        if header_names := list(header_names):
            entry["headers"] = {key: secret(key) for key in header_names}
    document: dict = {"servers" if flavour == "vscode" else "mcpServers": {name: entry}}
    if inputs:
        document["inputs"] = inputs
    return json.dumps(document, indent=2, ensure_ascii=False)


def _placeholder(key: str) -> str:
    """The Claude / Cursor stand-in for a secret value."""
    return f"<set {key} here>"


def _vscode_secret(name: str, inputs: list[dict]):
    """A function key -> "${input:ID}" that also appends a password prompt for ID to `inputs`."""
    taken: set[str] = set()

    def secret(key: str) -> str:
        # Input ids are shared by the whole file, so they carry the server's name; "}" would end the variable.
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{key}").strip("-") or "value"
        ident, n = base, 2
        while ident in taken:
            ident, n = f"{base}-{n}", n + 1
        taken.add(ident)
        inputs.append({"type": "promptString", "id": ident, "description": f"{key} for the {name} server",
                       "password": True})
        return f"${{input:{ident}}}"

    return secret
