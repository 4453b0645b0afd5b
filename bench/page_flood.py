"""Browser benchmark: the flood tool called from the page, timed on the page's own clock.

A headless Chromium (Playwright) opens a child `mcp-inspect --no-open --port 0 -- python
tests/fixtures/flood_server.py`, calls `flood` with n = N from the tool form and measures, with `performance.now()`
from the Call click (caught in the capture phase):

- result: the first animation frame in which the result card holds "flooded N";
- newest row: the first animation frame in which the tools/call response row is in the timeline;
- the longest gap between animation frames from the click to the newest row (an rAF loop);
- the timeline's DOM rows at the end.

The bare floor (bench/floor.py flood N, the whole process) runs in the same run; the ratios are printed beside it.
Usage: python bench/page_flood.py [N ...] [--runs R] [--cap SECONDS]   (default N = 10000 100000, R = 3)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOD_SERVER = ROOT / "tests" / "fixtures" / "flood_server.py"
CHROMIUM = os.environ.get("MCP_INSPECT_CHROMIUM", "/usr/bin/chromium")
REVIEW_GOALS = {100_000: (1.5, 0.334)}
"""N: (the issue's goal in seconds for click -> result, the bare floor's time on the review's machine). Machines
differ (the same floor takes about 0.9 s on a loaded 2-core box here), so the goal is judged as a ratio to the
floor measured in the same run: 1.5 s / 0.334 s = 4.5x."""

# Injected before the page's own scripts: the clock starts at the Call click, one rAF loop watches for the result,
# the newest row and the frame gaps. Reading the DOM once per frame is the observer's own cost, kept small.
PROBE = """
(() => {
  const probe = window.__flood = {clicked: null, result: null, newest: null, maxGap: 0, n: null};
  document.addEventListener('click', (e) => {
    const button = e.target.closest && e.target.closest('button');
    if (button && button.textContent.trim() === 'Call' && probe.clicked === null) probe.clicked = performance.now();
  }, true);
  let last = null;
  function frame(now) {
    if (probe.clicked !== null && probe.newest === null) {
      if (last !== null && last >= probe.clicked) probe.maxGap = Math.max(probe.maxGap, now - last);
      if (probe.result === null) {
        const card = document.querySelector('.call.state-result');
        if (card && card.textContent.includes('flooded ' + probe.n)) probe.result = now - probe.clicked;
      }
      const answers = document.querySelectorAll('#timeline-rows > .row.kind-response');
      for (let i = answers.length - 1; i >= 0; i--) {
        const method = answers[i].querySelector('.c-method');
        if (method && method.textContent.includes('tools/call')) { probe.newest = now - probe.clicked; break; }
      }
    }
    last = now;
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
})();
"""


def floor_seconds(n: int) -> float:
    """The bare client's whole process: spawn, handshake, call, parse every line, exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "bench" / "floor.py"), "flood", str(n), "--", sys.executable,
                    str(FLOOD_SERVER)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def start_inspector(folder: Path) -> tuple[subprocess.Popen, str]:
    argv = [sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--no-watch",
            "--record", str(folder / f"flood-{time.monotonic_ns()}.jsonl"), "--", sys.executable, str(FLOOD_SERVER)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=folder,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(60)
    if not line or not line[0].startswith(b"http"):
        proc.kill()
        raise SystemExit(f"mcp-inspect printed no URL: {line!r}")
    return proc, line[0].decode().strip()


def page_run(browser, folder: Path, n: int, cap: float) -> dict:
    """One flood from a fresh page on a fresh inspector."""
    proc, url = start_inspector(folder)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.add_init_script(PROBE)
        page.goto(url)
        page.locator("#tools-list .tool-item", has_text="flood").click()
        page.get_by_label("n", exact=True).fill(str(n))
        page.evaluate("(n) => { window.__flood.n = n; }", n)
        page.get_by_role("button", name="Call", exact=True).click()
        try:
            page.wait_for_function("() => window.__flood.newest !== null && window.__flood.result !== null",
                                   timeout=cap * 1000, polling=250)
        except Exception:  # Playwright's TimeoutError: report what was reached within the cap
            pass
        probe = page.evaluate("() => window.__flood")
        rows = page.evaluate("() => document.querySelectorAll('#timeline-rows > .row').length")
        return {"result": probe["result"], "newest": probe["newest"], "gap": probe["maxGap"], "rows": rows}
    finally:
        context.close()
        proc.terminate()
        proc.wait(30)


def seconds(ms: float | None) -> str:
    return "not within the cap" if ms is None else f"{ms / 1000:.3f} s"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cap", type=float, default=240.0, help="give up waiting for one run after this many s")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for n in args.n:
            floors, runs = [], []
            for _ in range(args.runs):  # paired: floor, then the page, in turn
                floors.append(floor_seconds(n))
                runs.append(page_run(browser, Path(tmp), n, args.cap))
            floor = min(floors)
            best = lambda key: min((r[key] for r in runs if r[key] is not None), default=None)  # noqa: E731
            result, newest = best("result"), best("newest")
            print(f"N = {n:,}: bare floor (bench/floor.py, whole process) {floor:.3f} s; best of {args.runs}:")
            print(f"  click -> result shown      {seconds(result)}"
                  + (f"   ratio {result / 1000 / floor:.1f}x the floor" if result is not None else ""))
            print(f"  click -> newest row shown  {seconds(newest)}"
                  + (f"   {(newest - result) / 1000:.3f} s after the result" if None not in (newest, result) else ""))
            gaps = ", ".join(f"{r['gap']:.0f}" for r in runs)
            print(f"  longest frame gap          {min(r['gap'] for r in runs):.0f} ms (each run: {gaps} ms)")
            print(f"  timeline rows in the DOM   {max(r['rows'] for r in runs)}")
            if n in REVIEW_GOALS:
                goal, review_floor = REVIEW_GOALS[n]
                print(f"  goal: result <= {goal} s where the review's floor took {review_floor} s, i.e. <= "
                      f"{goal / review_floor:.1f}x the floor: {goal / review_floor * floor:.2f} s on this machine now"
                      + ("   MET" if result is not None and result / 1000 <= goal / review_floor * floor else
                         "   NOT MET"))
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
