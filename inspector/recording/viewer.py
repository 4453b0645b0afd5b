"""A recording opened for viewing: the same timeline and panels as a live session, read-only, no process.

The server panel and the tool list are rebuilt from what the recording holds: the handshake event, the last
tools/resources/prompts lists the server answered, and how the process ended.
"""

from __future__ import annotations

from typing import Any

from inspector.client.offer import LIST_METHODS, ServerState
from inspector.protocol.diagnostics.rules import RULES, Warning
from inspector.recording.store import Store

_LIST_BY_METHOD = {method: (key, attribute) for _, method, key, attribute in LIST_METHODS}


class RecordedSession:
    """Stands in for a Session when viewing (a SessionView): it answers what the page asks and can do nothing."""

    timeout = 60.0  # shown as the form's default timeout; nothing is ever sent from a viewer
    url: str | None = None
    """A viewer reaches no server, over HTTP or otherwise."""
    http_transport: str | None = None
    auth_needed: dict | None = None

    def __init__(self, store: Store, header: dict | None, problems: list[str], name: str) -> None:
        self.store = store
        self.header = header or {}
        target = self.header.get("target") if isinstance(self.header.get("target"), dict) else {}
        command = target.get("command") if isinstance(target.get("command"), list) else []
        self.command = [str(part) for part in command] or [name]
        self.problems = problems
        self.name = name
        self.calls: dict = {}
        self.last_arguments: dict[str, str] = {}
        self.tool_modes: dict[str, str] = {}
        self.cwd: str | None = None
        self.advertise: dict[str, bool] = {}
        self.roots: list[dict] = []
        self.http_headers: list[tuple[str, str]] = []
        self.server = ServerState(state="recorded")
        self.warnings: list[Warning] = []
        """The protocol warnings the recording holds (its `warning` events), oldest first: what the sender saw."""
        self._rebuild()

    def tool(self, name: str) -> dict | None:
        """The recorded tool of that name."""
        for tool in self.server.tools:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool
        return None

    def _rebuild(self) -> None:
        # Only the few rows that carry server state are read back from the file; finding them scans one column,
        # not a million rows.
        store = self.store
        for seq in sorted(store.seqs_of_kind("event") + store.seqs_of_kind("response")):
            row = store.row(seq)
            if row.kind == "event":
                self._on_event(store.record(seq))
            elif row.method in _LIST_BY_METHOD and row.pair_seq is not None:
                self._on_list(row.method, row.pair_seq, store.record(seq))

    def _on_event(self, record) -> None:
        detail = record.detail if record else {}
        if record is None:
            return
        server = self.server
        if record.event == "spawn":
            server.pid = detail.get("pid")
        elif record.event == "handshake":
            server.protocol_version = _str(detail.get("protocolVersion"))
            server.server_info = _dict(detail.get("serverInfo"))
            server.capabilities = _dict(detail.get("capabilities"))
            server.instructions = _str(detail.get("instructions"))
        elif record.event in ("spawn-failed",):
            server.error = str(detail.get("error", ""))
        elif record.event == "warning":
            self._on_warning(detail)

    def _on_warning(self, detail: dict) -> None:
        rule, seq, text = detail.get("rule"), detail.get("seq"), detail.get("text")
        if not (isinstance(rule, str) and isinstance(seq, int) and not isinstance(seq, bool)
                and isinstance(text, str)):
            return  # a hand-edited or damaged event: nothing to link to
        # A rule id this version does not know (a newer recorder's) still shows, without a fix to offer.
        self.warnings.append(Warning(rule, seq, text, RULES[rule][1] if rule in RULES else ""))
        row = self.store.row(seq)
        if row is not None:
            row.warning = text  # the row carries the mark, as it did in the live page

    def _on_list(self, method: str, request_seq: int, response) -> None:
        request = self.store.record(request_seq)
        if response is None or request is None or not isinstance(response.msg, dict):
            return
        result = response.msg.get("result")
        key, attribute = _LIST_BY_METHOD[method]
        if not isinstance(result, dict) or not isinstance(result.get(key), list):
            return
        params = request.msg.get("params") if isinstance(request.msg, dict) else None
        first_page = not (isinstance(params, dict) and params.get("cursor"))
        items = [] if first_page else list(getattr(self.server, attribute))
        setattr(self.server, attribute, items + result[key])


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
