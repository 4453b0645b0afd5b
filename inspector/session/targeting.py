"""Targeting: points the live session at a server, from the command line (the runner) or a --config entry (the
page). Views never build transports: the session turns its target into one (client/connect.py).
"""

from __future__ import annotations

from typing import Callable

from inspector.client_configs import ServerEntry
from inspector.config import Config, server_environment
from inspector.client.targets import redacted


class Targeting:
    """The session's current target, and how to change it."""

    def __init__(self, session, config: Config, port: Callable[[], int | None]) -> None:
        self.session = session
        self.config = config
        self.port = port
        """Our own page's port, read at each connect: an HTTP server may never be pointed back at us."""
        session.refuse_ports = lambda: [self.port() or 0]
        self.current_entry: str | None = config.entry_name
        """The --config entry the page started last (shown in the page and in the config snippet)."""

    def use_http(self, url: str, transport: str, headers) -> None:
        """Reach the session's server over HTTP (the runner, for --url)."""
        self.session.url, self.session.http_headers = url, list(headers)
        self.session.http_transport_choice = transport

    def start_entry(self, entry: ServerEntry) -> None:
        """Switch the session to a --config entry (the page's picker): stdio command or HTTP URL."""
        config = self.config
        self.current_entry = entry.name
        describe: dict = {"config": config.config_file, "server": entry.name, "transport": entry.transport}
        if entry.transport == "stdio":
            describe["command"] = list(entry.command)
            self.session.retarget(command=list(entry.command), cwd=entry.cwd or config.cwd,
                                  env=server_environment(entry.env), describe=describe)
        else:
            describe["url"] = entry.url
            describe["headers"] = redacted(entry.headers)
            # -H values are in every entry already (cli: ServerEntry.with_headers), over the file's own
            self.session.retarget(url=entry.url, headers=list(entry.headers),
                                  describe=describe, transport=entry.transport)
