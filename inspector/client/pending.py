"""What a caller of the client holds while its request is out: the `Pending` request, and `RequestFailed` when no
result came. Imported through `client.rpc` by everyone else."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from inspector.client.deadlines import FOREVER
from inspector.protocol.records import Record

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any


class RequestFailed(Exception):
    """A request got no result: an error response, no answer in time, or the server went away."""

    def __init__(self, message: str, *, error: dict | None = None, reason: str = "error") -> None:
        super().__init__(message)
        self.error = error
        """The JSON-RPC error object, when the server sent one."""
        self.reason = reason
        """error, timeout, exited, stopped, restarted, not-running, transport, cancelled, rejected."""


class Pending:
    """A request the client sent (or is about to send) and is waiting on. Equal only to itself (its `done` event
    made it so as a dataclass too)."""

    __slots__ = ("id", "method", "timeout", "deadline", "hard_deadline", "seq", "done", "response", "failure",
                 "on_done", "on_recorded", "params", "rounds", "response_seq", "call", "sent_at")

    def __init__(self, id: Any, method: str, timeout: float, deadline: float = FOREVER,
                 hard_deadline: float = FOREVER, on_done: Callable[[Pending], None] | None = None,
                 on_recorded: Callable[[Pending, Record], None] | None = None, params: Any = None,
                 call: Any = None) -> None:
        self.id, self.method, self.timeout, self.deadline = id, method, timeout, deadline
        self.hard_deadline = hard_deadline
        """Progress notifications push the deadline back, never past this (the maximum timeout)."""
        self.seq = 0
        """The seq of the request's record (of its latest round)."""
        self.done = threading.Event()
        self.response: dict | None = None
        self.failure: RequestFailed | None = None
        self.on_done = on_done
        self.on_recorded = on_recorded
        """Called once the request is recorded, before it is written (a fast answer must find what it links)."""
        self.params = params
        """What was sent (an input_required answer is retried with the same params plus the user's answers)."""
        self.rounds = 1
        """How many times this request went out (modern era: each input_required answer adds a round)."""
        self.response_seq = 0
        """The seq of the answer's record."""
        self.call = call
        """Whatever this request carries out for its sender (the page's Call), opaque here."""
        self.sent_at = time.monotonic()

    def __repr__(self) -> str:
        return f"Pending(id={self.id!r}, method={self.method!r}, seq={self.seq})"

    def answer(self, timeout: float | None = None) -> dict:
        """The response message (a result or an error), or raise RequestFailed when none came."""
        if not self.done.wait(None if timeout is None else max(0.0, timeout)):
            raise RequestFailed(f"{self.method}: no answer within {timeout:g} s", reason="timeout")
        if self.failure is not None:
            raise self.failure
        assert self.response is not None
        return self.response

    def wait(self, timeout: float | None = None) -> Any:
        """The result object, or raise RequestFailed (an error response included)."""
        response = self.answer(timeout)
        if "error" in response:
            error = response["error"]
            message = error.get("message", "error") if isinstance(error, dict) else str(error)
            raise RequestFailed(f"{self.method}: {message}", error=error if isinstance(error, dict) else None)
        return response.get("result")
