"""The replay engine: re-send a plan's client traffic through the one Client, judge every answer as it comes.

The page can run it too: give it the page's store (anything with `add(record)`) and an on_step callback.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from inspector.protocol import eras, jsonrpc
from inspector.client.connect import Connection
from inspector.client.targets import StdioTarget
from inspector.client.handshake import EXIT_GRACE
from inspector.client.rpc import DEFAULT_TIMEOUT, Client, RequestFailed
from inspector.recording.files import Loaded, Sink, close_sink, open_sink
from inspector.transport import SpawnError
from inspector.protocol.records import FROM_SERVER, INVALID, TO_SERVER, Record
from inspector.protocol.secrets import mask_argv
from inspector.recording.replay.compare import ABSENT, DEFAULT_IGNORES, Difference, compare, parse_path
from inspector.recording.replay.plan import Segment, ServerAsk, label_of, plan, stream_of

SAME, DIFFERENT, MISSING, EXTRA = "same", "different", "missing", "extra"
STATUSES = (SAME, DIFFERENT, MISSING, EXTRA)
PROTOCOL_META = eras.META_VERSION


class ReplayError(Exception):
    """The replay could not run at all (exit 2): nothing to replay, or the server could not be started."""


@dataclass
class Step:
    """One compared exchange: a request we re-sent, or a request the server made of us."""

    index: int
    method: str
    direction: str
    """to_server: our request and its response; from_server: the server's request (answered from the recording)."""
    seq: int | None = None
    """The recorded record this step replays (None for a request the recording does not have)."""
    label: str = ""
    status: str = "pending"
    diff: list[Difference] = field(default_factory=list)
    note: str = ""
    """Why an answer is missing, or what was extra."""

    def to_dict(self) -> dict:
        """The --json form of a step."""
        return {"index": self.index, "method": self.method, "status": self.status,
                "diff": [d.to_dict() for d in self.diff], "seq": self.seq, "direction": self.direction,
                "label": self.label, "note": self.note}


@dataclass
class ReplayReport:
    """What a replay found."""

    steps: list[Step]
    command: list[str]
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the replay could not run (the server never answered its first request), or None."""

    def summary(self) -> dict:
        """Counts per status."""
        counts = {status: sum(1 for s in self.steps if s.status == status) for status in STATUSES}
        return {"steps": len(self.steps), **counts, "ok": self.ok, "command": mask_argv(self.command)[0],
                "warnings": self.warnings, "error": self.error, "exit": self.exit_code}

    @property
    def ok(self) -> bool:
        """Every step the same."""
        return self.error is None and all(step.status == SAME for step in self.steps)

    @property
    def exit_code(self) -> int:
        """0 every step the same, 1 a real difference, 2 the replay could not run."""
        return 2 if self.error is not None else (0 if self.ok else 1)

    def to_dict(self) -> dict:
        """The --json document."""
        return {"steps": [s.to_dict() for s in self.steps], "summary": self.summary()}


class Acknowledgements:
    """The stream acknowledgements the server sent this run, by their stream's request id (from reader threads)."""

    def __init__(self) -> None:
        self._seen: dict[str, dict] = {}
        self._arrived = threading.Condition()

    def add(self, msg: dict) -> None:
        """A notification from the server: kept if it acknowledges a stream."""
        key = stream_of(msg)
        if key is not None:
            with self._arrived:
                self._seen.setdefault(key, msg)
                self._arrived.notify_all()

    def wait(self, stream, until: float) -> dict | None:
        """The acknowledgement of the stream (its Pending request), waiting until the monotonic deadline or until
        the request ends unacknowledged (refused, or the server exited)."""
        key = jsonrpc.id_key(stream.id)
        stream.on_done = lambda _: self._wake()
        with self._arrived:
            self._arrived.wait_for(lambda: key in self._seen or stream.done.is_set(),
                                   timeout=max(0.0, until - time.monotonic()))
            return self._seen.get(key)

    def _wake(self) -> None:
        with self._arrived:
            self._arrived.notify_all()


class Replayer:
    """Replays a loaded recording against a server command and reports each step to on_step as it is decided."""

    def __init__(self, loaded: Loaded, command: list[str], *, cwd: str | None = None,
                 env: dict[str, str] | None = None, store: Sink | None = None, timeout: float = DEFAULT_TIMEOUT,
                 ignore: Iterable[str] = (), default_ignores: bool = True, protocol: str | None = None,
                 on_step: Callable[[Step], None] | None = None, on_stderr: Callable[[str], None] | None = None,
                 settle: float = 0.5, http=None) -> None:
        self.loaded, self.command, self.cwd, self.env = loaded, list(command), cwd, env
        self.http = http
        """connect.HttpTarget to replay against instead of the command, or None."""
        self.store, self.timeout, self.protocol, self.settle = store, timeout, protocol, settle
        rules = [p for p, _ in DEFAULT_IGNORES] if default_ignores else []
        self.ignore = [parse_path(p) for p in [*rules, *ignore]]  # bad rules fail here, before anything runs
        self.on_step, self.on_stderr = on_step, on_stderr
        self.steps: list[Step] = []
        self._lock = threading.Lock()
        self._asked = threading.Condition(self._lock)
        """Notified whenever the server makes a request that the recording has (see _answer)."""
        self._cancelled = threading.Event()
        self._wire: Connection | None = None

    def cancel(self) -> None:
        """Stop a running replay (from another thread): the current server is stopped, run() returns what it has."""
        self._cancelled.set()
        wire = self._wire
        if wire is not None:
            wire.close(stdin_grace=0.5)

    def run(self) -> ReplayReport:
        """Run every segment; raises ReplayError when the replay cannot start."""
        segments = plan(self.loaded.records)
        if not segments:
            raise ReplayError("the recording has no client→server traffic to replay")
        own_store = self.store is None
        store = self.store or open_sink(None, self.command, self.cwd)
        error = None
        try:
            for number, segment in enumerate(segments):
                if self._cancelled.is_set():
                    break
                self._run_segment(store, segment, first=number == 0)
                if number == 0 and (error := self._handshake_failure()):
                    break  # nothing later can be judged against a server that never answered
        finally:
            if own_store:
                close_sink(store)
        return ReplayReport(steps=self.steps, command=self.command, error=error)

    def _handshake_failure(self) -> str | None:
        """Why the server never answered the first request (it did not start, or refused us: a 401), or None.

        That is a broken setup, not a difference in the server: the replay could not run (exit 2)."""
        first = next((s for s in self.steps if s.direction == TO_SERVER), None)
        if first is None or first.status != MISSING:
            return None
        return f"the server did not answer {first.method}: {first.note or 'no answer'}"

    def _new_step(self, method: str, direction: str, seq: int | None, label: str = "") -> Step:
        with self._lock:
            step = Step(index=len(self.steps) + 1, method=method, direction=direction, seq=seq, label=label)
            self.steps.append(step)
        return step

    def _decide(self, step: Step, status: str, diff: list[Difference] | None = None, note: str = "") -> None:
        step.status, step.diff, step.note = status, diff or [], note
        if self.on_step:
            self.on_step(step)

    def _run_segment(self, store: Sink, segment: Segment, first: bool) -> None:
        asks: dict[str, deque[ServerAsk]] = {}
        for ask in segment.asks:
            asks.setdefault(ask.request.get("method"), deque()).append(ask)
        client = Client(store, timeout=self.timeout, who="mcp-inspect replay")
        client.on_server_request = lambda msg, transport: self._answer(asks, msg)
        acknowledgements = Acknowledgements()
        client.on_notification.append(acknowledgements.add)
        if self.on_stderr is not None:
            client.on_stderr.append(self.on_stderr)
        wire: Connection | None = Connection(client, self.http or StdioTarget(tuple(self.command), self.cwd, self.env))
        spawn_error = ""
        try:
            wire.start()
        except SpawnError as exc:
            if first:
                raise ReplayError(str(exc)) from None
            wire, spawn_error = None, str(exc)  # every request of this segment is then missing
        inflight: dict[int, tuple[Step, Any, Any]] = {}  # request seq → (step, exchange, recorded id)
        new_ids: dict[str, int] = {}
        verbatim = {jsonrpc.id_key(r.msg.get("id")) for kind, r in segment.actions
                    if kind == "send" and r.origin == "user" and isinstance(r.msg, dict)}
        counter = (n for n in itertools.count(1) if jsonrpc.id_key(n) not in verbatim)
        self._wire = wire
        for kind, record in segment.actions:
            if self._cancelled.is_set():
                break
            if kind == "wait":
                self._finish(wire, segment, *inflight.pop(record.seq, (None, None, None)))
            elif kind == "asked":
                self._await_ask(wire, asks, record)
            elif kind == "ack":
                self._acknowledged(segment, acknowledgements, record.seq, *inflight.get(record.seq, (None,) * 3))
            elif wire is not None:
                sent = self._send(wire, record, counter, new_ids)
                if sent is not None:
                    inflight[record.seq] = sent
            elif jsonrpc.method_of(record.msg) and isinstance(record.msg, dict) and "id" in record.msg:
                step = self._new_step(record.msg["method"], TO_SERVER, record.seq, label_of(record.msg))
                recorded = segment.responses.get(record.seq)
                self._decide(step, SAME if recorded is None else MISSING,
                             [] if recorded is None else [Difference("$", recorded, ABSENT)],
                             f"the server could not be started again: {spawn_error}")
        # Requests the recording never saw answered: give the server a moment, then judge.
        settle_until = time.monotonic() + min(self.settle, self.timeout)
        for step, exchange, recorded_id in inflight.values():
            if step.status != "pending":  # a stream, judged when it was acknowledged; its end is not awaited
                client.forget(exchange)
                continue
            self._finish(wire, segment, step, exchange, recorded_id, until=settle_until)
        if wire is not None:
            wire.close()
        client.close()
        for queue in asks.values():
            for ask in queue:
                step = self._new_step(ask.request.get("method", "?"), FROM_SERVER, ask.seq)
                self._decide(step, MISSING, [Difference("$", ask.request, ABSENT)],
                             "the server did not make this request this time")

    def _send(self, wire: Connection, record: Record, counter, new_ids: dict[str, int]):
        client = wire.client
        if record.kind == INVALID:
            text = record.raw or ""
            data = text.encode("utf-8", "replace").replace(b"\n", b" ")
            problem = jsonrpc.decode_line(data).problem or "sent as recorded"
            client.write(Record(INVALID, dir=TO_SERVER, raw=text, error=problem), data + b"\n")
            return None
        msg = record.msg
        if not isinstance(msg, dict) or jsonrpc.classify(msg)[0] != jsonrpc.REQUEST:
            client.send(self._remap_notification(msg, new_ids), origin=record.origin)
            return None
        recorded_id = msg.get("id")
        step = self._new_step(msg["method"], TO_SERVER, record.seq, label_of(msg))
        if record.origin == "user":
            new_id = recorded_id  # hand-made requests are sent exactly as typed
        else:
            new_id = next(counter)
            key = jsonrpc.id_key(recorded_id)
            if key is not None:
                new_ids[key] = new_id
        exchange = client.expect(new_id, msg["method"])
        if not client.send(self._prepare({**msg, "id": new_id}), origin=record.origin):
            if client.forget(exchange):  # no response will come: judged as missing at its wait point
                client.finish(exchange, failure=RequestFailed(f"{msg['method']}: {_stdin_closed(client)}",
                                                              reason="exited"))
        return step, exchange, recorded_id

    def _prepare(self, msg: dict) -> dict:
        """Apply --protocol: the initialize request's version, and the modern era's per-request _meta version."""
        if not self.protocol or not isinstance(msg.get("params"), dict):
            return msg
        params = dict(msg["params"])
        if msg.get("method") == "initialize":
            params["protocolVersion"] = self.protocol
        meta = params.get("_meta")
        if isinstance(meta, dict) and PROTOCOL_META in meta:
            params["_meta"] = {**meta, PROTOCOL_META: self.protocol}
        return {**msg, "params": params}

    @staticmethod
    def _remap_notification(msg: Any, new_ids: dict[str, int]) -> Any:
        """A recorded cancellation names a recorded id: point it at the id this run used."""
        if isinstance(msg, dict) and msg.get("method") == "notifications/cancelled" and \
                isinstance(msg.get("params"), dict):
            key = jsonrpc.id_key(msg["params"].get("requestId"))
            if key in new_ids:
                return {**msg, "params": {**msg["params"], "requestId": new_ids[key]}}
        return msg

    def _finish(self, wire: Connection | None, segment: Segment, step: Step | None, exchange, recorded_id: Any,
                until: float | None = None) -> None:
        if step is None:
            return  # the response of a request that was never sent (a hand-made line, or a batch)
        recorded = segment.responses.get(step.seq) if step.seq is not None else None
        actual, note = None, ""
        if exchange is not None:
            deadline = until if until is not None else exchange.sent_at + self.timeout
            try:
                actual = exchange.answer(max(0.0, deadline - time.monotonic()))
            except RequestFailed as exc:
                if wire is not None:
                    wire.client.forget(exchange)  # a later answer is still recorded, but not judged
                if until is None or exc.reason != "timeout":
                    note = str(exc)
                if until is None and exc.reason == "timeout" and wire is not None and not wire.exited:
                    wire.client.cancel(exchange.id, f"mcp-inspect replay: no answer within {self.timeout:g} s")
        if isinstance(actual, dict):
            actual = {**actual, "id": recorded_id}  # the id we used is ours, not a server difference
        if recorded is not None and actual is not None:
            diff = compare(recorded, actual, self.ignore)
            self._decide(step, DIFFERENT if diff else SAME, diff)
        elif recorded is not None:
            self._decide(step, MISSING, [Difference("$", recorded, ABSENT)], note or "no answer")
        elif actual is not None:
            self._decide(step, EXTRA, [Difference("$", ABSENT, actual)],
                         "answered now, but the recording has no answer to it")
        else:
            self._decide(step, SAME, note="unanswered, as in the recording")

    def _await_ask(self, wire: Connection | None, asks: dict[str, deque[ServerAsk]], record: Record) -> None:
        """Wait (up to the timeout) until the server has made the request the recording saw it make unprompted
        here; whether it did, and how it compares, is judged when it comes (or, if it never does, at the end)."""
        if wire is None:
            return
        queue = asks.get(record.msg.get("method"), deque())
        deadline = time.monotonic() + self.timeout
        with self._asked:
            self._asked.wait_for(lambda: all(ask.seq != record.seq for ask in queue) or wire.exited,
                                 timeout=max(0.0, deadline - time.monotonic()))

    def _acknowledged(self, segment: Segment, acknowledgements: Acknowledgements, seq: int, step: Step | None,
                      exchange, recorded_id: Any) -> None:
        """A stream the recording saw acknowledged: wait for this run's acknowledgement and compare the two."""
        if step is None or exchange is None:
            return  # never sent (the server could not be started): judged with the segment's other requests
        actual = acknowledgements.wait(exchange, exchange.sent_at + self.timeout)
        recorded = segment.acks[seq]
        if actual is None:
            if exchange.done.is_set() and exchange.failure is None:
                return  # refused with an answer: compared with the recorded end where the recording has one
            why = exchange.failure if exchange.done.is_set() else f"not within {self.timeout:g} s"
            self._decide(step, MISSING, [Difference("$", recorded, ABSENT)], f"the stream was not acknowledged: {why}")
            return
        params = actual.get("params") if isinstance(actual.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        # the stream's id is ours this run, as a request id is: not a server difference
        actual = {**actual, "params": {**params, "_meta": {**meta, eras.META_SUBSCRIPTION_ID: recorded_id}}}
        diff = compare(recorded, actual, self.ignore)
        self._decide(step, DIFFERENT if diff else SAME, diff, "" if diff else "the stream was opened")

    def _answer(self, asks: dict[str, deque[ServerAsk]], msg: dict) -> dict | None:
        """Answer a request from the server with the answer recorded for the same method at the same turn."""
        method = msg.get("method")
        if method == "ping":
            return jsonrpc.result_response(msg.get("id"), {})  # keep-alives come and go: not a step
        with self._lock:
            queue = asks.get(method)
            ask = queue.popleft() if queue else None
            self._asked.notify_all()
        step = self._new_step(method if isinstance(method, str) else "?", FROM_SERVER,
                              ask.seq if ask else None, label_of(msg))
        if ask is None:
            self._decide(step, EXTRA, [Difference("$", ABSENT, msg)], "the recording has no such request")
            return jsonrpc.error_response(msg.get("id"), jsonrpc.METHOD_NOT_FOUND,
                                          f"mcp-inspect replay: the recording has no answer for {method}")
        diff = compare(ask.request, msg, self.ignore)
        self._decide(step, DIFFERENT if diff else SAME, diff)
        if ask.reply is None:
            return None  # unanswered in the recording: leave it unanswered now too
        return {**ask.reply, "id": msg.get("id")}


def _stdin_closed(client: Client) -> str:
    """Why a write was refused, with the server's exit when it is dying (a server that failed at start)."""
    transport = client.transport
    if transport is not None and transport.pid is not None:
        transport.exited.wait(EXIT_GRACE)  # its stdin is closed: the exit is on its way
    info = transport.exit_info if transport is not None else None
    return f"the server {info.describe()}" if info is not None else "the server's stdin is closed"
