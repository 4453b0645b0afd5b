"""Headless call benchmark: `mcp-inspect call tools/list -- python raw_server.py` against a bare Python client.

Measures, in the same run and the same way (wall time of a child process, start to exit):
- baseline: `python -c CLIENT raw_server.py`, a bare client that spawns the server, sends initialize,
  notifications/initialized and tools/list, reads the answers, closes the server's stdin and waits for it;
- mcp-inspect: `python -m inspector.cli call tools/list -- python raw_server.py` (the same handshake and list,
  plus recording to a spool file, a process group with its lifeline, and the shutdown ladder).
Prints the best of N for each and the ratio. Usage: python bench/call.py [N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "raw_server.py")]

CLIENT = r"""
import json, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def ask(msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode()); proc.stdin.flush()
    return json.loads(proc.stdout.readline()) if "id" in msg else None
ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
print(json.dumps(ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"], indent=2))
proc.stdin.close(); proc.wait()
"""


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall seconds of one child process run to its exit, and its stdout."""
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{argv[:4]}... failed ({result.returncode}): {result.stderr}")
    return elapsed, result.stdout


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    bare = [sys.executable, "-c", CLIENT, *SERVER]
    ours = [sys.executable, "-m", "inspector.cli", "call", "tools/list", "--", *SERVER]
    timed(bare), timed(ours)  # warm the page cache and .pyc files for both
    best_bare = best_ours = float("inf")
    for _ in range(repeats):  # interleaved, so drift in machine load hits both alike
        elapsed, bare_out = timed(bare)
        best_bare = min(best_bare, elapsed)
        elapsed, ours_out = timed(ours)
        best_ours = min(best_ours, elapsed)
    assert bare_out == ours_out, "both must print the same tools/list result"
    print(f"bare python client:   {best_bare * 1000:7.1f} ms  (best of {repeats})")
    print(f"mcp-inspect call:     {best_ours * 1000:7.1f} ms  (best of {repeats})")
    print(f"ratio:                {best_ours / best_bare:7.2f}x")


if __name__ == "__main__":
    main()
