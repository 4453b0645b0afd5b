"""A raw JSON-lines MCP client for tests that speak to fixture servers line by line (no inspector in between)."""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
import time


class LineClient:
    """A server process over real pipes, and every line it wrote to stdout (parsed) and stderr."""

    def __init__(self, argv: list[str], first_id: int = 1):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.messages: list[dict] = []
        self.stderr: list[str] = []
        self.cond = threading.Condition()
        self.ids = itertools.count(first_id)
        threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True).start()

    def _pump(self, stream, is_stdout: bool) -> None:
        for line in stream:
            with self.cond:
                if is_stdout:
                    self.messages.append(json.loads(line))
                else:
                    self.stderr.append(line.rstrip("\n"))
                self.cond.notify_all()

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, predicate, timeout: float = 10.0, what: str = "message", source: str = "messages"):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for item in getattr(self, source):
                    if predicate(item):
                        return item
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} within {timeout} s; got {getattr(self, source)!r}")
                self.cond.wait(left)

    def start(self, method: str, params: dict | None = None) -> int:
        request_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        return request_id

    def response(self, request_id, timeout: float = 10.0) -> dict:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m, timeout,
                             f"response to {request_id}")

    def request(self, method: str, params: dict | None = None, timeout: float = 10.0) -> dict:
        return self.response(self.start(method, params), timeout)

    def server_request(self, method: str, timeout: float = 10.0) -> dict:
        return self.wait_for(lambda m: m.get("method") == method and "id" in m, timeout, f"{method} request")

    def answer(self, server_request: dict, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": server_request["id"], "result": result})

    def notifications(self, method: str) -> list[dict]:
        with self.cond:
            return [m["params"] for m in self.messages if m.get("method") == method and "id" not in m]

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
