"""The command line the other way round: a request of this session as the `mcp-inspect call …` line that sends it
again; and what both faces (the command line and the page) say about a wrong invocation.

It is the inverse of cli.py's parsing, so it lives beside it; the page imports it without importing a command.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable

# protocol.secrets (its patterns compiled at import) is imported by the functions that make a command line: the
# headless commands import UsageError from here before they start the server, and must get there fast.

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any


class UsageError(Exception):
    """A wrong invocation: one line for the user, exit code 2."""


def env_pairs(items: list[str]) -> list[tuple[str, str]]:
    """The -e KEY=VALUE values as (key, value); raises UsageError."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env takes KEY=VALUE, got {item!r}")
        pairs.append((key, value))
    return pairs


def server_environment(extra: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The environment a server starts with: ours, with these (key, value) pairs over it."""
    env = dict(os.environ)
    env.update(dict(extra))
    return env


def env_keys(items: list[str]) -> list[str]:
    """The names given with -e (their values never reach a recording)."""
    return [item.partition("=")[0] for item in items]


def copy_as_command(target_command: list[str], msg: dict, cwd: str | None = None,
                    env_keys: list[str] | tuple[str, ...] = (), url: str | None = None,
                    header_names: list[str] | tuple[str, ...] = ()) -> str:
    """The `mcp-inspect call ...` line that sends this request again to the same server.

    Env values are never included: each -e KEY becomes `-e KEY="$KEY"`, read from the user's shell; an HTTP
    header's value becomes a shell variable named after the header that the shell insists on
    (`${AUTHORIZATION:?set AUTHORIZATION to ...}`), and so do the values of secret
    options (`--api-key "$API_KEY"`) and a URL's password and secret query values (`${PASSWORD}`, `${API_KEY}`).
    """
    method = msg.get("method") if isinstance(msg, dict) else None
    if not isinstance(method, str):
        raise ValueError("not a request: it has no method")
    params = msg.get("params")
    words = ["mcp-inspect", "call", method]
    keys = set(params) if isinstance(params, dict) else None
    if method == "tools/call" and keys == {"name", "arguments"} and isinstance(params["name"], str) \
            and isinstance(params["arguments"], dict):
        words += ["--tool", params["name"], "--args", _compact(params["arguments"])]
    elif method == "resources/read" and keys == {"uri"} and isinstance(params["uri"], str):
        words += ["--uri", params["uri"]]
    elif method == "prompts/get" and keys in ({"name"}, {"name", "arguments"}) and isinstance(params["name"], str) \
            and isinstance(params.get("arguments", {}), dict):
        words += ["--prompt", params["name"]]
        if "arguments" in params:
            words += ["--prompt-args", _compact(params["arguments"])]
    elif "params" in msg:
        words += ["--params", _compact(params)]
    if cwd:
        words += ["--cwd", cwd]
    line = [shlex.join(words)]
    line += [f"-e {_env_placeholder(key)}" for key in env_keys]
    if url:
        line += ["--url", _url_word(url)]
        line += [f'-H "{name}: {_header_variable(name)}"' for name in header_names
                 if re.fullmatch(r"[A-Za-z0-9-]+", name)]
    else:
        line += ["--", _command_words(target_command)]
    return " ".join(line)


def _header_variable(name: str) -> str:
    """A header's value as a shell variable that must be set: pasted without it, the shell stops with this hint
    before anything runs (an empty header would be refused anyway, far from the cause)."""
    from inspector.protocol.secrets import shell_variable

    variable = shell_variable(name)
    return f"${{{variable}:?set {variable} to the value of the {name} header}}"


def _command_words(argv: list[str]) -> str:
    """The server command for a shell, each secret option's value a shell variable the user sets."""
    from inspector.protocol.secrets import mask_argv, shell_variable

    masked, positions = mask_argv(argv, placeholder=lambda option: f'"${shell_variable(option)}"')
    return " ".join(word if i in positions else shlex.quote(word) for i, word in enumerate(masked))


def _url_word(url: str) -> str:
    """The URL for a shell: as is, or in double quotes with its secrets as ${VARIABLES} the user sets."""
    from inspector.protocol.secrets import mask_url, shell_variable

    marked = mask_url(url, placeholder=lambda name: f"\0{shell_variable(name)}\0")
    if marked == url:
        return shlex.quote(url)
    pieces = marked.split("\0")  # literal text and variable names, alternately
    return '"' + "".join(f"${{{piece}}}" if i % 2 else re.sub(r'([\\"$`])', r"\\\1", piece)
                         for i, piece in enumerate(pieces)) + '"'


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _env_placeholder(key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f'{key}="${key}"'  # the shell fills in the user's own value; ours never leaves the inspector
    return shlex.quote(f"{key}=...")  # not a shell variable name: the user types the value
