"""What a report says about a recording, computed once from its (already redacted) records: pure, typed results.

Both reports use it: the HTML report (which turns the results into the dicts its JSON carries) and the Markdown
report. The summary of the session (server, era, transport, command, times), one pairing pass (the timeline index:
each record's kind, method, the row it pairs with and the latency, as the page's Store computes them; and the calls:
each request with its answer and the stderr written meanwhile), the restarts with the diffs that followed, and the
problems (recorded warnings, the protocol checker, unreadable lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Iterable

from inspector import __version__
from inspector.protocol import jsonrpc
from inspector.protocol.diagnostics import RULES, ProtocolChecker
from inspector.protocol.records import (EVENT, FROM_SERVER, MESSAGE, STDERR, TO_SERVER, Pairer, Record, RecordError,
                                        describe_event, from_dict, message_kind)

STDERR_KEPT = 400
"""Stderr records kept per call; a report shows fewer still, and says how many it left out."""
OPEN_CALLS_FED = 32
"""Stderr goes to the newest this many open calls: a server that never answers must not make pairing quadratic."""


def as_records(records: Iterable[dict]) -> list[Record]:
    """The records again as Records (a redacted dict that no longer reads as one is left out)."""
    out = []
    for value in records:
        try:
            out.append(from_dict(value))
        except RecordError:
            continue
    return out


@dataclass(frozen=True)
class Summary:
    """Who was inspected, how and when: the report's header. None where the recording does not say."""

    server: str | None = None
    version: str | None = None
    era: str | None = None
    protocol_version: str | None = None
    transport: str | None = None
    command: list[str] | None = None
    url: str | None = None
    cwd: str | None = None
    env: list[str] = field(default_factory=list)
    """The names of the variables set for the server (their values are not the report's business)."""
    recorded_by: str | None = None
    reported_by: str = __version__
    created: str | None = None
    first_t: float | None = None
    last_t: float | None = None
    records: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    """Records per timeline kind."""
    restarts: int = 0

    @property
    def duration_s(self) -> float | None:
        return None if self.first_t is None or self.last_t is None else self.last_t - self.first_t


def summarize(header: dict | None, records: list[Record], rows: list[dict] | None = None) -> Summary:
    """The summary of a recording: the (newest) handshake event names the server, the header the target (`rows`,
    the index's rows, saves classifying again)."""
    header = header if isinstance(header, dict) else {}
    target = header.get("target") if isinstance(header.get("target"), dict) else {}
    handshake = next((r.detail for r in reversed(records) if r.kind == EVENT and r.event == "handshake"), {})
    info = handshake.get("serverInfo") if isinstance(handshake.get("serverInfo"), dict) else {}
    command = target.get("command") if isinstance(target.get("command"), list) else None
    times = [r.t for r in records if isinstance(r.t, (int, float))]
    counts: dict[str, int] = {}
    for kind in (row["kind"] for row in rows) if rows is not None else map(message_kind, records):
        counts[kind] = counts.get(kind, 0) + 1
    return Summary(
        server=_text(info.get("name")), version=_text(info.get("version")),
        era=_text(handshake.get("era")), protocol_version=_text(handshake.get("protocolVersion")),
        transport=_text(target.get("transport")),
        command=[str(part) for part in command] if command else None, url=_text(target.get("url")),
        cwd=_text(target.get("cwd")),
        env=sorted(str(key) for key in header["env"]) if isinstance(header.get("env"), dict) else [],
        recorded_by=_text(header.get("inspector")), created=_text(header.get("created")),
        first_t=min(times) if times else None, last_t=max(times) if times else None,
        records=len(records), counts=counts,
        restarts=sum(1 for r in records if r.kind == EVENT and r.event == "restart"))


@dataclass
class Call:
    """One request (of either side) and what answered it."""

    request: Record
    response: Record | None = None
    """The answer (a result or an error), None when none came."""
    latency_ms: float | None = None
    stderr: list[Record] = field(default_factory=list)
    """The stderr records written while the request was open (the first STDERR_KEPT)."""
    stderr_more: int = 0
    """How many more stderr records were written meanwhile."""

    @property
    def seq(self) -> int:
        return self.request.seq

    @property
    def seqs(self) -> tuple[int, ...]:
        return (self.seq,) if self.response is None else (self.seq, self.response.seq)

    @property
    def method(self) -> str:
        return str(self.request.msg.get("method"))

    @property
    def params(self) -> dict:
        params = self.request.msg.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def tool(self) -> str | None:
        """The tool, prompt or resource a call names, if any."""
        return next((self.params[key] for key in ("name", "uri") if isinstance(self.params.get(key), str)), None)

    @property
    def from_server(self) -> bool:
        return self.request.dir == FROM_SERVER

    @property
    def answer(self) -> dict:
        """The answer's message, {} when none came."""
        return self.response.msg if self.response is not None and isinstance(self.response.msg, dict) else {}

    @property
    def state(self) -> str:
        """pending, error (a JSON-RPC error), tool-error (a result with isError) or ok."""
        result = self.answer.get("result")
        return ("pending" if self.response is None else "error" if "error" in self.answer
                else "tool-error" if isinstance(result, dict) and result.get("isError") is True else "ok")

    @property
    def outcome(self) -> str:
        """ok, error CODE: MESSAGE, isError, or no answer."""
        error = self.answer.get("error")
        if isinstance(error, dict):
            return f"error {error.get('code')}: {error.get('message')}"
        return {"pending": "no answer", "tool-error": "isError"}.get(self.state, "ok")

    @property
    def failed(self) -> bool:
        return self.outcome != "ok"


@dataclass
class Index:
    """One pairing pass over a recording."""

    rows: list[dict]
    """Per record, what the timeline shows besides the record itself: kind, method, paired seq, latency, flags."""
    calls: list[Call]
    """Every request of either side, in request order."""


def index(records: list[Record]) -> Index:
    """Pair each request with its answer (both ways) and give each call the stderr written while it was open."""
    pairer, rows, calls = Pairer(), [], []
    row_by_seq: dict[int, dict] = {}
    call_by_seq: dict[int, Call] = {}
    open_calls: dict[int, Call] = {}
    for record in records:
        if record.kind == STDERR:
            _feed_stderr(open_calls, record)
        elif record.kind == EVENT and record.event in ("exit", "session-end"):
            open_calls.clear()  # nothing answers after the process is gone; its stderr ends with it
        kind = message_kind(record)
        pairing = pairer.observe(record, kind)  # classified once
        row = {"kind": kind, "method": pairing.method, "pair": pairing.pair_seq,
               "ms": None if pairing.latency_ms is None else round(pairing.latency_ms, 1),
               "late": pairing.late, "unmatched": pairing.unmatched}
        if record.kind == EVENT:
            row["text"] = describe_event(record.event, record.detail)  # the same words as the page's event rows
        if pairing.pair_seq is not None and pairing.pair_seq in row_by_seq:
            row_by_seq[pairing.pair_seq]["pair"] = record.seq  # the request links to its answer too
        if kind == jsonrpc.REQUEST:  # only a request is paired with (a flood's rows need no lookup)
            row_by_seq[record.seq] = row
        rows.append(row)
        if record.kind != MESSAGE or record.dir not in (TO_SERVER, FROM_SERVER):
            continue
        if kind == jsonrpc.REQUEST:
            call = call_by_seq[record.seq] = open_calls[record.seq] = Call(record)
            calls.append(call)
        elif pairing.pair_seq is not None and pairing.pair_seq in call_by_seq:
            call = call_by_seq[pairing.pair_seq]
            call.response, call.latency_ms = record, pairing.latency_ms
            open_calls.pop(call.seq, None)
    return Index(rows, calls)


def _feed_stderr(open_calls: dict[int, Call], record: Record) -> None:
    for call in islice(reversed(open_calls.values()), OPEN_CALLS_FED):
        if len(call.stderr) < STDERR_KEPT:
            call.stderr.append(record)
        else:
            call.stderr_more += 1


def restarts(records: list[Record]) -> list[dict]:
    """Each restart with what it said, and the diffs, exits and handshakes that came before the next restart."""
    out: list[dict] = []
    for record in records:
        if record.kind != EVENT:
            continue
        if record.event == "restart":
            out.append({"seq": record.seq, "t": record.t, "text": describe_event(record.event, record.detail),
                        "diffs": [], "events": []})
        elif out and record.event == "diff":
            out[-1]["diffs"].append({"seq": record.seq, "detail": record.detail})
        elif out and record.event in ("exit", "spawn", "handshake", "spawn-failed", "crash-loop"):
            out[-1]["events"].append({"seq": record.seq, "text": describe_event(record.event, record.detail)})
    return out


@dataclass(frozen=True)
class Problem:
    """Something wrong in the recording: a protocol warning on a row, or a line the reader skipped (seq None)."""

    seq: int | None
    rule: str
    text: str
    fix: str | None = None
    """How to fix it, for the checker's rules."""


def problems(records: list[Record], unreadable: Iterable[str] = ()) -> list[Problem]:
    """The recording's problems: the lines the reader skipped, then the warnings it recorded and what the protocol
    checker finds in it now (a recording made by a command has no warning events), once each per rule and row."""
    found: dict[tuple[str, int], Problem] = {}
    checker = ProtocolChecker()
    for record in records:
        if record.kind == EVENT and record.event == "warning":
            detail = record.detail
            if isinstance(detail.get("seq"), int):
                # the words the page showed win over the checker's own for the same rule and row
                _add(found, _text(detail.get("rule")) or "?", detail["seq"], _text(detail.get("text")) or "", True)
            continue
        try:
            warnings = checker.observe(record)
        except Exception:  # noqa: BLE001 - a checker bug must not cost the user the whole report
            continue
        for warning in warnings:
            _add(found, warning.rule, warning.seq, warning.text)
    ordered = sorted(found.values(), key=lambda p: (p.seq, p.rule))
    return [Problem(None, "unreadable-line", text) for text in unreadable] + ordered


def _add(found: dict, rule: str, seq: int, text: str, recorded: bool = False) -> None:
    if recorded or (rule, seq) not in found:
        found[(rule, seq)] = Problem(seq, rule, text, RULES[rule][1] if rule in RULES else None)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
