"""What a caller of the client holds while its request is out: the `Pending` request, and `RequestFailed` when no
result came. Imported through `client.rpc` by everyone else."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from inspector.client.deadlines import FOREVER
from inspector.protocol.records import Record


class RequestFailed(Exception):
    """A request got no result: an error response, no answer in time, or the server went away."""

    def __init__(self, message: str, *, error: dict | None = None, reason: str = "error") -> None:
        super().__init__(message)
        self.error = error
        """The JSON-RPC error object, when the server sent one."""
        self.reason = reason
        """error, timeout, exited, stopped, restarted, not-running, transport, cancelled, rejected."""


@dataclass
class Pending:
    """A request the client sent (or is about to send) and is waiting on."""

    id: Any
    method: str
    timeout: float
    deadline: float = FOREVER
    hard_deadline: float = FOREVER
    """Progress notifications push the deadline back, never past this (the maximum timeout)."""
    seq: int = 0
    """The seq of the request's record (of its latest round)."""
    done: threading.Event = field(default_factory=threading.Event)
    response: dict | None = None
    failure: RequestFailed | None = None
    on_done: Callable[["Pending"], None] | None = None
    on_recorded: Callable[["Pending", Record], None] | None = None
    """Called once the request is recorded, before it is written (a fast answer must find what it links)."""
    params: Any = None
    """What was sent (an input_required answer is retried with the same params plus the user's answers)."""
    rounds: int = 1
    """How many times this request went out (modern era: each input_required answer adds a round)."""
    response_seq: int = 0
    """The seq of the answer's record."""
    call: Any = field(default=None, repr=False)
    """Whatever this request carries out for its sender (the page's Call), opaque here."""
    sent_at: float = field(default_factory=time.monotonic)

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
