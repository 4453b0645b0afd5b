"""Start benchmark: `mcp-inspect --no-open --port 0 python raw_server.py` until its URL line, against the floor.

Measured in the same run, alternately, as wall time from spawning the child:
- floor: `python bench/floor.py list -- python raw_server.py` run to its exit (spawn, initialize, list, exit);
- mcp-inspect: until the URL line is read from its stdout (the page is built after it; the first request waits
  for it), then the inspector is stopped with SIGTERM (not timed). Also shown: until the page answers that URL.
Children may write .pyc files; the first, unmeasured round compiles. Prints the best of N (goal: URL <= 0.25 s).
Usage: python bench/start.py [N]
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "raw_server.py")]
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}


def floor_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "bench" / "floor.py"), "list", "--", *SERVER], check=True,
                   capture_output=True, cwd=ROOT, env=ENV, timeout=60)
    return time.perf_counter() - started


def start_seconds() -> tuple[float, float]:
    """(spawn → URL line read, spawn → the URL answered by the page)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--no-record",
                             "--no-watch", "--", *SERVER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=ROOT, env=ENV)
    try:
        url = proc.stdout.readline().decode().strip()
        to_url = time.perf_counter() - started
        parts = urlsplit(url)
        if not parts.port:
            raise SystemExit(f"no URL line: {url!r}")
        conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=60)
        conn.request("GET", f"/?{parts.query}", headers={"Host": parts.netloc})
        conn.getresponse().read()
        conn.close()
        return to_url, time.perf_counter() - started
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    floor_seconds(), start_seconds()  # warm the page cache and the .pyc files
    best_floor = best_url = best_page = float("inf")
    for _ in range(repeats):
        best_floor = min(best_floor, floor_seconds())
        to_url, to_page = start_seconds()
        best_url, best_page = min(best_url, to_url), min(best_page, to_page)
    print(f"floor (spawn + initialize + list + exit): {best_floor:6.3f} s  (best of {repeats})")
    print(f"mcp-inspect: URL line printed:            {best_url:6.3f} s  ratio {best_url / best_floor:5.2f}x  (goal <= 0.25 s)")
    print(f"mcp-inspect: the URL answered:            {best_page:6.3f} s")


if __name__ == "__main__":
    main()
