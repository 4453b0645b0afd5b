"""Pure: what a Markdown report says about a recording, from its (redacted) header and records as dicts: the
summary, the calls (a request, its answer and the stderr written meanwhile) and the problems."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Iterable

from inspector.protocol import jsonrpc
from inspector.protocol.diagnostics.protocol import ProtocolChecker
from inspector.protocol.records import EVENT, FROM_SERVER, MESSAGE, STDERR, TO_SERVER, Pairer, RecordError, from_dict

STDERR_KEPT = 400
"""Stderr records kept per call; a report shows fewer still, and says how many it left out."""
OPEN_CALLS_FED = 32
"""Stderr goes to the newest this many open calls: a server that never answers must not make pairing quadratic."""


@dataclass(frozen=True)
class Summary:
    """The report's table: who the server is and how it was reached."""

    server: str = "?"
    version: str = "?"
    era: str = "?"
    protocol_version: str = "?"
    transport: str = "?"
    command: str = ""
    inspector: str = "?"
    created: str = "?"
    duration_s: float | None = None


@dataclass
class Call:
    """One request and what answered it."""

    request: dict
    """The request's record."""
    response: dict | None = None
    """The answer's record (a result or an error), None when none came."""
    stderr: list[dict] = field(default_factory=list)
    """The stderr records written while the request was open (the first STDERR_KEPT)."""
    stderr_more: int = 0
    """How many more stderr records were written meanwhile."""

    @property
    def seq(self) -> int:
        return self.request["seq"]

    @property
    def seqs(self) -> tuple[int, ...]:
        return (self.seq,) if self.response is None else (self.seq, self.response["seq"])

    @property
    def method(self) -> str:
        return str(self.request["msg"].get("method"))

    @property
    def tool(self) -> str | None:
        """The tool, prompt or resource a call names, if any."""
        params = self.request["msg"].get("params")
        if isinstance(params, dict):
            for key in ("name", "uri"):
                if isinstance(params.get(key), str):
                    return params[key]
        return None

    @property
    def from_server(self) -> bool:
        return self.request.get("dir") == FROM_SERVER

    @property
    def latency_ms(self) -> float | None:
        if self.response is None:
            return None
        return max(0.0, (self.response["t"] - self.request["t"]) * 1000.0)

    @property
    def outcome(self) -> str:
        """ok, error CODE: MESSAGE, isError, or no answer."""
        if self.response is None:
            return "no answer"
        msg = self.response.get("msg")
        error = msg.get("error") if isinstance(msg, dict) else None
        if isinstance(error, dict):
            return f"error {error.get('code')}: {error.get('message')}"
        result = msg.get("result") if isinstance(msg, dict) else None
        if isinstance(result, dict) and result.get("isError") is True:
            return "isError"
        return "ok"

    @property
    def failed(self) -> bool:
        return self.outcome != "ok"


@dataclass(frozen=True)
class Problem:
    """Something wrong in the recording: a protocol warning on a row, or a line the reader skipped (seq None)."""

    seq: int | None
    rule: str
    text: str


def summarize(header: dict | None, records: list[dict]) -> Summary:
    """The summary of a recording: the handshake event names the server, the header the target."""
    header = header if isinstance(header, dict) else {}
    target = header.get("target") if isinstance(header.get("target"), dict) else {}
    handshake = next((r["detail"] for r in records if r.get("kind") == EVENT and r.get("event") == "handshake"), {})
    info = handshake.get("serverInfo") if isinstance(handshake.get("serverInfo"), dict) else {}
    command = target.get("command") if isinstance(target.get("command"), list) else []
    times = [r["t"] for r in (records[:1] + records[-1:]) if isinstance(r.get("t"), (int, float))]
    return Summary(server=_text(info.get("name")), version=_text(info.get("version")),
                   era=_text(handshake.get("era")), protocol_version=_text(handshake.get("protocolVersion")),
                   transport=_text(target.get("transport")),
                   command=" ".join(str(part) for part in command) or _text(target.get("url"), ""),
                   inspector=_text(header.get("inspector")), created=_text(header.get("created")),
                   duration_s=(times[-1] - times[0]) if len(times) == 2 else None)


def pair_calls(records: Iterable[dict]) -> list[Call]:
    """Every request of either side with its answer and the stderr written while it was open, in request order."""
    pairer, calls, by_seq = Pairer(), [], {}
    open_calls: dict[int, Call] = {}
    for value in records:
        if value.get("kind") == STDERR:
            for call in islice(reversed(open_calls.values()), OPEN_CALLS_FED):
                if len(call.stderr) < STDERR_KEPT:
                    call.stderr.append(value)
                else:
                    call.stderr_more += 1
            continue
        try:
            record = from_dict(value)
        except RecordError:
            continue
        if record.kind == EVENT and record.event in ("exit", "session-end"):
            open_calls.clear()  # nothing answers after the process is gone; its stderr ends with it
        pairing = pairer.observe(record)
        if record.kind != MESSAGE or record.dir not in (TO_SERVER, FROM_SERVER):
            continue
        kind, _ = jsonrpc.classify(record.msg)
        if kind == jsonrpc.REQUEST:
            call = by_seq[record.seq] = Call(value)
            calls.append(call)
            open_calls[record.seq] = call
        elif pairing.pair_seq is not None and pairing.pair_seq in by_seq:
            call = by_seq[pairing.pair_seq]
            call.response = value
            open_calls.pop(call.seq, None)
    return calls


def find_problems(records: Iterable[dict], unreadable: Iterable[str] = ()) -> list[Problem]:
    """The recording's problems: the warnings it recorded, what the protocol checker finds in it now (a recording
    made by a command has no warning events), and the lines the reader skipped."""
    found: dict[tuple[str, int], Problem] = {}
    checker = ProtocolChecker()
    for value in records:
        try:
            record = from_dict(value)
        except RecordError:
            continue
        if record.kind == EVENT and record.event == "warning":
            seq, rule = record.detail.get("seq"), str(record.detail.get("rule"))
            if isinstance(seq, int):
                found.setdefault((rule, seq), Problem(seq, rule, str(record.detail.get("text", ""))))
            continue
        for warning in checker.observe(record):
            found.setdefault((warning.rule, warning.seq), Problem(warning.seq, warning.rule, warning.text))
    problems = sorted(found.values(), key=lambda p: p.seq or 0)
    return [Problem(None, "unreadable-line", text) for text in unreadable] + problems


def when(created: str, duration_s: float | None) -> str:
    """'2026-11-30 10:12:03 UTC, 4.2 s' from the header's time and the recording's length."""
    try:
        start = _dt.datetime.fromisoformat(created.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        start = created
    return start if duration_s is None else f"{start}, {duration_s:.1f} s"


def _text(value: Any, missing: str = "?") -> str:
    return missing if value is None or value == "" else str(value)
