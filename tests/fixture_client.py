"""The product's Client driving a fixture server straight over real pipes (no page in between), for the tests
that check what a fixture server says; every message and stderr line it received is kept for assertions.

Requests go out exactly as the test writes them (no `_meta` added, no timeout of the client's own), and the
server's requests are left for the test to answer.
"""

from __future__ import annotations

import threading
import time

from inspector.client.connect import Connection
from inspector.client.targets import StdioTarget
from inspector.client.rpc import FOREVER, Client, Pending, RequestFailed
from inspector.protocol.records import FROM_SERVER, MESSAGE, STDERR


class MemorySink:
    """Records kept in memory, numbered, with a condition to wait on."""

    def __init__(self) -> None:
        self.records: list = []
        self.cond = threading.Condition()

    def add(self, record):
        with self.cond:
            record.seq = len(self.records) + 1
            record.t = record.t or time.time()
            self.records.append(record)
            self.cond.notify_all()
        return record

    def add_batch(self, records):
        for record in records:
            self.add(record)
        return records


class FixtureClient:
    """A fixture server under the product's Client."""

    def __init__(self, argv: list[str]) -> None:
        self.sink = MemorySink()
        self.client = Client(self.sink, timeout=FOREVER)
        self.client.on_server_request = lambda msg, transport: None  # the test answers them
        self.connection = Connection(self.client, StdioTarget(tuple(argv)))
        self.connection.start()
        self._sent: dict[int, Pending] = {}

    @property
    def messages(self) -> list[dict]:
        """Every message the server wrote, in order."""
        with self.sink.cond:
            return [r.msg for r in self.sink.records if r.kind == MESSAGE and r.dir == FROM_SERVER]

    @property
    def stderr(self) -> list[str]:
        """Every stderr line of the server, in order."""
        with self.sink.cond:
            return [r.text for r in self.sink.records if r.kind == STDERR]

    def send(self, msg: dict) -> None:
        self.client.send(msg)

    def start(self, method: str, params: dict | None = None) -> int:
        """Send a request; its id."""
        pending = self.client.request(method, params or {})
        self._sent[pending.id] = pending
        return pending.id

    def response(self, request_id: int, timeout: float = 10.0) -> dict:
        """The response message to a request sent with start(); AssertionError if none came in time."""
        try:
            return self._sent[request_id].answer(timeout)
        except RequestFailed as exc:
            raise AssertionError(f"no response to {request_id}: {exc}") from None

    def request(self, method: str, params: dict | None = None, timeout: float = 10.0) -> dict:
        return self.response(self.start(method, params), timeout)

    def wait_for(self, predicate, timeout: float = 10.0, what: str = "message", source: str = "messages"):
        with self.sink.cond:
            found = self.sink.cond.wait_for(
                lambda: next((item for item in getattr(self, source) if predicate(item)), None), timeout)
            if found is None:
                raise AssertionError(f"no {what} within {timeout} s; got {getattr(self, source)!r}")
            return found

    def server_request(self, method: str, timeout: float = 10.0) -> dict:
        return self.wait_for(lambda m: m.get("method") == method and "id" in m, timeout, f"{method} request")

    def answer(self, server_request: dict, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": server_request["id"], "result": result})

    def notifications(self, method: str) -> list[dict]:
        return [m["params"] for m in self.messages if m.get("method") == method and "id" not in m]

    def close(self) -> None:
        self.connection.close(stdin_grace=5.0)
        self.client.close()
