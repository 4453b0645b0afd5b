"""Servers listed in the config files of other MCP clients: read one, pick one.

Formats read (all parsed with json5, so comments and trailing commas are fine everywhere):

* Claude Desktop / Claude Code / Cursor:
  ``{"mcpServers": {NAME: {"command", "args", "env", "cwd"} | {"url", "headers"}}}``,
  with an optional ``"type"`` (``stdio``, ``http``, ``streamable-http``, ``sse``); a ``url`` without one is reached
  as ``--url`` is: Streamable HTTP, falling back to the legacy HTTP+SSE transport (transport ``auto``).
* VS Code ``mcp.json``: ``{"servers": {NAME: {"type", ...}}, "inputs": [...]}``, plus ``envFile`` (dotenv syntax,
  read with python-dotenv); the older ``settings.json`` form ``{"mcp": {"servers": ..., "inputs": ...}}`` is read too.

Values may use ``${…}`` variables (client_configs.variables).

What is wrong with an entry is said in words, one line each, instead of raising: ``problems`` block a start,
``notes`` do not (``disabled: true`` is a note: picking that server by name is a deliberate choice).
Every problem about one env variable starts with ``"env KEY "`` and its key is in ``unresolved_env``, so
``ServerEntry.with_env`` can drop it once ``-e KEY=...`` supplies the value; likewise every problem about one header
starts with ``"header NAME "``, for ``ServerEntry.with_headers`` and ``-H 'NAME: value'``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import json5

from inspector.client_configs.env_file import merge_env_file
from inspector.client_configs.variables import Context, expand, in_workspace, workspace_folder

TRANSPORTS = ("stdio", "streamable-http", "sse")

_PLACEHOLDER = re.compile(r"^<set .* here>$", re.DOTALL)
_JSON5_POSITION = re.compile(r"^<string>:(\d+) (.*) at column (\d+)$", re.DOTALL)


class ConfigError(Exception):
    """A config file that cannot be used at all; the message is one line for the user."""


@dataclass(frozen=True)
class ServerEntry:
    """One server of a config file, with every variable resolved that could be."""

    name: str
    """The key in the file, spelled as there."""
    transport: str
    """"stdio", "streamable-http", "sse", or "auto" (a url with no type: Streamable HTTP, falling back to SSE)."""
    command: tuple[str, ...] = ()
    """argv: command + args (stdio only)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment (stdio only); envFile values first, then the entry's own env (which wins)."""
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()
    """Why the server cannot be started as written; one line each."""
    notes: tuple[str, ...] = ()
    """Worth telling but not blocking (disabled in the file, envFile lines skipped)."""
    unresolved_env: tuple[str, ...] = ()
    """Env keys without a usable value: ``-e KEY=...`` fixes each (see with_env)."""
    env_file: str | None = field(default=None)
    """The envFile's resolved path; load_config_file reads it (parse_config does no I/O)."""

    @property
    def startable(self) -> bool:
        """True when nothing blocks a start: notes alone do not."""
        return not self.problems

    def with_env(self, overrides: Mapping[str, str]) -> ServerEntry:
        """This entry with ``-e KEY=VALUE`` values applied, and the problems they fix dropped."""
        env = dict(self.env)
        env.update(overrides)
        fixed = [key for key in self.unresolved_env if key in overrides]
        problems = tuple(p for p in self.problems if not any(p.startswith(f"env {key} ") for key in fixed))
        return replace(self, env=tuple(env.items()), problems=problems,
                       unresolved_env=tuple(k for k in self.unresolved_env if k not in overrides))

    def with_headers(self, overrides: Iterable[tuple[str, str]]) -> ServerEntry:
        """This HTTP entry with ``-H`` values applied (a header of the same name, in any case, is replaced), and the
        problems they fix dropped: how a ``${input:...}`` in a header is supplied. A stdio entry has no headers."""
        overrides = list(overrides)
        if self.transport == "stdio" or not overrides:
            return self
        given = {name.lower() for name, _ in overrides}
        kept = [(name, value) for name, value in self.headers if name.lower() not in given]
        problems = tuple(p for p in self.problems
                         if not (p.startswith("header ") and p.split(" ", 2)[1].lower() in given))
        return replace(self, headers=tuple(kept + overrides), problems=problems)



# ---------------------------------------------------------------- reading the file


def parse_config(text: str, *, path: str | None = None, environ: Mapping[str, str] | None = None,
                 home: str | None = None) -> dict[str, ServerEntry]:
    """Every server in a config file's text, in file order. No I/O: envFile is only located (see load_config_file).

    `path` places ``${workspaceFolder}`` and relative paths; without it they stay unresolved. `environ` defaults to
    os.environ and `home` to the user's home folder.
    """
    where = path or "the config file"
    data = _parse_json5(text, where)
    servers, inputs, style = _server_map(data, where)
    ctx = Context(
        workspace=workspace_folder(path),
        home=home if home is not None else str(Path.home()),
        environ=os.environ if environ is None else environ,
        inputs=_input_descriptions(inputs),
        bare_env=style == "mcpServers",
    )
    return {str(name): _entry(str(name), raw, ctx) for name, raw in servers.items()}


def load_config_file(path: str) -> dict[str, ServerEntry]:
    """Read a config file, parse it against this process's environment, and merge each entry's envFile."""
    full = os.path.abspath(os.path.expanduser(path))
    try:
        text = Path(full).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a config file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    entries = parse_config(text, path=full)
    return {name: merge_env_file(entry) for name, entry in entries.items()}


def pick(entries: Mapping[str, ServerEntry], name: str | None) -> ServerEntry:
    """The server called `name` (exact, else the one case-insensitive match); with no name, the only server."""
    names = ", ".join(entries) or "(none)"
    if not entries:
        raise ConfigError("the config file lists no servers")
    if name is None:
        if len(entries) == 1:
            return next(iter(entries.values()))
        raise ConfigError(f"the config file lists {len(entries)} servers; pick one with --server NAME: {names}")
    if name in entries:
        return entries[name]
    folded = [key for key in entries if key.casefold() == name.casefold()]
    if len(folded) == 1:
        return entries[folded[0]]
    raise ConfigError(f"no server named {name!r} in the config file; it lists: {names}")


def _parse_json5(text: str, where: str) -> object:
    """The file's data, or a ConfigError naming line and column."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise ConfigError(f"{where}: is empty")
    try:
        return json5.loads(text)
    except ValueError as exc:
        message = str(exc)
        found = _JSON5_POSITION.match(message)
        if found:
            line, what, column = found.groups()
            message = f"line {line}, column {column}: {what[0].lower()}{what[1:]}"
        raise ConfigError(f"{where}: not valid JSON or JSON5: {message}") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid JSON or JSON5: nested too deeply") from None


def _server_map(data: object, where: str) -> tuple[dict, object, str]:
    """(servers, inputs, "mcpServers" | "servers") from the top level of a config file."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level is not an object with \"mcpServers\" or \"servers\"")
    holder = data
    # VS Code's settings.json used to keep the same content under "mcp".
    if "mcpServers" not in data and "servers" not in data and isinstance(data.get("mcp"), dict):
        holder = data["mcp"]
    for key in ("mcpServers", "servers"):
        if key in holder:
            servers = holder[key]
            if not isinstance(servers, dict):
                raise ConfigError(f"{where}: \"{key}\" is not an object of named servers")
            return servers, holder.get("inputs"), key
    raise ConfigError(f"{where}: has neither an \"mcpServers\" nor a \"servers\" map")


def _input_descriptions(inputs: object) -> dict[str, str]:
    """id -> description of VS Code's "inputs" entries (malformed ones are skipped: they only improve messages)."""
    found: dict[str, str] = {}
    for item in inputs if isinstance(inputs, list) else ():
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            found[item["id"]] = str(item.get("description") or "")
    return found


# ---------------------------------------------------------------- one entry


class _Builder:
    """Collects an entry's fields and problems while its raw object is read."""

    def __init__(self, name: str, ctx: Context) -> None:
        self.name = name
        self.ctx = ctx
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.unresolved_env: list[str] = []

    def expand(self, where: str, value: str, fix: str = "") -> str | None:
        """`value` with its variables resolved, or None after recording why it cannot be."""
        text, reasons = expand(value, self.ctx)
        if not reasons:
            return text
        self.problems.append(f"{where} uses {' and '.join(reasons)}{fix}")
        return None

    def env_problem(self, key: str, what: str) -> None:
        """A problem that `-e KEY=...` fixes; it starts with "env KEY " so ServerEntry.with_env can find it."""
        self.problems.append(f"env {key} {what}; set it with -e {key}=...")
        self.unresolved_env.append(key)


def _entry(name: str, raw: object, ctx: Context) -> ServerEntry:
    """One ServerEntry from its raw object: never raises, problems are recorded instead."""
    b = _Builder(name, ctx)
    if not isinstance(raw, dict):
        return ServerEntry(name, "stdio", problems=(f"is {_kind(raw)}, not an object with command or url",))
    if raw.get("disabled") is True:
        b.notes.append("disabled in the config file")
    transport = _transport(raw, b)
    fields: dict = {}
    if transport == "stdio":
        fields = _stdio_fields(raw, b)
    else:
        fields = _http_fields(raw, b)
    return ServerEntry(name, transport, problems=tuple(b.problems), notes=tuple(b.notes),
                       unresolved_env=tuple(b.unresolved_env), **fields)


def _transport(raw: dict, b: _Builder) -> str:
    """The entry's transport, from "type" or else from which of command / url it has."""
    url = raw.get("url", raw.get("serverUrl"))  # serverUrl: Windsurf's spelling
    has_command, has_url = raw.get("command") is not None, url is not None
    if has_command and has_url:
        b.problems.append("has both command and url")
    kind = raw.get("type")
    if kind is None:
        if not has_command and not has_url:
            b.problems.append("has neither command nor url")
        return "auto" if has_url and not has_command else "stdio"
    normal = str(kind).lower().replace("-", "").replace("_", "")
    transport = {"stdio": "stdio", "http": "streamable-http", "streamablehttp": "streamable-http", "sse": "sse"}.get(
        normal)
    if transport is None:
        b.problems.append(f"type {kind!r} is not one mcp-inspect knows (stdio, http, sse)")
        return "streamable-http" if has_url and not has_command else "stdio"
    if transport == "stdio" and not has_command:
        b.problems.append("missing command")
    if transport != "stdio" and not has_url:
        b.problems.append(f"type {kind} needs a url, and there is none")
    return transport


def _stdio_fields(raw: dict, b: _Builder) -> dict:
    """command (argv), env, cwd and env_file (the envFile's resolved path, for load_config_file) of a stdio entry."""
    return {"command": _argv(raw, b), "env": _env(raw, b), "cwd": _path(raw, "cwd", b),
            "env_file": _path(raw, "envFile", b)}


def _argv(raw: dict, b: _Builder) -> tuple[str, ...]:
    """command + args, expanded; a command with a slash is made absolute against the workspace."""
    command = raw.get("command")
    if command is None:
        return ()
    if not isinstance(command, str) or not command:
        b.problems.append("missing command" if command == "" else f"command is {_kind(command)}, not a string")
        return ()
    expanded = b.expand("command", command)
    argv = [command if expanded is None else in_workspace(expanded, b.ctx, only_with_slash=True)]
    args = raw.get("args", [])
    if args is None:
        args = []
    if not isinstance(args, list):
        b.problems.append(f"args is {_kind(args)}, not a list")
        args = []
    for index, arg in enumerate(args):
        if not isinstance(arg, str):
            b.problems.append(f"args[{index}] is {_kind(arg)}, not a string")
            arg = json.dumps(arg)
        expanded = b.expand(f"args[{index}]", arg)
        argv.append(arg if expanded is None else expanded)
    return tuple(argv)


def _env(raw: dict, b: _Builder) -> tuple[tuple[str, str], ...]:
    """The entry's env, expanded; unusable values stay as written and are recorded as fixable with -e."""
    env = raw.get("env") or {}
    if not isinstance(env, dict):
        b.problems.append(f"the env value is {_kind(env)}, not an object")
        return ()
    pairs: list[tuple[str, str]] = []
    for key, value in env.items():
        key = str(key)
        if value is None:  # VS Code allows null; we cannot unset a variable, so we leave it out and say so
            b.notes.append(f"env {key} is null and was left out")
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            b.env_problem(key, f"is {_kind(value)}, not a string")
            pairs.append((key, json.dumps(value)))
            continue
        text, reasons = expand(value, b.ctx)
        if reasons:
            b.env_problem(key, f"uses {' and '.join(reasons)}")
        elif _PLACEHOLDER.match(text):
            b.env_problem(key, f"is still the placeholder {text}")
        pairs.append((key, text))
    return tuple(pairs)


def _path(raw: dict, key: str, b: _Builder) -> str | None:
    """A path field (cwd, envFile), expanded and made absolute against the workspace. A cwd whose variables cannot
    be resolved stays as written (the problem blocks a start anyway); such an envFile is not read at all."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        b.problems.append(f"{key} is {_kind(value)}, not a string")
        return None
    expanded = b.expand(key, value)
    if expanded is None:
        return value if key == "cwd" else None
    return in_workspace(expanded, b.ctx, only_with_slash=False)


def _http_fields(raw: dict, b: _Builder) -> dict:
    """url and headers of an http / sse entry."""
    url = raw.get("url", raw.get("serverUrl"))
    if url is not None and not isinstance(url, str):
        b.problems.append(f"url is {_kind(url)}, not a string")
        url = None
    if url is not None:
        expanded = b.expand("url", url)
        if expanded is not None:
            parts = urlsplit(expanded)
            if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
                b.problems.append(f"url is not http(s): {expanded}")
            url = expanded
    return {"url": url, "headers": _headers(raw, b)}


def _headers(raw: dict, b: _Builder) -> tuple[tuple[str, str], ...]:
    """The entry's headers, expanded; unusable values are problems, each fixed by -H with its name (with_headers)."""
    headers = raw.get("headers") or {}
    if not isinstance(headers, dict):
        b.problems.append(f"headers is {_kind(headers)}, not an object")
        return ()
    pairs: list[tuple[str, str]] = []
    for key, value in headers.items():
        key = str(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            b.problems.append(f"header {key} is {_kind(value)}, not a string")
            continue
        text = b.expand(f"header {key}", value, f"; set it with -H '{key}: ...'")
        if text is not None and _PLACEHOLDER.match(text):
            b.problems.append(f"header {key} is still the placeholder {text}")
        pairs.append((key, value if text is None else text))
    return tuple(pairs)


def _kind(value: object) -> str:
    """A JSON value's kind in words, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
