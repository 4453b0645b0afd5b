"""Export benchmark: `mcp-inspect export` of a 100,000-message recording, each format, against the floor.

The recording is made once with `call --tool flood --args '{"n": N}' --record` (tests/fixtures/flood_server.py).
Measured in the same run, alternately, as whole child processes (start to exit):
- floor: a bare Python process that reads the file and json-parses every line;
- mcp-inspect: `python -m inspector.cli export REC -o OUT --format F` for jsonl, html and md.
Prints the best of N for each and the ratio to the floor. Usage: python bench/export.py [N] [MESSAGES]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}
FLOOR = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    n = sum(1 for line in f if json.loads(line))\n"


def timed(argv: list[str]) -> float:
    """Wall seconds of one child process run to its exit (which must succeed)."""
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, cwd=ROOT, env=ENV, timeout=600)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{argv[:6]}... failed ({result.returncode}): {result.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        recording = Path(folder) / "flood.jsonl"
        timed([sys.executable, "-m", "inspector.cli", "call", "--tool", "flood", "--args", f'{{"n": {messages}}}',
               "--record", str(recording), "--", sys.executable, str(ROOT / "tests" / "fixtures" / "flood_server.py")])
        floor = [sys.executable, "-c", FLOOR, str(recording)]
        best = {"floor": float("inf"), "jsonl": float("inf"), "html": float("inf"), "md": float("inf")}
        for round_ in range(repeats + 1):  # round 0 warms the page cache and the .pyc files
            for name in best:
                out = Path(folder) / f"out-{round_}.{name}"
                argv = floor if name == "floor" else [sys.executable, "-m", "inspector.cli", "export", str(recording),
                                                      "-o", str(out), "--format", name]
                elapsed = timed(argv)
                if round_:
                    best[name] = min(best[name], elapsed)
        lines = sum(1 for _ in recording.open("rb"))
        print(f"recording: {lines:,} lines, {recording.stat().st_size / 1e6:.1f} MB (best of {repeats} each)")
        print(f"floor (read + json.loads every line): {best['floor']:7.3f} s")
        for name in ("jsonl", "html", "md"):
            print(f"mcp-inspect export --format {name:5}: {best[name]:7.3f} s   ratio {best[name] / best['floor']:5.2f}x")
        # The issue: export of 100,000 records <= 1 s, where the review's floor (json.loads of every line of a
        # 100,000-message recording) took 0.39 s; judged as a ratio to this run's floor (machines differ). The
        # review timed `export` as it runs by default (the jsonl copy); the reports are held to the same figure here
        # for reference, and said to be so.
        limit = best["floor"] / 0.39
        verdict = {name: best[name] <= limit for name in best}
        print(f"goal: `export` (jsonl, as the review timed it) <= 1 s where the review's floor took 0.39 s (2.6x): "
              f"{limit:.2f} s here: {'MET' if verdict['jsonl'] else 'NOT MET'}")
        print("reference only, the reports against the same figure: "
              + ", ".join(f"{name} {'met' if verdict[name] else 'not met'}" for name in ("html", "md")))


if __name__ == "__main__":
    main()
