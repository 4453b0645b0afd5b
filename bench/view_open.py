"""Opening big recordings: `mcp-inspect view` of 100,000- and 1,000,000-message recordings, and of 10^6-line
recordings of short lines (the issue's "10^6-line, 50 MB" row).

Measures, in the same run, for each recording:
- floor: a bare Python process that reads the file and `json.loads` every line (whole process, wall);
- mcp-inspect: `view --no-open --port 0 FILE` → the URL line printed, and → the newest rows fetched over HTTP
  (`GET /timeline/rows`, the route the page pages with); its peak RSS (VmHWM) once the rows are served.
Prints each figure (best of REPEATS) and the ratio to the floor. The recordings are made once, into a temporary
folder:
- flood-N: `mcp-inspect call --tool flood --record` against tests/fixtures/flood_server.py (N notifications of
  ~190 bytes a line);
- short-N: N short stderr lines (one character each, ~62 bytes a line: the record's seq and t take most of it),
  written by the project's own write path, a `Store` on a `RecordingWriter` (numbered, timed and masked by
  `Store.add_batch`, a thousand lines per batch as a flooding server's pipe reads give them), between a spawn and
  an exit event, as `mcp-inspect` records a server that writes them to stderr;
- many-N: the review's own file for that row (security.md's appendix, `many.jsonl`): a header, then N lines
  `{"seq":n,"t":1,"kind":"stderr","text":"line n"}` written by hand (whole-number times), 50 MB at 10^6.

    python bench/view_open.py [REPEATS] [--sizes 100000,1000000] [--short 1000000] [--many 1000000] [--tree PATH ...]

--short 0 and --many 0 leave those recordings out. --tree measures other checkouts too (e.g. main, then this one:
the runs alternate, paired, on the same files): PYTHONPATH is that tree for its runs. The default is this
script's own repository. The recordings are made by the first tree.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOOR = """
import json, sys
n = 0
with open(sys.argv[1], 'rb') as handle:
    for line in handle:
        json.loads(line)
        n += 1
print(n)
"""


def make_recording(tree: Path, count: int, folder: Path) -> Path:
    """One flood of `count` notifications, recorded by `mcp-inspect call` (header, handshake, flood, result)."""
    path = folder / f"flood-{count}.jsonl"
    subprocess.run([sys.executable, "-m", "inspector.cli", "call", "--tool", "flood", "--args", f'{{"n":{count}}}',
                    "--timeout", "900", "--record", str(path), "--", sys.executable,
                    str(tree / "tests/fixtures/flood_server.py")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder,
                   env={**os.environ, "PYTHONPATH": str(tree)}, timeout=1800)
    return path


SHORT_LINES = """
import sys
from inspector.protocol.records import EVENT, STDERR, Record
from inspector.recording.files import RecordingWriter, header
from inspector.recording.store import Store

path, count = sys.argv[1], int(sys.argv[2])
writer = RecordingWriter.create(path, unique=False)
writer.write_header(header({"transport": "stdio", "command": ["chatty-server"], "cwd": "/"}))
store = Store(writer)
store.add(Record(EVENT, event="spawn", detail={"pid": 4242}))
for start in range(0, count, 1000):
    store.add_batch([Record(STDERR, text=str(i % 10)) for i in range(start, min(count, start + 1000))])
store.add(Record(EVENT, event="exit", detail={"code": 0, "signal": None, "stderr_tail": []}))
store.add(Record(EVENT, event="session-end", detail={}))
writer.close()
"""


def make_short_lines(tree: Path, count: int, folder: Path) -> Path:
    """`count` one-character stderr lines, written through the project's Store (see the module's docstring)."""
    path = folder / f"short-{count}.jsonl"
    subprocess.run([sys.executable, "-c", SHORT_LINES, str(path), str(count)], check=True, cwd=folder,
                   env={**os.environ, "PYTHONPATH": str(tree)}, timeout=1800)
    return path


def make_many_lines(count: int, folder: Path) -> Path:
    """The review's hand-written file of `count` small stderr lines (see the module's docstring)."""
    path = folder / f"many-{count}.jsonl"
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-01-01T00:00:00Z",
            "inspector": "0", "target": {"command": ["true"]}, "protocol": "auto", "env": {}}
    with open(path, "wb") as handle:
        handle.write((json.dumps(head) + "\n").encode())
        for n in range(1, count + 1):
            handle.write(b'{"seq":%d,"t":1,"kind":"stderr","text":"line %d"}\n' % (n, n))
    return path


def floor(path: Path) -> float:
    """Seconds for a bare process to json.loads every line of the recording."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, str(path)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM), MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def view(tree: Path, path: Path, newest_seq: int) -> tuple[float, float, float]:
    """(URL printed, newest rows served, peak RSS MiB) for one `mcp-inspect view` of the recording."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "view", "--no-open", "--port", "0", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=path.parent,
                            env={**os.environ, "PYTHONPATH": str(tree)})
    try:
        url = proc.stdout.readline().decode().strip()
        url_at = time.perf_counter() - started
        port, token = re.search(r":(\d+)/\?token=(.+)$", url).groups()
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
        conn.request("GET", "/timeline/rows", headers={"Cookie": f"mcp_inspect_{port}={token}",
                                                      "HX-Request": "true"})
        body = conn.getresponse().read().decode()
        rows_at = time.perf_counter() - started
        if f'id="r-{newest_seq}"' not in body:
            raise SystemExit(f"the newest row #{newest_seq} was not served: {body[:300]!r}")
        return url_at, rows_at, peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def newest_seq(path: Path) -> int:
    """The seq of the recording's last line (the session-end event: the newest row the page shows)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - 4096))
        last = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return int(re.match(rb'\{"seq":(\d+)', last).group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repeats", nargs="?", type=int, default=3)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--short", type=int, default=1_000_000)
    parser.add_argument("--many", type=int, default=1_000_000)
    parser.add_argument("--tree", type=Path, action="append")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [ROOT]]
    print(f"view of big recordings (best of {args.repeats}, runs alternating between trees)")
    with tempfile.TemporaryDirectory() as tmp:
        makers = [(lambda count=int(size): make_recording(trees[0], count, Path(tmp)), f"{int(size):,} messages")
                  for size in args.sizes.split(",") if int(size)]
        if args.short:
            makers.append((lambda: make_short_lines(trees[0], args.short, Path(tmp)),
                           f"{args.short:,} short stderr lines"))
        if args.many:
            makers.append((lambda: make_many_lines(args.many, Path(tmp)),
                           f"{args.many:,} small hand-written lines (the review's many.jsonl)"))
        for make, what in makers:
            path = make()
            measure(path, what, trees, args.repeats)
            path.unlink()


def measure(path: Path, what: str, trees: list[Path], repeats: int) -> None:
    """Floor and each tree's view of one recording, best of `repeats`, printed."""
    lines = path.read_bytes().count(b"\n")
    seq = newest_seq(path)
    base = min(floor(path) for _ in range(repeats))
    runs: dict[Path, list] = {tree: [] for tree in trees}
    for _ in range(repeats):
        for tree in trees:
            runs[tree].append(view(tree, path, seq))
    print(f"  {what} ({lines:,} lines, {path.stat().st_size / 1e6:.0f} MB):")
    print(f"    floor (json.loads of every line, whole process): {base:.3f} s")
    for tree in trees:
        url_at = min(run[0] for run in runs[tree])
        rows_at = min(run[1] for run in runs[tree])
        rss = min(run[2] for run in runs[tree])
        print(f"    mcp-inspect view ({tree}): URL printed {url_at:.3f} s; newest rows served {rows_at:.3f} s "
              f"({rows_at / base:.2f}x the floor); peak RSS {rss:.0f} MiB")
        print("      " + goal_line(lines, path.stat().st_size, base, rows_at, rss))


def goal_line(lines: int, size: int, floor_seconds: float, rows_at: float, rss: float) -> str:
    """The issue's goal for this size: 100,000 messages -> first rows <= 1 s, where the review's floor (the same
    json.loads of every line) took 0.39 s, so judged as <= 2.6x the floor of this run; 10^6 lines: <= 5 s and
    <= 300 MB (no floor given), judged as they stand. The table's 10^6-line row is a 50 MB file (the review's
    many.jsonl); a 10^6-line file well beyond that (the 187 MB flood) is measured against the same figures for
    reference, and said to be so."""
    if lines >= 1_000_000:
        met = rows_at <= 5.0 and rss <= 300 / 1.048576
        if size > 100e6:
            return (f"reference only (the goal's row is a 10^6-line, 50 MB file; this one is {size / 1e6:.0f} MB): "
                    f"<= 5 s and <= 300 MB: {'met' if met else 'not met'}")
        return f"goal: <= 5 s and <= 300 MB: {'MET' if met else 'NOT MET'}"
    limit = 1.0 / 0.39 * floor_seconds
    return f"goal: <= 1 s where the review's floor took 0.39 s (2.6x): {limit:.2f} s here: " + (
        "MET" if rows_at <= limit else "NOT MET")


if __name__ == "__main__":
    main()
