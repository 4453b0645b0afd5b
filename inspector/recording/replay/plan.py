"""Pure: read a recording into what a replay sends, where it waits, and how it answers the server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import eras, jsonrpc
from inspector.protocol.records import EVENT, FROM_SERVER, INVALID, MESSAGE, TO_SERVER, Pairer, Record


STREAMS = frozenset({"subscriptions/listen"})
"""Requests that open a long-lived stream (2026-07-28): the server acknowledges one with a notification and answers
it only when the stream ends, which in a page recording is when the inspector stopped. They are replayed as
streams: opened, their acknowledgement compared, and an end the inspector caused never awaited."""
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def stream_of(msg: Any) -> str | None:
    """The id key of the stream request a subscriptions acknowledgement answers, or None for other messages."""
    if not isinstance(msg, dict) or msg.get("method") != ACKNOWLEDGED or not isinstance(msg.get("params"), dict):
        return None
    meta = msg["params"].get("_meta")
    return jsonrpc.id_key(meta.get(eras.META_SUBSCRIPTION_ID)) if isinstance(meta, dict) else None


@dataclass
class ServerAsk:
    """A request the server made of the client in the recording, with the answer that was recorded for it."""

    seq: int
    request: dict
    reply: dict | None = None


@dataclass
class Segment:
    """One run of the server process in the recording (a recorded restart begins a new segment)."""

    actions: list[tuple[str, Record]] = field(default_factory=list)
    """("send", record) for client traffic, ("wait", request record) where the recording saw its response,
    ("ack", stream request record) where it saw a stream acknowledged, ("asked", server request record) where the
    server asked something unprompted (no request of ours open: over HTTP such asks come on the GET stream, in
    their own time, so the replay waits for them there rather than closing first)."""
    responses: dict[int, dict] = field(default_factory=dict)
    """Recorded response per request seq."""
    acks: dict[int, dict] = field(default_factory=dict)
    """Recorded acknowledgement notification per stream request seq."""
    asks: list[ServerAsk] = field(default_factory=list)


def without_failed_probes(records: list[Record]) -> list[Record]:
    """The records minus era probes that failed: a server/discover answered with an error (or not at all) and
    followed by an initialize. They are how the inspector found the era, not part of the session to replay.
    Their answers, their timeouts and the cancellations of them go too."""
    initialize_at = [r.seq for r in records if r.kind == MESSAGE and r.dir == TO_SERVER and isinstance(r.msg, dict)
                     and r.msg.get("method") == "initialize" and "id" in r.msg]
    if not initialize_at:
        return records
    probes: dict[str, int] = {}  # id key -> seq of a probe that has no successful answer (yet)
    dropped: set[int] = set()
    for record in records:
        msg = record.msg if record.kind == MESSAGE and isinstance(record.msg, dict) else None
        if msg is None:
            continue
        key = jsonrpc.id_key(msg.get("id")) if "id" in msg else None
        if record.dir == TO_SERVER and msg.get("method") == "server/discover" and key is not None \
                and any(seq > record.seq for seq in initialize_at):
            probes[key] = record.seq
        elif record.dir == FROM_SERVER and key in probes and "method" not in msg:
            if "result" in msg:
                probes.pop(key)  # it worked: a real modern handshake step
            else:
                dropped.update((probes.pop(key), record.seq))
    dropped.update(probes.values())  # never answered
    gone = {jsonrpc.id_key(r.msg.get("id")) for r in records if r.seq in dropped and r.dir == TO_SERVER}
    out = []
    for record in records:
        if record.seq in dropped:
            continue
        if record.kind == EVENT and record.event == "timeout" and jsonrpc.id_key(record.detail.get("id")) in gone:
            continue
        msg = record.msg if record.kind == MESSAGE and isinstance(record.msg, dict) else {}
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if record.dir == TO_SERVER and msg.get("method") == "notifications/cancelled" \
                and jsonrpc.id_key(params.get("requestId")) in gone:
            continue
        out.append(record)
    return out


def plan(records: list[Record]) -> list[Segment]:
    """What to send, when to wait, and how to answer the server, per recorded server process."""
    records = without_failed_probes(records)
    segments = [Segment()]
    pairer = Pairer()
    requests: dict[int, Record] = {}
    asks: dict[int, ServerAsk] = {}
    streams: dict[str, int] = {}  # id key -> seq of an open stream request
    unanswered: set[int] = set()  # seqs of this segment's requests (streams aside) the recording has not seen answered
    started = stopping = False
    for record in records:
        segment = segments[-1]
        if record.kind == EVENT:
            if record.event in ("spawn", "connect"):  # a new process, or a new HTTP connection
                if started:
                    segments.append(Segment())
                started, stopping = True, False
                unanswered.clear()
            elif record.event == "exit":
                pairer.forget()  # nothing can answer the old process's requests any more
            elif record.event == "stop":
                stopping = True  # streams that end from here on were ended by the inspector, not the server
            pairer.observe(record)
            continue
        pairing = pairer.observe(record)
        kind = jsonrpc.classify(record.msg)[0] if record.kind == MESSAGE else record.kind
        if record.dir == TO_SERVER and record.kind == MESSAGE and kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            ask = asks.get(pairing.pair_seq) if pairing.pair_seq is not None else None
            if ask is not None:
                ask.reply = record.msg  # answers are given when the server asks, not in file order
            continue
        if record.dir == TO_SERVER and record.kind in (MESSAGE, INVALID):
            segment.actions.append(("send", record))
            if kind == jsonrpc.REQUEST:
                requests[record.seq] = record
                if record.msg["method"] in STREAMS:
                    streams[jsonrpc.id_key(record.msg.get("id"))] = record.seq
                else:
                    unanswered.add(record.seq)
        elif record.dir == FROM_SERVER and record.kind == MESSAGE:
            if kind == jsonrpc.REQUEST and record.msg["method"] != "ping":  # keep-alives are not part of a replay
                asks[record.seq] = ServerAsk(record.seq, record.msg)
                segment.asks.append(asks[record.seq])
                if not unanswered:
                    segment.actions.append(("asked", record))
            elif (stream := streams.get(stream_of(record.msg) or "")) is not None and stream not in segment.acks:
                segment.acks[stream] = record.msg
                segment.actions.append(("ack", requests[stream]))
            elif kind in (jsonrpc.RESPONSE, jsonrpc.ERROR) and pairing.pair_seq in requests and stopping and \
                    requests[pairing.pair_seq].msg["method"] in STREAMS:
                continue  # the inspector ended this stream by stopping: no answer to wait for
            elif kind in (jsonrpc.RESPONSE, jsonrpc.ERROR) and pairing.pair_seq in requests:
                unanswered.discard(pairing.pair_seq)
                segment.responses[pairing.pair_seq] = record.msg
                segment.actions.append(("wait", requests[pairing.pair_seq]))
    return [s for s in segments if s.actions or s.asks]


def label_of(msg: Any) -> str:
    """The tool, prompt or resource a request is about, for the report."""
    params = msg.get("params") if isinstance(msg, dict) else None
    if not isinstance(params, dict):
        return ""
    value = params.get("uri") if msg.get("method") in ("resources/read", "resources/subscribe") else params.get("name")
    return value if isinstance(value, str) else ""
