"""Headless call benchmark: `mcp-inspect call tools/list -- python raw_server.py` against the bare floor client.

Measures, in the same run and the same way (wall time of a child process, start to exit), alternately:
- floor: `python bench/floor.py list -- python raw_server.py`, the bare client that spawns the server, sends
  initialize, notifications/initialized and tools/list, reads the answers, closes the server's stdin and waits;
- mcp-inspect: `mcp-inspect call tools/list -- python raw_server.py`, started as the console script starts it
  (CONSOLE_SCRIPT, with this tree's package; `python -m` would add runpy's own imports, which no user pays):
  the era probe, the same handshake and list, recording to a spool file, a process group with its lifeline, and the shutdown ladder).
Both print the same tools/list result. Children may write .pyc files (an installed package has them), so the
first, unmeasured round compiles. Prints the best of N for each and the ratio (goal: <= 1.2x).
Usage: python bench/call.py [N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "raw_server.py")]
CONSOLE_SCRIPT = ("import re\nimport sys\nfrom inspector.cli import main\n"
                  "sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\nsys.exit(main())")
"""What pip's `mcp-inspect` console script runs, line for line."""
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall seconds of one child process run to its exit, and its stdout."""
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=60)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{argv[:4]}... failed ({result.returncode}): {result.stderr}")
    return elapsed, result.stdout


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    floor = [sys.executable, str(ROOT / "bench" / "floor.py"), "list", "--", *SERVER]
    ours = [sys.executable, "-c", CONSOLE_SCRIPT, "call", "tools/list", "--", *SERVER]
    timed(floor), timed(ours)  # warm the page cache and the .pyc files for both
    best_floor = best_ours = float("inf")
    for _ in range(repeats):  # interleaved, so drift in machine load hits both alike
        elapsed, floor_out = timed(floor)
        best_floor = min(best_floor, elapsed)
        elapsed, ours_out = timed(ours)
        best_ours = min(best_ours, elapsed)
    # floor.py prints the result compact and cut at 200 characters; ours is indented JSON.
    assert floor_out.strip() == json.dumps(json.loads(ours_out))[:200], "both must get the same tools/list result"
    print(f"floor (bench/floor.py list): {best_floor * 1000:7.1f} ms  (best of {repeats})")
    print(f"mcp-inspect call tools/list: {best_ours * 1000:7.1f} ms  (best of {repeats})")
    print(f"ratio:                       {best_ours / best_floor:7.2f}x  (goal <= 1.2x)")


if __name__ == "__main__":
    main()
