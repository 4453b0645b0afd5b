"""Restart benchmark: from a file write to the new server's tools listed in the recording.

Prints the total, the watcher's debounce (quiet period), the server's own start time to a tools/list answer
measured alone in the same run, and what is left: the inspector's own cost of a restart (noticing the change,
stopping the old server, spawning, handshake, listing and diffing). Usage: python bench/restart.py [REPEATS]
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

ROOT = Path(__file__).resolve().parent.parent
QUIET = 0.3  # the watcher's default quiet period (inspector.session.watch.Watcher)
sys.path.insert(0, str(ROOT / "tests"))  # the restart tests' editable server: the benchmark restarts the same one
from editable_server import source  # noqa: E402


def server_source(version: int) -> str:
    """One tool whose description says the version, so the recorded tools/list tells which server answered."""
    return source([{"name": "t", "description": f"v{version}", "inputSchema": {"type": "object"}}], name="bench",
                  version=str(version), list_changed=False)


def server_alone(script: Path) -> float:
    """Spawn to tools/list answered, with a bare client."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for msg in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        if "id" in msg:
            proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait()
    return elapsed


def restart_once(folder: Path, record: Path, version: int) -> float:
    """Write the server, wait until the new tools/list answer is recorded."""
    before = record.read_bytes().count(b"\n")
    started = time.perf_counter()
    (folder / "server.py").write_text(server_source(version))
    marker = f'"v{version}"'.encode()
    while True:
        data = record.read_bytes()
        lines = data.split(b"\n")[before:]
        if any(b'"tools"' in line and marker in line for line in lines):
            return time.perf_counter() - started
        time.sleep(0.002)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "server.py").write_text(server_source(0))
        record = folder / "bench.jsonl"
        proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--record",
                                 str(record), "--", sys.executable, "server.py"], cwd=folder,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert re.match(r"http://", proc.stdout.readline().decode())
            while b'"v0"' not in (record.read_bytes() if record.exists() else b""):
                time.sleep(0.01)
            time.sleep(0.5)
            totals = []
            for version in range(1, repeats + 1):
                totals.append(restart_once(folder, record, version))
                time.sleep(0.5)
            alone = [server_alone(folder / "server.py") for _ in range(repeats)]
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    total, start = statistics.median(totals), statistics.median(alone)
    print(f"restart after a file write (median of {repeats})")
    print(f"  write -> new tools listed:           {total * 1000:7.0f} ms")
    print(f"  debounce (quiet period):             {QUIET * 1000:7.0f} ms")
    print(f"  server alone, spawn -> tools/list:   {start * 1000:7.0f} ms")
    print(f"  inspector's own restart cost:        {(total - QUIET - start) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
