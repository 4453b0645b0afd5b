"""The server's own requests (ping, roots/list, sampling, elicitation, ...), answered in arrival order by one thread.

Why one thread and not one per request (security findings, 8): a server that stops reading its stdin and sends
thousands of pings used to get a thread each, all blocked behind its full pipe; about 100k would exhaust pid_max and
the reader could then start nothing. One worker is enough because no answer waits on the server or on a person:
- a transport's send() never waits (stdio queues what the pipe cannot take, HTTP queues the POST);
- a request that a person answers (sampling, elicitation) is parked in session/asks without a thread, and the page
  sends its answer later, from the request that carries the person's click.
The worker runs only while requests wait, so an idle client holds no thread for this.

The answers run apart from the reader all the same: the reader also carries the answers to our own requests, and a
slow callback (replay reports each step on stdout) must not hold them up. So the queue never makes the reader wait:
beyond `limit` requests still waiting for their answer, a request stays unanswered (it is recorded like every line)
and one `unanswered` event per burst says so.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from inspector.protocol import jsonrpc

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

MAX_WAITING = 4096
"""Server requests waiting for their answer before more are left unanswered. A server that waits for its answers
never comes near it; only one that sends thousands without waiting does."""


def default_answer(msg: dict) -> dict:
    """How a client with nobody to ask answers the server's own requests: ping yes, the rest not supported."""
    if msg.get("method") == "ping":
        return jsonrpc.result_response(msg.get("id"), {})
    return jsonrpc.error_response(msg.get("id"), jsonrpc.METHOD_NOT_FOUND,
                                  f"mcp-inspect does not answer {msg.get('method')}")


class ServerRequests:
    """A bounded queue of server requests and the one worker thread that answers them, oldest first."""

    def __init__(self, answer: Callable[[dict, Any], None], on_overflow: Callable[[int], None],
                 limit: int = MAX_WAITING) -> None:
        self._answer = answer
        """(request, transport that asked) -> None: answers it; never raises (the client records what went wrong)."""
        self._on_overflow = on_overflow
        """Called with the limit once per burst, when the first request beyond it is left unanswered."""
        self.limit = limit
        self.dropped = 0
        """How many requests were left unanswered, in all."""
        self._waiting: deque[tuple[dict, Any]] = deque()
        self._lock = threading.Lock()
        self._working = False
        self._overflowing = False

    def put(self, msg: dict, transport: Any) -> None:
        """Queue one request for an answer; never waits. Starts the worker when none runs."""
        with self._lock:
            if len(self._waiting) >= self.limit:
                report, self._overflowing = not self._overflowing, True
                self.dropped += 1
                start = False
            else:
                report = False
                self._waiting.append((msg, transport))
                start, self._working = not self._working, True
        if report:
            self._on_overflow(self.limit)
        if start:
            threading.Thread(target=self._work, name="answer-server", daemon=True).start()

    def waiting(self) -> int:
        """How many requests wait for their answer (the one being answered not counted)."""
        with self._lock:
            return len(self._waiting)

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._working = self._overflowing = False  # the backlog is cleared: a new burst is reported
                    return
                msg, transport = self._waiting.popleft()
            self._answer(msg, transport)
