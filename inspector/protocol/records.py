"""Pure: the Record (one timeline entry, one recording line) and request/response pairing."""

from __future__ import annotations

import json
import re

from inspector.protocol import jsonrpc
from inspector.protocol.plain import Plain, replace

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any, Protocol

TO_SERVER = "to_server"
FROM_SERVER = "from_server"
DIRECTIONS = (TO_SERVER, FROM_SERVER)

MESSAGE = "message"
STDERR = "stderr"
INVALID = "invalid"
EVENT = "event"
KINDS = (MESSAGE, STDERR, INVALID, EVENT)

# The lifecycle events (kind "event"); docs/recording-format.md lists their details. Readers show unknown ones.
SPAWN, SPAWN_FAILED, HANDSHAKE, CONNECT, TRANSPORT, TRANSPORT_ERROR = (
    "spawn", "spawn-failed", "handshake", "connect", "transport", "transport-error")
TIMEOUT, EXIT, STOP, SESSION_END = "timeout", "exit", "stop", "session-end"
RESTART, DIFF, CRASH_LOOP, WARNING = "restart", "diff", "crash-loop", "warning"
UNANSWERED = "unanswered"
EVENT_PREVIEW_CHARS = 200
"""An unknown event's detail is shown as this much JSON."""


def _info(detail: dict) -> dict:
    info = detail.get("serverInfo")
    return info if isinstance(info, dict) else {}


def _exit(d: dict) -> str:
    if d.get("reason"):
        return f"disconnected: {d.get('reason')}"
    how = f"signal {d.get('signal')}" if d.get("signal") else f"code {d.get('code')}"
    return f"server exited with {how}"


def _restart(d: dict) -> str:
    paths = ", ".join(str(p).rsplit("/", 1)[-1] for p in d.get("paths") or [])
    return f"restarting the server ({d.get('reason')}{': ' + paths if paths else ''})"


# event -> its one-line human description, from the event's detail (the timeline preview, `view`).
EVENT_TEXT: dict[str, Any] = {
    SPAWN: lambda d: f"server started, pid {d.get('pid')}",
    HANDSHAKE: lambda d: (f"handshake done: {_info(d).get('name', '?')} {_info(d).get('version', '')}, "
                          f"protocol {d.get('protocolVersion')} ({d.get('era')} era)"),
    TIMEOUT: lambda d: f"request {d.get('id')} ({d.get('method')}) timed out after {d.get('after_s')} s; cancelled",
    EXIT: _exit,
    CONNECT: lambda d: f"connecting to {d.get('url')} ({d.get('transport')})",
    TRANSPORT_ERROR: lambda d: f"✖ transport: {d.get('error')}",
    TRANSPORT: lambda d: (f"transport: {d.get('chosen')} ({d.get('why', '')})" if d.get("chosen")
                          else f"transport: {d.get('note')}"),
    SPAWN_FAILED: lambda d: f"server could not start: {d.get('error')}",
    RESTART: _restart,
    DIFF: lambda d: f"what changed ({d.get('reason')}): {d.get('summary')}",
    CRASH_LOOP: lambda d: (f"crash loop: {d.get('exits')} exits within {d.get('window_s')} s; "
                           "not restarting until the next change or a click"),
    WARNING: lambda d: f"⚠ {d.get('rule')} on #{d.get('seq')}: {d.get('text')}",
    SESSION_END: lambda d: "session ended",
    STOP: lambda d: f"stop requested ({d.get('reason', 'user')})",
    UNANSWERED: lambda d: (f"✖ the server has more than {d.get('limit')} requests waiting for our answer: the next "
                           "ones are not answered until those are"),
}


def describe_event(event: str, detail: dict) -> str:
    """A one-line human description of a lifecycle event (an unknown one: its name and the start of its detail)."""
    describe = EVENT_TEXT.get(event)
    if describe is not None:
        return describe(detail)
    return f"{event} {json.dumps(detail, ensure_ascii=False)[:EVENT_PREVIEW_CHARS]}"


if TYPE_CHECKING:  # a declaration for readers and type checkers; nothing checks it at run time
    class RecordSink(Protocol):
        """Where a record goes: the Store (the page), recording.files.Sink and check.CheckingSink (the commands).

        Declared so a reader (and a type checker) sees which `add` a call reaches; each returns the record with its
        seq and time set."""

        def add(self, record: Record) -> Record: ...

        def add_batch(self, records: list[Record]) -> list[Record]:
            """Several records at once (the lines of one pipe read), in order: numbered, written with one write,
            then made visible together; returns them with their seq and time set."""


class RecordError(ValueError):
    """A recording line that is JSON but not a valid record."""


class Record(Plain):
    """One thing that happened in a session, in arrival order."""

    __slots__ = ("kind", "seq", "t", "dir", "msg", "text", "raw", "error", "event", "detail", "origin", "follows",
                 "http", "wire")
    _hidden = ("wire",)

    def __init__(self, kind: str, seq: int = 0, t: float = 0.0, dir: str | None = None, msg: Any = None,
                 text: str | None = None, raw: str | None = None, error: str | None = None,
                 event: str | None = None, detail: dict | None = None, origin: str | None = None,
                 follows: int | None = None, http: dict | None = None, wire: bytes | None = None) -> None:
        self.kind = kind
        """message, stderr, invalid or event."""
        self.seq = seq
        """Strictly increasing position in the session; assigned by the store."""
        self.t = t
        """Unix time in seconds."""
        self.dir = dir
        """to_server or from_server, for messages and invalid lines."""
        self.msg = msg
        """The JSON-RPC value exactly as it crossed the wire (kind message)."""
        self.text = text
        """A stderr line (kind stderr)."""
        self.raw = raw
        """The undecodable or non-JSON-RPC line as text (kind invalid)."""
        self.error = error
        """Why a line is invalid (kind invalid)."""
        self.event = event
        """Event name (kind event): spawn, handshake, timeout, exit, session-end, ..."""
        self.detail = {} if detail is None else detail
        """Event details (kind event)."""
        self.origin = origin
        """Who made a to_server message when it was not the inspector's own logic: "user" for hand-made ones."""
        self.follows = follows
        """A request retried after an input_required answer: the seq of that answer (the chain's previous link)."""
        self.http = http
        """Over HTTP: the exchange that carried the message (status, MCP-relevant headers; secrets redacted)."""
        self.wire = wire
        """The server's line exactly as it came, when `msg` was decoded from it and it may be written as it is
        (`writable_as_is`): to_line writes it as the record's `msg` instead of encoding `msg`. Not part of the
        record's JSON form (nor of its equality); whoever changes `msg` sets it to None."""

    def to_dict(self) -> dict:
        """The record's JSON form: only the fields its kind uses."""
        out: dict[str, Any] = {"seq": self.seq, "t": round(self.t, 6), "kind": self.kind}
        if self.kind == MESSAGE:
            out["dir"] = self.dir
            out["msg"] = self.msg
            if self.origin:
                out["origin"] = self.origin
            if self.follows is not None:
                out["follows"] = self.follows
            if self.http:
                out["http"] = self.http
        elif self.kind == STDERR:
            out["text"] = self.text
        elif self.kind == INVALID:
            out["dir"] = self.dir
            out["raw"] = self.raw
            out["error"] = self.error
            if self.origin:
                out["origin"] = self.origin
            if self.http:
                out["http"] = self.http
        elif self.kind == EVENT:
            out["event"] = self.event
            out["detail"] = self.detail
        return out

    def to_line(self, t_text: bytes | None = None) -> bytes:
        """One recording line, newline-terminated; never raises for what the record holds.

        Whatever was decoded from outside is nested at most protocol.json.MAX_DEPTH deep, so it re-encodes.
        A value made in the process that does not (too deep for the encoder, or circular) is written as an invalid
        line saying so, rather than an exception on the thread that recorded it. `t_text`: `time_text(self.t)`,
        when the caller has it already (a batch of records shares one time)."""
        if self.wire is not None and self.kind == MESSAGE and self.dir == FROM_SERVER and not self.origin \
                and self.follows is None and not self.http:
            # The server's own bytes between the record's fields (the same fields, in the same order, as to_dict
            # gives): they were decoded as this very value, so the line holds the same record as the encoded one,
            # without the cost of encoding it, which was most of a flood's cost.
            return b'{"seq":%d,"t":%s,"kind":"message","dir":"from_server","msg":%s}\n' % (
                self.seq, t_text or time_text(self.t), self.wire)
        try:
            return jsonrpc.encode(self.to_dict())
        except (RecursionError, ValueError) as exc:
            why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            stand_in = Record(INVALID, seq=self.seq, t=self.t, dir=self.dir or TO_SERVER, origin=self.origin,
                              raw=self.raw or self.text or "", error=f"{self.kind} not recordable as JSON ({why})")
            return jsonrpc.encode(stand_in.to_dict())


def time_text(t: float) -> bytes:
    """A record's `t` as its line writes it (to_dict's rounding, json's spelling of the float)."""
    return repr(round(t, 6)).encode("ascii")


def writable_as_is(line: bytes) -> bool:
    """May a server's line (one JSON value) stand in a recording as it came: it holds nothing the encoder would
    have escaped for a terminal's or a line splitter's sake (protocol.json.dumps: DEL, the C1 controls, U+2028,
    U+2029), and no CR, which JSON allows between tokens but which is no part of a line."""
    if line.isascii():
        return b"\r" not in line and b"\x7f" not in line
    return _UNSAFE_RAW.search(line) is None


_UNSAFE_RAW = re.compile(b"[\r\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")
"""CR, DEL, C1 (U+0080-U+009F), U+2028 and U+2029, in UTF-8."""


def from_dict(obj: Any) -> Record:
    """Rebuild a Record from its JSON form; raises RecordError on wrong shapes."""
    kind, seq, t = record_fields(obj)
    # Positional, with the checks inline: a report reads 100,000 records through here, and keywords and a call per
    # field were most of the cost.
    get = obj.get
    text, raw, error, origin, follows, http = get("text"), get("raw"), get("error"), get("origin"), get("follows"), \
        get("http")
    return Record(kind, seq, t, get("dir"), get("msg"), text if isinstance(text, str) else None,
                  raw if isinstance(raw, str) else None, error if isinstance(error, str) else None, get("event"),
                  get("detail", {}) if kind == EVENT else {}, origin if isinstance(origin, str) else None,
                  follows if isinstance(follows, int) and not isinstance(follows, bool) else None,
                  http if isinstance(http, dict) else None)


def record_fields(obj: Any) -> tuple[str, int, float]:
    """from_dict's checks without building the Record (export copies a line that passes them as it is): the
    record's kind, seq and t; raises RecordError on wrong shapes."""
    if not isinstance(obj, dict):
        raise RecordError("a record must be a JSON object")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise RecordError(f"unknown record kind {kind!r}")
    seq, t = obj.get("seq"), obj.get("t")
    if seq.__class__ is not int and (not isinstance(seq, int) or isinstance(seq, bool)):  # an int, the usual case,
        raise RecordError("seq must be an integer")  # is told from a bool (a subclass) by its class alone
    if t.__class__ is not float:
        if not isinstance(t, (int, float)) or isinstance(t, bool):
            raise RecordError("t must be a number")
        try:
            t = float(t)
        except OverflowError:
            raise RecordError("t is out of range") from None
    direction = obj.get("dir")
    if kind in (MESSAGE, INVALID) and direction not in DIRECTIONS:
        raise RecordError(f"dir must be one of {DIRECTIONS}")
    detail = obj.get("detail", {})
    if kind == EVENT and (not isinstance(obj.get("event"), str) or not isinstance(detail, dict)):
        raise RecordError("an event needs a string event and an object detail")
    return kind, seq, t


def message_kind(record: Record) -> str:
    """The timeline kind of a record: request/response/notification/error/batch for messages, else its kind."""
    if record.kind == MESSAGE:
        kind, _ = jsonrpc.classify(record.msg)
        return kind
    return record.kind


def refused_post(record: Record) -> bool:
    """Did this message come as the body of an HTTP error status answering one of our POSTs? (Streamable HTTP: a
    server that cannot accept a POST answers an error status, whose body MAY be a JSON-RPC error without id.)"""
    http = record.http if isinstance(record.http, dict) else {}
    status = http.get("status")
    return (record.dir == FROM_SERVER and http.get("via") == "post" and isinstance(status, int)
            and not isinstance(status, bool) and status >= 400)


class _Open:
    __slots__ = ("seq", "method", "t", "timed_out")

    def __init__(self, seq: int, method: str, t: float, timed_out: bool = False) -> None:
        self.seq, self.method, self.t, self.timed_out = seq, method, t, timed_out


class Pairing(Plain):
    """What pairing learned about one record."""

    __slots__ = ("method", "pair_seq", "latency_ms", "late", "unmatched")
    __hash__ = Plain.field_hash

    def __init__(self, method: str | None = None, pair_seq: int | None = None, latency_ms: float | None = None,
                 late: bool = False, unmatched: bool = False) -> None:
        self.method = method
        """The method of a request or notification, or of the request a response answers."""
        self.pair_seq = pair_seq
        """The seq of the matching request (for a response) or None."""
        self.latency_ms = latency_ms
        """Response time after its request."""
        self.late = late
        """The response answers a request that had already timed out."""
        self.unmatched = unmatched
        """A response whose id matches no open request of the other side."""


NOTHING_PAIRED = Pairing()
"""What pairing says of a record that pairs with nothing (shared: nobody changes a Pairing)."""


class Pairer:
    """Pairs requests with their responses, per direction: each side has its own id space."""

    def __init__(self) -> None:
        # Keyed by (direction of the request, id key).
        self._open: dict[tuple[str, str], _Open] = {}

    def observe(self, record: Record, kind: str | None = None) -> Pairing:
        """Learn from one record and say what it pairs with. `kind`: its message_kind, when the caller has it (a
        flood's records are classified once, not twice). A record that pairs with nothing gets NOTHING_PAIRED."""
        if record.kind == EVENT and record.event == "timeout":
            key = jsonrpc.id_key(record.detail.get("id"))
            entry = self._open.get((TO_SERVER, key)) if key is not None else None
            if entry:
                entry.timed_out = True
            return NOTHING_PAIRED
        if record.kind != MESSAGE or not isinstance(record.msg, dict):
            return NOTHING_PAIRED
        msg = record.msg
        if kind is None:
            kind, _ = jsonrpc.classify(msg)
        if kind == jsonrpc.REQUEST:
            key = jsonrpc.id_key(msg.get("id"))
            if key is not None:
                self._open[(record.dir, key)] = _Open(record.seq, msg["method"], record.t)
            return Pairing(method=msg["method"])
        if kind == jsonrpc.NOTIFICATION:
            return Pairing(method=msg["method"])
        if kind in (jsonrpc.RESPONSE, jsonrpc.ERROR):
            request_dir = FROM_SERVER if record.dir == TO_SERVER else TO_SERVER
            key = jsonrpc.id_key(msg.get("id"))
            if key is None and kind == jsonrpc.ERROR and refused_post(record):
                key = self._lone_request(request_dir)
            entry = self._open.pop((request_dir, key), None) if key is not None else None
            if entry is None:
                return Pairing(unmatched=True)
            return Pairing(method=entry.method, pair_seq=entry.seq,
                           latency_ms=max(0.0, (record.t - entry.t) * 1000.0), late=entry.timed_out)
        return NOTHING_PAIRED

    def _lone_request(self, direction: str) -> str | None:
        """The id key of the one request open in that direction, if exactly one is: the only POST a refusal
        without id can answer (our era probe, or a call to a restarted server)."""
        keys = [key for (side, key) in self._open if side == direction]
        return keys[0] if len(keys) == 1 else None

    def forget(self) -> None:
        """Drop open requests (the server process is gone: nothing can answer them any more)."""
        self._open.clear()


def record_server_line(sink, line: bytes, http: dict | None = None) -> jsonrpc.Decoded:
    """Decode one line (or HTTP body) of a server and record it (a message, or an invalid line); return it.

    `sink` is anything with add(record): the page's store or the headless commands' sink. `http` describes the
    HTTP exchange that carried it, when the transport is HTTP.
    """
    return record_server_message(sink, line, http)[0]


def record_server_message(sink, line: bytes, http: dict | None = None) -> tuple[jsonrpc.Decoded, Record]:
    """record_server_line, also giving back the record as stored (with its seq).

    The message given back is the one the sink stored: with the run's known secrets masked, so a result echoing a
    secret is shown (and printed by a command) as the recording has it."""
    decoded, record = server_record(line, http)
    return as_stored(decoded, sink.add(record)), record


def record_server_lines(sink, lines: list[bytes]) -> list[tuple[jsonrpc.Decoded, Record]]:
    """record_server_message for the stdout lines of one read: every one recorded (`sink.add_batch`: one write)
    before the caller acts on any of them."""
    as_is = True if writable_as_is(b"\n".join(lines)) else None  # one check for the whole read, not one per line
    made = [server_record(line, as_is=as_is) for line in lines]
    sink.add_batch([record for _, record in made])
    return [(as_stored(decoded, record), record) for decoded, record in made]


def server_record(line: bytes, http: dict | None = None, as_is: bool | None = None) -> tuple[jsonrpc.Decoded, Record]:
    """One line (or HTTP body) of a server, decoded, and the record to store for it (a message, or an invalid line).

    A line that decoded as one JSON-RPC message keeps its bytes (`Record.wire`), so the recording writes them as
    they came; a batch, an invalid line and HTTP bodies are encoded as today. `as_is`: True when the caller knows
    the line is `writable_as_is` (it checked the whole read at once); None to check it here."""
    decoded = jsonrpc.decode_line(line)
    if decoded.kind == jsonrpc.INVALID:
        return decoded, Record(INVALID, dir=FROM_SERVER, raw=decoded.text, error=decoded.problem, http=http)
    wire = line if http is None and decoded.kind != jsonrpc.BATCH and (as_is or writable_as_is(line)) else None
    return decoded, Record(MESSAGE, dir=FROM_SERVER, msg=decoded.msg, http=http, wire=wire)


def as_stored(decoded: jsonrpc.Decoded, record: Record) -> jsonrpc.Decoded:
    """The decoded line with the message as the sink stored it (known secrets masked)."""
    return decoded if record.msg is decoded.msg else replace(decoded, msg=record.msg)
