"""Relay benchmark: a server emits N small notifications in one call (tests/fixtures/flood_server.py, which does
not flush per line, so the flood comes at the speed of the pipe, as a real chatty server's does).

Measures, in the same run, paired (floor, ours, floor, ours, ...):
- floor: a bare Python reader that spawns the server, sends initialize and the call, and reads and json-parses
  every line until the call's result;
- mcp-inspect in page mode: the time from the call (POST) until every line is recorded and the call's result row
  has been delivered to one websocket reader.
Prints the best and the median of each and the ratio. Usage: python bench/relay.py [N] [REPEATS]
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
ACK = '{"type":"ack"}'
"""What static/app.js sends for each live frame it has swapped and painted."""
FLOOD = ROOT / "tests" / "fixtures" / "flood_server.py"
sys.path.insert(0, str(ROOT))


def baseline(count: int) -> float:
    """Seconds for a bare reader to read and parse the flood."""
    proc = subprocess.Popen([sys.executable, str(FLOOD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    send = lambda msg: (proc.stdin.write((json.dumps(msg) + "\n").encode()), proc.stdin.flush())  # noqa: E731
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}})
    json.loads(proc.stdout.readline())
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "flood", "arguments": {"n": count}}})
    seen = 0
    for line in proc.stdout:
        msg = json.loads(line)
        seen += 1
        if msg.get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait()
    assert seen == count + 1, seen
    return elapsed


def inspector(count: int, workdir: Path) -> float:
    """Seconds for mcp-inspect to record the flood and deliver the result row to one websocket client."""
    import http.client

    import websocket

    record = workdir / f"relay-{time.monotonic_ns()}.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--record",
                             str(record), "--", sys.executable, str(FLOOD)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=workdir,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        url = proc.stdout.readline().decode().strip()
        port, token = re.search(r":(\d+)/\?token=(.+)$", url).groups()
        cookie = f"mcp_inspect_{port}={token}"
        deadline = time.monotonic() + 30
        while b'"tools"' not in record.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.02)
        ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", cookie=cookie,
                                         origin=f"http://127.0.0.1:{port}", timeout=60)
        ws.recv()  # the initial sync
        ws.send(ACK)  # the page acknowledges each frame once painted; the next comes only then (web/live_flow.py)
        body = urlencode({"arguments": json.dumps({"n": count})})
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
        started = time.perf_counter()
        conn.request("POST", "/tools/flood/call", body=body, headers={
            "Cookie": cookie, "HX-Request": "true", "Origin": f"http://127.0.0.1:{port}",
            "Content-Type": "application/x-www-form-urlencoded"})
        call_page = conn.getresponse().read().decode()
        request_seq = int(re.search(r'href="#r-(\d+)"', call_page).group(1))
        response_seq = request_seq + count + 1  # the notifications, then the result
        marker = f'id="r-{response_seq}"'
        while True:
            frame = ws.recv()
            ws.send(ACK)
            if marker in frame:
                break
        elapsed = time.perf_counter() - started
        ws.close()
        lines = record.read_bytes().count(b"\n")
        assert lines >= count + 2, lines
        return elapsed
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    floors, ours = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):  # interleaved, so drift in machine load hits both alike
            floors.append(baseline(count))
            ours.append(inspector(count, Path(tmp)))
    print(f"relay of {count} notifications, unflushed flood (best / median of {repeats}, paired)")
    print(f"  bare Python reader (read + json.loads): {min(floors):.3f} s / {statistics.median(floors):.3f} s")
    print(f"  mcp-inspect (recorded + delivered):     {min(ours):.3f} s / {statistics.median(ours):.3f} s")
    median = statistics.median(ours) / statistics.median(floors)
    print(f"  ratio (best): {min(ours) / min(floors):.2f}x   (median: {median:.2f}x)")


if __name__ == "__main__":
    main()
