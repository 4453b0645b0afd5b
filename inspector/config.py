"""The run's configuration: built once from the command line, never changed afterwards."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from inspector.command_line import server_environment  # noqa: F401 - defined with the faces' helpers, `call` needs it
from inspector.protocol.eras import PROBE_SECONDS
from inspector.protocol.secrets import inherited_secrets, target_secrets
from inspector.client.rpc import DEFAULT_TIMEOUT

DEFAULT_PORT = 6280
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Config:
    """Everything `mcp-inspect [OPTIONS] [--] COMMAND...` asked for."""

    command: tuple[str, ...]
    """The server's argv, untouched."""
    cwd: str | None = None
    """Working directory for the server (--cwd)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment for the server (-e KEY=VALUE); values never reach a recording."""
    host: str = "127.0.0.1"
    port: int | None = None
    """None: the first free port from 6280 up; 0: any free port."""
    open_browser: bool = True
    record_path: str | None = None
    no_record: bool = False
    timeout: float = DEFAULT_TIMEOUT
    demo: bool = False
    name: str = "server"
    """Short name of the server for the recording's file name."""
    watch: tuple[str, ...] = ()
    """--watch PATH: what to watch for changes (default: the folder of the server's script)."""
    no_watch: bool = False
    watch_globs: tuple[str, ...] = ()
    """--watch-glob PATTERN: the file patterns that count (replaces the default source patterns)."""
    restart_on_crash: bool = False
    max_timeout: float | None = None
    """--max-timeout: how far progress notifications may push a request's timeout (default 10 × --timeout)."""
    roots: tuple[str, ...] = ()
    """--root URI: the roots the inspector reports (default: the working directory as a file: URI)."""
    disabled_rules: frozenset = frozenset()
    """Rule ids switched off with --rules FILE (protocol warnings and description advice)."""
    protocol: str = "auto"
    """--protocol: auto, legacy, modern or a revision date."""
    probe_timeout: float = PROBE_SECONDS
    """--probe-timeout: how long server/discover may go unanswered after the server's first output."""
    url: str | None = None
    """--url: an MCP server reached over HTTP instead of a command."""
    transport: str = "auto"
    """--transport for a URL: auto (Streamable HTTP, falling back to HTTP+SSE), streamable-http or sse."""
    headers: tuple[tuple[str, str], ...] = ()
    """--header Name: value, sent with every HTTP request; values never reach a recording or the page."""
    config_file: str | None = None
    """--config FILE: the config file the server entries come from."""
    config_entries: tuple = ()
    """The entries of --config (client_configs.ServerEntry) the page may start; empty without --config."""
    entry_name: str | None = None
    """The entry of --config being run (--server NAME, or the one picked in the page)."""
    view: str | None = None
    """A recording to show read-only (`mcp-inspect view FILE`); nothing is started then."""
    recordings_dir: str = field(default_factory=lambda: str(Path.cwd() / "recordings"))

    def server_env(self) -> dict[str, str]:
        """The environment the server starts with: ours plus -e values."""
        return server_environment(self.env)

    def secrets(self) -> list[str]:
        """The values this run must never write or show (protocol.secrets masks them): the target's and every
        --config entry's (-e / env, -H / headers, the URL's, secret options' values), and our own environment's
        values under secret names, which a server inherits."""
        found = target_secrets(self.command, self.env, self.url, self.headers) + inherited_secrets(os.environ)
        for entry in self.config_entries:
            found += target_secrets(entry.command, entry.env, entry.url, entry.headers)
        return found

    def root_list(self) -> list[dict]:
        """The roots answered to roots/list."""
        if self.roots:
            return [{"uri": uri} for uri in self.roots]
        folder = Path(self.cwd or os.getcwd()).resolve()
        return [{"uri": folder.as_uri(), "name": folder.name or str(folder)}]

    def target(self) -> dict:
        """What the recording's header says was asked for."""
        if self.url:
            from inspector.client.targets import HttpTarget

            target = HttpTarget(self.url, self.transport, self.headers).recorded()
        else:
            target = {"transport": "stdio", "command": list(self.command), "cwd": self.cwd or os.getcwd()}
        if self.config_file:
            target["config"] = {"file": self.config_file, "server": self.entry_name}
        return target


def server_name(command: tuple[str, ...] | list[str], cwd: str | None) -> str:
    """The stem of the first argument that is an existing file, else the command's basename."""
    base = Path(cwd) if cwd else Path.cwd()
    for arg in command[1:]:
        if arg.startswith("-"):
            continue
        candidate = Path(arg) if os.path.isabs(arg) else base / arg
        if candidate.is_file():
            return candidate.stem
    return Path(command[0]).name if command else "server"
