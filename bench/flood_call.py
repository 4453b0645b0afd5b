"""Flood benchmark, headless: `call` a tool that floods N notifications, recorded, against the bare floor.

Measures, in the same run and the same way (wall time of a child process, start to exit), paired A/B/A/B:
- floor: `python bench/floor.py flood N -- python tests/fixtures/flood_server.py`, a bare client that reads and
  json-parses every line until the call's answer;
- mcp-inspect: `python -m inspector.cli call --tool flood --args '{"n":N}' --record F -- python
  tests/fixtures/flood_server.py` (every line recorded to F before it is acted on).
The flood server does not flush per line, so both read the flood at the speed of the pipe. Checks that the
recording holds all N notifications, then prints the best and the median of each (wall time, and the CPU time of
the command and its server) and the ratios of the bests.
Usage: python bench/flood_call.py [N] [REPEATS]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "flood_server.py")]


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds of one child process run to its exit, and the CPU seconds it and the server used (user + sys:
    far less disturbed than wall time by other work on a shared machine). Its output is checked, not kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0 or "flooded" not in result.stdout:
        raise SystemExit(f"{argv[:5]}... failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def notifications_in(path: Path) -> int:
    """How many notifications/message lines the recording holds."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if b'"notifications/message"' in line)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    floor = [sys.executable, str(ROOT / "bench" / "floor.py"), "flood", str(count), "--", *SERVER]
    with tempfile.TemporaryDirectory() as tmp:
        def ours_argv(n: int) -> list[str]:
            return [sys.executable, "-m", "inspector.cli", "call", "--tool", "flood", "--args", f'{{"n":{count}}}',
                    "--record", str(Path(tmp) / f"flood-{n}.jsonl"), "--", *SERVER]
        timed(floor), timed(ours_argv(0))  # warm the page cache and .pyc files for both
        floors, ours = [], []
        for n in range(1, repeats + 1):  # interleaved, so drift in machine load hits both alike
            floors.append(timed(floor))
            ours.append(timed(ours_argv(n)))
            recorded = notifications_in(Path(tmp) / f"flood-{n}.jsonl")
            if recorded != count:
                raise SystemExit(f"the recording holds {recorded} notifications, not {count}")
    print(f"flood of {count} notifications, `call --record` (best / median of {repeats}, paired; cpu: the command "
          "and its server, user + sys)")
    for name, runs in (("bare floor (read + json.loads)", floors), ("mcp-inspect call --record", ours)):
        walls, cpus = [run[0] for run in runs], [run[1] for run in runs]
        print(f"  {name:31s} wall {min(walls):6.3f} s / {statistics.median(walls):6.3f} s   "
              f"cpu {min(cpus):6.3f} s / {statistics.median(cpus):6.3f} s")
    wall = min(run[0] for run in ours) / min(run[0] for run in floors)
    cpu = min(run[1] for run in ours) / min(run[1] for run in floors)
    print(f"  ratio (best): wall {wall:.2f}x, cpu {cpu:.2f}x")


if __name__ == "__main__":
    main()
