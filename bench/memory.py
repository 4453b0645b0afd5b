"""Inspector memory in page mode: RSS after each of ten floods of 100,000 notifications (1,000,000 messages).

Starts `mcp-inspect --no-open --port 0 --record F -- python tests/fixtures/flood_server.py` (no browser attached),
calls the `flood` tool through the page's HTTP route (`POST /tools/flood/call`) ten times, waits each time until
the recording holds the call's result, and reads the inspector's RSS (/proc/PID/status VmRSS). In the same run the
bare reader (bench/floor.py) reads one flood of the same size; its peak RSS is the floor. Prints RSS per 100k,
the growth in bytes per message after the first flood (the warm-up), and the ratio to the floor.

    python bench/memory.py [FLOODS] [N] [--tree PATH]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", status).group(1)) / 1024


def floor_rss_mib(tree: Path, count: int) -> float:
    """Peak RSS of the bare reader (bench/floor.py) reading one flood of `count`."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "floor.py"), "flood", str(count), "--",
                             sys.executable, str(tree / "tests/fixtures/flood_server.py")],
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"the floor failed with {proc.returncode}")
    return usage.ru_maxrss / 1024


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


class Recording:
    """Counts how often a marker occurs in a growing file, reading only what is new."""

    def __init__(self, path: Path, marker: bytes) -> None:
        self.path, self.marker, self.pos, self.tail, self.seen = path, marker, 0, b"", 0

    def count(self) -> int:
        if not self.path.exists():
            return 0
        with open(self.path, "rb") as handle:
            handle.seek(self.pos)
            chunk = handle.read()
        self.pos += len(chunk)
        data = self.tail + chunk
        self.seen += data.count(self.marker)
        self.tail = data[-(len(self.marker) - 1):]  # a marker cut by the read is counted next time, once
        return self.seen


def run(tree: Path, floods: int, count: int, folder: Path) -> list[float]:
    record = folder / f"memory-{time.monotonic_ns()}.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--record",
                             str(record), "--", sys.executable, str(tree / "tests/fixtures/flood_server.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=folder,
                            env={**os.environ, "PYTHONPATH": str(tree)})
    try:
        url = proc.stdout.readline().decode().strip()
        port, token = re.search(r":(\d+)/\?token=(.+)$", url).groups()
        headers = {"Cookie": f"mcp_inspect_{port}={token}", "HX-Request": "true",
                   "Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded"}
        # the server's line is recorded as it came (with its own spacing) or re-encoded compactly: look for both
        tools = [Recording(record, b'"tools":['), Recording(record, b'"tools": [')]
        wait_until(lambda: sum(marker.count() for marker in tools) > 0, 60, "the tools list")
        results = Recording(record, f"flooded {count}".encode())
        rss = [rss_mib(proc.pid)]
        for done in range(1, floods + 1):
            conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
            conn.request("POST", "/tools/flood/call", body=urlencode({"arguments": f'{{"n":{count}}}'}),
                         headers=headers)
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                raise SystemExit(f"the call was refused: {answer.status}")
            wait_until(lambda: results.count() >= done, 600, f"flood {done}")
            rss.append(rss_mib(proc.pid))
            print(f"    after {done * count:>9,} messages: RSS {rss[-1]:6.1f} MiB", flush=True)
        return rss
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("floods", nargs="?", type=int, default=10)
    parser.add_argument("count", nargs="?", type=int, default=100_000)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    tree = args.tree.resolve()
    print(f"inspector RSS in page mode, {args.floods} floods of {args.count:,}, tree {tree}")
    with tempfile.TemporaryDirectory() as tmp:
        base = floor_rss_mib(tree, args.count)
        print(f"  bare reader (bench/floor.py, one flood): peak RSS {base:.1f} MiB")
        rss = run(tree, args.floods, args.count, Path(tmp))
    grown = (rss[-1] - rss[1]) * 1024 * 1024 / (args.count * (args.floods - 1)) if args.floods > 1 else 0.0
    print(f"  idle {rss[0]:.1f} MiB; after {args.floods * args.count:,} messages {rss[-1]:.1f} MiB "
          f"({rss[-1] / base:.1f}x the bare reader)")
    print(f"  growth after the first flood: {grown:.0f} bytes per message")


if __name__ == "__main__":
    main()
