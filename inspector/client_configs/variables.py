"""`${…}` variables in client config files, and the workspace folder they resolve against.

Known: ``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${userHome}``, ``${pathSeparator}``, ``${/}``,
``${env:NAME}`` and ``${input:ID}``; in ``mcpServers`` files also Claude Code's ``${NAME}`` and ``${NAME:-default}``.
``${input:...}`` can never be resolved: mcp-inspect has nobody to prompt. Nothing here raises: a variable that
cannot be resolved comes back with the reason, for the entry's problems.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

# Folders whose parent is the workspace: `.vscode/mcp.json`, `.cursor/mcp.json`.
_WORKSPACE_SUBFOLDERS = (".vscode", ".cursor")
_VARIABLE = re.compile(r"\$\{([^{}]*)\}")
_BARE_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Context:
    """What `${...}` variables resolve against."""

    workspace: str | None
    home: str
    environ: Mapping[str, str]
    inputs: Mapping[str, str]
    """input id -> its description, to name the prompt we cannot show."""
    bare_env: bool
    """Claude Code's `${NAME}` / `${NAME:-default}` (mcpServers files only)."""


def workspace_folder(path: str | None) -> str | None:
    """The folder that holds `.vscode/` (or `.cursor/`) when the file is in one, else the file's own folder."""
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) in _WORKSPACE_SUBFOLDERS:
        return os.path.dirname(folder)
    return folder


def expand(value: str, ctx: Context) -> tuple[str, list[str]]:
    """(value with every resolvable `${...}` replaced, the reasons for those that are not)."""
    reasons: list[str] = []

    def one(match: re.Match) -> str:
        resolved, reason = _variable(match.group(1), ctx)
        if reason is not None:
            reasons.append(f"{match.group(0)}, {reason}")
            return match.group(0)
        return resolved

    return _VARIABLE.sub(one, value), reasons


def _variable(name: str, ctx: Context) -> tuple[str, str | None]:
    """(value, None) for a variable we can resolve, else ("", why not)."""
    if name in ("workspaceFolder", "workspaceFolderBasename"):
        if ctx.workspace is None:
            return "", "which needs the config file's path"
        return (ctx.workspace if name == "workspaceFolder" else os.path.basename(ctx.workspace)), None
    if name == "userHome":
        return ctx.home, None
    if name in ("pathSeparator", "/"):
        return os.sep, None
    if name.startswith("env:"):
        key = name[4:]
        if key in ctx.environ:
            return ctx.environ[key], None
        return "", f"which is not set in mcp-inspect's environment (export {key} first)"
    if name.startswith("input:"):
        described = ctx.inputs.get(name[6:])
        about = f" (\u201c{described}\u201d)" if described else ""
        return "", f"which mcp-inspect cannot ask for{about}"
    bare = _BARE_ENV.match(name) if ctx.bare_env else None
    if bare:
        key, default = bare.groups()
        if key in ctx.environ:
            return ctx.environ[key], None
        if default is not None:
            return default, None
        return "", f"which is not set in mcp-inspect's environment (export {key} first)"
    return "", "which mcp-inspect does not know"


def in_workspace(value: str, ctx: Context, *, only_with_slash: bool) -> str:
    """A relative path made absolute against the workspace; a bare command name (npx, uvx) stays bare."""
    if ctx.workspace is None or os.path.isabs(value) or not value:
        return value
    if only_with_slash and "/" not in value and os.sep not in value:
        return value
    return os.path.normpath(os.path.join(ctx.workspace, value))

