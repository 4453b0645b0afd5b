"""Pure: name the server's protocol mistakes, one Record at a time, on the row where each happens.

Feed every record in store order to `ProtocolChecker.observe` (it learns the negotiated revision and capabilities
from the `handshake` event or the initialize/discover answer itself), and call `tick` now and then for the one rule
that is about time passing (a request nobody answers while the server sits silent). No I/O, no clock: `tick` is
told the time.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable

from inspector.protocol import jsonrpc
from inspector.protocol.json import TooDeep, loads
from inspector.protocol.eras import BATCH_VERSIONS, META_VERSION, MODERN_VERSION
from inspector.protocol.records import EVENT, FROM_SERVER, INVALID, MESSAGE, TO_SERVER, Record, refused_post
from inspector.protocol.diagnostics.methods import (SERVER_NOTIFICATION_CAPS, SERVER_REQUEST_CAPS, has_capability,
                                                     known_versions, method_tables)
from inspector.protocol.diagnostics.results import output_schema_problem, result_problems
from inspector.protocol.diagnostics.rules import Warning, warning

PROTOCOL_VERSION_META = META_VERSION
ANSWERED_KEPT = 10_000
"""How many answered ids the duplicate-response rule remembers (the newest): a server that answers twice does so
soon after, and remembering every one would grow with each request of a long session (~120 bytes per request)."""


@dataclass
class _Pending:
    seq: int
    method: str
    t: float
    params: Any
    timed_out: bool = False
    cancelled: bool = False


def _plain_notification(msg: Any) -> str | None:
    """The method of a well-formed notification (what the server sends most, often in floods), else None."""
    if isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and "id" not in msg:
        method = msg.get("method")
        return method if isinstance(method, str) else None
    return None


def _show_id(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _show_result(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _speaks_discover(result: Any) -> bool:
    """Does a server/discover success come from a server of the 2026-07-28 era? Its supportedVersions says so
    (eras.judge_probe decides the era by the same member)."""
    return isinstance(result, dict) and isinstance(result.get("supportedVersions"), list)


class ProtocolChecker:
    """Finds protocol mistakes in one session's records; returns new Warnings per record (each at most once)."""

    def __init__(self, timeout: float = 60.0, disabled: Iterable[str] = ()) -> None:
        self.timeout = timeout
        """Seconds after which an unanswered request counts for the silence rule (tick)."""
        self.disabled = frozenset(disabled)
        self.version: str | None = None
        """The negotiated protocol revision, once known."""
        self.server_capabilities: dict | None = None
        self.client_capabilities: dict | None = None
        self.tools: dict[str, dict] = {}
        """Tools by name, from tools/list results (for structuredContent against outputSchema)."""
        self.warnings: list[Warning] = []
        """Every warning so far, in the order found."""
        self._tables = method_tables()
        self._known_versions = known_versions()
        self._known_methods = {(d, k): {m for m, _ in pairs} for (d, k), pairs in self._tables.items()}
        self._emitted: set[tuple[str, int]] = set()
        self._silent: set[str] = set()
        self._fine_context: tuple = ()
        self._fine: set[str] = set()
        """Methods of server notifications found fine under `_fine_context` (the revision and the server's
        capabilities: all a well-formed notification is checked against), so a flood of one notification is
        checked once, not once per line."""
        self._reset_process()

    def _reset_process(self) -> None:
        self._pending: dict[str, _Pending] = {}
        self._answered: OrderedDict[str, int] = OrderedDict()
        self._alive = True
        self._last_stdout_t: float | None = None
        self._last_notification: tuple[str, int] | None = None
        self._last_sent_bad = False
        self._answers_arrived = False

    # -- feeding -------------------------------------------------------------------------------------------------

    def observe(self, record: Record) -> list[Warning]:
        """Learn from one record; the new warnings it shows (about this row, or an earlier request's row)."""
        found: list[tuple[str, int, str]] = []
        if record.kind == EVENT:
            self._event(record, found)
        elif record.kind == INVALID:
            if record.dir == FROM_SERVER:
                self._last_stdout_t = record.t
                self._invalid_line(record, found)
            else:
                self._last_sent_bad = True
        elif record.kind == MESSAGE:
            if record.dir == TO_SERVER:
                self._sent(record, found)
            elif record.dir == FROM_SERVER:
                self._last_stdout_t = record.t
                self._received(record, found)
        return self._emit(found)

    def tick(self, now: float, process_alive: bool, last_stdout_at: float | None = None) -> list[Warning]:
        """The silence rule: requests unanswered for `timeout` s while the process lives and writes nothing."""
        last = last_stdout_at if last_stdout_at is not None else self._last_stdout_t
        found: list[tuple[str, int, str]] = []
        if process_alive:
            for key, entry in list(self._pending.items()):
                if not entry.cancelled and now - entry.t >= self.timeout:
                    self._silence(key, entry, now - entry.t, last, found)
        return self._emit(found)

    def _emit(self, found: list[tuple[str, int, str]]) -> list[Warning]:
        out = []
        for rule, seq, text in found:
            if rule in self.disabled or (rule, seq) in self._emitted:
                continue
            self._emitted.add((rule, seq))
            out.append(warning(rule, seq, text))
        self.warnings.extend(out)
        return out

    # -- events ----------------------------------------------------------------------------------------------------

    def _event(self, record: Record, found: list) -> None:
        detail = record.detail or {}
        if record.event in ("spawn", "connect"):
            self._reset_process()  # a new process renegotiates; its ids start over
            self.version = self.server_capabilities = self.client_capabilities = None
            self.tools = {}
        elif record.event == "exit":
            self._alive = False
        elif record.event == "handshake":
            if isinstance(detail.get("protocolVersion"), str):
                self.version = detail["protocolVersion"]
            if isinstance(detail.get("capabilities"), dict):
                self.server_capabilities = detail["capabilities"]
        elif record.event == "timeout":
            key = jsonrpc.id_key(detail.get("id"))
            entry = self._pending.get(key) if key is not None else None
            if entry is not None:
                entry.timed_out = True
                if self._alive:
                    self._silence(key, entry, record.t - entry.t, self._last_stdout_t, found)

    def _silence(self, key: str, entry: _Pending, waited: float, last_stdout: float | None, found: list) -> None:
        if key in self._silent or (last_stdout is not None and last_stdout >= entry.t):
            return
        if entry.method == "server/discover":
            return  # handshake-era servers may ignore the era probe: the spec tolerates it, the client falls back
        self._silent.add(key)
        # A server whose answers already arrived flushes its stdout: blaming a missing flush() would mislead.
        why = ("it answered earlier requests, so its stdout is flushed: it ignores this request or never finishes "
               "it" if self._answers_arrived else "the classic missing flush() (the answer may be sitting in the "
               "server's stdout buffer), or a request the server ignores")
        found.append(("no-answer-silent", entry.seq,
                      f"no answer to {entry.method} within {max(waited, 0):.3g} s while the server process is "
                      f"alive and has written nothing on stdout since: {why}"))

    # -- what we sent ----------------------------------------------------------------------------------------------

    def _sent(self, record: Record, found: list) -> None:
        msg = record.msg
        kind, problem = jsonrpc.classify(msg)
        self._last_sent_bad = kind in (jsonrpc.INVALID, jsonrpc.BATCH) or bool(problem)
        if not isinstance(msg, dict):
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if kind == jsonrpc.REQUEST and msg["method"] == "initialize":
            # A dual-era client sends initialize after a server/discover probe failed: the version the probe
            # carried was never agreed, and initialize negotiates afresh.
            self.version = None
        if kind in (jsonrpc.REQUEST, jsonrpc.NOTIFICATION):
            self._version_gate(TO_SERVER, kind, msg["method"], record.seq, found)
        if kind == jsonrpc.REQUEST:
            key = jsonrpc.id_key(msg.get("id"))
            if key is not None:
                self._pending[key] = _Pending(record.seq, msg["method"], record.t, params)
                self._answered.pop(key, None)  # an id used again is a new request
            if msg["method"] == "initialize" and isinstance(params.get("capabilities"), dict):
                self.client_capabilities = params["capabilities"]
            meta = params.get("_meta")
            if self.version is None and isinstance(meta, dict) and isinstance(meta.get(PROTOCOL_VERSION_META), str):
                self.version = meta[PROTOCOL_VERSION_META]
                caps = meta.get("io.modelcontextprotocol/clientCapabilities")
                self.client_capabilities = caps if isinstance(caps, dict) else self.client_capabilities
        elif kind == jsonrpc.NOTIFICATION:
            self._last_notification = (msg["method"], record.seq)
            if msg["method"] == "notifications/cancelled":
                entry = self._pending.get(jsonrpc.id_key(params.get("requestId")) or "")
                if entry is not None:
                    entry.cancelled = True

    # -- what the server sent --------------------------------------------------------------------------------------

    def _invalid_line(self, record: Record, found: list) -> None:
        raw = record.raw or ""
        try:
            value = loads(raw)
        except TooDeep:
            value = None  # not a stray print(): reported below with the reason the line was not decoded
        except ValueError:
            shown = raw if len(raw) <= 80 else raw[:77] + "..."
            found.append(("stdout-not-json", record.seq,
                          f"the server wrote a line on stdout that is not JSON ({shown!r})"))  # the fix says why
            return
        if isinstance(value, dict) and "id" in value and "result" not in value and "error" not in value \
                and "method" not in value:
            found.append(("result-and-error", record.seq, "a response with neither result nor error"))
        else:
            found.append(("invalid-message", record.seq,
                          f"the server wrote JSON that is not a JSON-RPC message ({record.error or 'invalid'})"))

    def _received(self, record: Record, found: list) -> None:
        msg = record.msg
        if isinstance(msg, list):
            if self.version not in BATCH_VERSIONS:
                found.append(("batch", record.seq, f"the server sent a JSON-RPC batch of {len(msg)} message(s)"
                              + (f"; batches are not part of {self.version}" if self.version else "")))
            for item in msg:
                self._message(item, record, found)
            return
        context = (self.version, self.server_capabilities)
        if context != self._fine_context:
            self._fine_context, self._fine = context, set()
        method = _plain_notification(msg)
        if method is not None and method in self._fine:
            return
        before = len(found)
        self._message(msg, record, found)
        if method is not None and len(found) == before:
            self._fine.add(method)

    def _message(self, msg: Any, record: Record, found: list) -> None:
        seq = record.seq
        if not isinstance(msg, dict):
            found.append(("invalid-message", seq, "the server sent a JSON value that is not a JSON-RPC object"))
            return
        if msg.get("jsonrpc") != "2.0":
            got = "no jsonrpc member" if "jsonrpc" not in msg else f"jsonrpc {_show_id(msg['jsonrpc'])}"
            found.append(("missing-jsonrpc", seq, f'the message has {got}; it must say "jsonrpc": "2.0"'))
        kind, problem = jsonrpc.classify(msg)
        if kind == jsonrpc.INVALID:
            if "id" in msg and "method" not in msg:
                found.append(("result-and-error", seq, "a response with neither result nor error"))
            else:
                found.append(("invalid-message", seq, f"not a JSON-RPC message: {problem}"))
            return
        if kind in (jsonrpc.REQUEST, jsonrpc.NOTIFICATION):
            self._server_method(msg["method"], kind, seq, found)
            return
        if problem:
            found.append(("result-and-error", seq, "the response has both result and error"))
        if kind == jsonrpc.ERROR:
            self._error_shape(msg.get("error"), seq, found)
        self._response(msg, kind, problem, record, found)

    def _server_method(self, method: str, kind: str, seq: int, found: list) -> None:
        self._version_gate(FROM_SERVER, kind, method, seq, found)
        if kind == jsonrpc.NOTIFICATION and method in SERVER_NOTIFICATION_CAPS and self.server_capabilities is not None:
            legacy, modern = SERVER_NOTIFICATION_CAPS[method]
            path = modern if self.version == MODERN_VERSION else legacy
            if not has_capability(self.server_capabilities, path):
                found.append(("undeclared-capability", seq,
                              f"the server sent {method} but did not declare the capability "
                              f"{'.'.join(path)} in its initialize result"))
        if kind == jsonrpc.REQUEST and method in SERVER_REQUEST_CAPS and self.client_capabilities is not None:
            path = SERVER_REQUEST_CAPS[method]
            if not has_capability(self.client_capabilities, path):
                found.append(("undeclared-capability", seq,
                              f"the server sent {method} but the client did not declare the capability "
                              f"{'.'.join(path)}"))

    def _version_gate(self, direction: str, kind: str, method: str, seq: int, found: list) -> None:
        if self.version not in self._known_versions:
            return
        table = self._tables.get((direction, kind))
        # Only spec methods of another revision count: custom and experimental methods are the server's business.
        if table is None or method not in self._known_methods[(direction, kind)] or (method, self.version) in table:
            return
        who = "the client" if direction == TO_SERVER else "the server"
        found.append(("method-not-in-version", seq,
                      f"{who} sent {method}, which protocol revision {self.version} does not have"))

    def _error_shape(self, error: Any, seq: int, found: list) -> None:
        if not isinstance(error, dict):
            found.append(("error-code-not-integer", seq, "error is not an object with code and message"))
        elif not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
            got = "no code" if "code" not in error else f"code {_show_id(error.get('code'))}"
            found.append(("error-code-not-integer", seq, f"the error has {got}; it must be an integer"))

    def _response(self, msg: dict, kind: str, problem: str, record: Record, found: list) -> None:
        seq, key = record.seq, jsonrpc.id_key(msg.get("id"))
        if key is None:
            error = msg.get("error") if isinstance(msg.get("error"), dict) else {}
            if kind == jsonrpc.ERROR and (error.get("code") in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST)
                                          or self._last_sent_bad):
                return  # legal: an error for input whose id could not be read
            if kind == jsonrpc.ERROR and refused_post(record):
                # Streamable HTTP: a server that cannot accept a POST answers an HTTP error status whose body MAY
                # be an error without id. It answers that POST (our era probe, a request to a restarted server),
                # not a notification sent long before, nor a request it mislaid.
                return
            shown = "null" if msg.get("id", None) is None else _show_id(msg.get("id"))
            if self._last_notification is not None:
                method, at = self._last_notification
                found.append(("answered-notification", seq,
                              f"a response with id {shown} after the notification {method} (row {at}): "
                              "the server answered a notification"))
            else:
                found.append(("unmatched-response", seq, f"a response with id {shown} matches no request"))
            return
        entry = self._pending.pop(key, None)
        if entry is None:
            if key in self._answered:
                found.append(("duplicate-response", seq, f"a second response to id {_show_id(msg['id'])} "
                                                          f"(first answered on row {self._answered[key]})"))
                return
            hint = self._id_hint(msg["id"])
            found.append(("unmatched-response", seq, f"the response's id {_show_id(msg['id'])} matches no "
                                                     f"request that is waiting{hint}"))
            return
        self._answered[key] = seq
        if len(self._answered) > ANSWERED_KEPT:
            self._answered.popitem(last=False)
        self._answers_arrived = True
        if entry.timed_out and key not in self._silent and entry.method != "server/discover":  # the probe's 3 s
            # are the client's choice, not a request timeout the user set
            found.append(("late-response", seq, f"an answer to {entry.method} (row {entry.seq}) after it had "
                                                f"timed out ({record.t - entry.t:.3g} s after the request)"))
        if kind == jsonrpc.RESPONSE and not problem:
            self._result(entry, msg.get("result"), seq, found)

    def _id_hint(self, value: Any) -> str:
        for entry_key, entry in self._pending.items():
            other = json.loads(entry_key)
            if str(other) == str(value):
                return (f" (the {entry.method} request on row {entry.seq} has id {_show_id(other)}: "
                        "same text, different JSON type)")
        return ""

    def _result(self, entry: _Pending, result: Any, seq: int, found: list) -> None:
        if entry.method == "initialize" and isinstance(result, dict):
            if isinstance(result.get("protocolVersion"), str):
                self.version = result["protocolVersion"]
            if isinstance(result.get("capabilities"), dict):
                self.server_capabilities = result["capabilities"]
        elif entry.method == "server/discover" and not _speaks_discover(result):
            # A handshake-era server has no server/discover: judging its answer by the 2026-07-28 schema would
            # send the author after fields of an era they never wrote. The mistake is answering at all.
            found.append(("success-for-unknown-method", seq,
                          f"the server answered server/discover, a method it does not implement (its answer "
                          f"{_show_result(result)} is no DiscoverResult), with a success instead of the error "
                          f"-32601 Method not found"))
            return
        elif entry.method == "server/discover" and isinstance(result.get("capabilities"), dict):
            self.server_capabilities = result["capabilities"]
        elif entry.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            for tool in result["tools"]:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tools[tool["name"]] = tool
        tool = self.tools.get(entry.params.get("name")) if entry.method == "tools/call" else None
        # A tools/call that carried `task` is answered with a CreateTaskResult, not the tool's result.
        task = entry.method == "tools/call" and isinstance(entry.params.get("task"), dict)
        text = result_problems(entry.method, self.version, result, tool, task=task)
        if text:
            found.append(("result-schema", seq, text))
        unusable = output_schema_problem(tool, result)
        if unusable:
            found.append(("output-schema-unusable", seq, unusable))
