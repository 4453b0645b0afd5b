"""What a report says about a recording, computed once from its (already redacted) records: pure, dicts in, dicts out.

The HTML report uses it, and the Markdown report may: the summary of the session (server, era, transport, command,
times), the timeline index (each record's kind, method, the row it pairs with and the latency, as the page's Store
computes them), the tool calls with their results, the restarts with the diffs that followed, and the problems.
"""

from __future__ import annotations

from typing import Any, Iterable

from inspector import __version__
from inspector.protocol import jsonrpc
from inspector.protocol.diagnostics import RULES, ProtocolChecker
from inspector.protocol.records import EVENT, Pairer, Record, RecordError, describe_event, from_dict, message_kind


def as_records(records: Iterable[dict]) -> list[Record]:
    """The records again as Records (a redacted dict that no longer reads as one is left out)."""
    out = []
    for value in records:
        try:
            out.append(from_dict(value))
        except RecordError:
            continue
    return out


def summarize(header: dict | None, records: list[Record], rows: list[dict] | None = None) -> dict:
    """Who was inspected, how and when: the report's header (`rows`, index_rows' answer, saves classifying again)."""
    header = header if isinstance(header, dict) else {}
    target = header.get("target") if isinstance(header.get("target"), dict) else {}
    handshake = next((r.detail for r in reversed(records) if r.kind == EVENT and r.event == "handshake"), {})
    info = handshake.get("serverInfo") if isinstance(handshake.get("serverInfo"), dict) else {}
    command = target.get("command") if isinstance(target.get("command"), list) else None
    times = [r.t for r in records if isinstance(r.t, (int, float))]
    counts: dict[str, int] = {}
    for kind in (row["kind"] for row in rows) if rows is not None else map(message_kind, records):
        counts[kind] = counts.get(kind, 0) + 1
    return {
        "server": _text(info.get("name")), "version": _text(info.get("version")),
        "era": _text(handshake.get("era")), "protocol_version": _text(handshake.get("protocolVersion")),
        "transport": _text(target.get("transport")),
        "command": [str(part) for part in command] if command else None, "url": _text(target.get("url")),
        "cwd": _text(target.get("cwd")),
        "env": sorted(str(key) for key in header["env"]) if isinstance(header.get("env"), dict) else [],
        "recorded_by": _text(header.get("inspector")),
        "reported_by": __version__, "created": _text(header.get("created")),
        "first_t": min(times) if times else None, "last_t": max(times) if times else None,
        "records": len(records), "counts": counts,
        "restarts": sum(1 for r in records if r.kind == EVENT and r.event == "restart"),
    }


def index_rows(records: list[Record]) -> list[dict]:
    """Per record, what the timeline shows besides the record itself: kind, method, paired seq, latency, flags."""
    pairer, rows, by_seq = Pairer(), [], {}
    for record in records:
        pairing = pairer.observe(record)
        row = {"kind": message_kind(record), "method": pairing.method, "pair": pairing.pair_seq,
               "ms": None if pairing.latency_ms is None else round(pairing.latency_ms, 1),
               "late": pairing.late, "unmatched": pairing.unmatched}
        if record.kind == EVENT:
            row["text"] = describe_event(record.event, record.detail)  # the same words as the page's event rows
        if pairing.pair_seq is not None and pairing.pair_seq in by_seq:
            by_seq[pairing.pair_seq]["pair"] = record.seq  # the request links to its answer too
        by_seq[record.seq] = row
        rows.append(row)
    return rows


def tool_calls(records: list[Record], rows: list[dict]) -> list[dict]:
    """Each tools/call we sent, with its arguments, its answer (result or error) and how long it took."""
    by_seq = {record.seq: (record, row) for record, row in zip(records, rows)}
    calls = []
    for record, row in zip(records, rows):
        if not (row["kind"] == jsonrpc.REQUEST and row["method"] == "tools/call" and record.dir == "to_server"):
            continue
        params = record.msg.get("params") if isinstance(record.msg.get("params"), dict) else {}
        answer, answer_row = by_seq.get(row["pair"], (None, None)) if row["pair"] is not None else (None, None)
        msg = answer.msg if answer is not None and isinstance(answer.msg, dict) else {}
        result = msg.get("result")
        calls.append({
            "seq": record.seq, "t": record.t, "name": _text(params.get("name")) or "?",
            "arguments": params.get("arguments", {}), "answer_seq": answer.seq if answer else None,
            "ms": answer_row["ms"] if answer_row else None,
            "state": ("pending" if answer is None else "error" if "error" in msg
                      else "tool-error" if isinstance(result, dict) and result.get("isError") else "ok"),
            "result": msg["error"] if "error" in msg else result,
        })
    return calls


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


def problems(records: list[Record]) -> list[dict]:
    """The protocol problems: the warnings the recording holds, and what the checker finds in it now (once each)."""
    found: dict[tuple[str, int], dict] = {}
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
    return sorted(found.values(), key=lambda p: (p["seq"], p["rule"]))


def _add(found: dict, rule: str, seq: int, text: str, recorded: bool = False) -> None:
    fix = RULES[rule][1] if rule in RULES else None
    if recorded or (rule, seq) not in found:
        found[(rule, seq)] = {"rule": rule, "seq": seq, "text": text, "fix": fix}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
