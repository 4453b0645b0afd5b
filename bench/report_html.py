"""HTML report benchmark: export a generated 100,000-message recording with `--format html`, open it in Chromium
from disk (offline) and search it. Prints the times and the size ratio; asserts nothing.

Usage: python bench/report_html.py [MESSAGES]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_report_html import write_big_recording  # noqa: E402 - the tests' generator, so both measure one shape


def main() -> None:
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        recording, out = Path(folder) / "big.jsonl", Path(folder) / "big.html"
        write_big_recording(recording, messages)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inspector.cli", "export", str(recording), "--format", "html", "-o",
                        str(out)], check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        exported = time.perf_counter() - start
        print(f"{messages} messages: .jsonl {recording.stat().st_size / 1e6:.1f} MB, report "
              f"{out.stat().st_size / 1e6:.1f} MB (ratio {out.stat().st_size / recording.stat().st_size:.2f}); "
              f"export {exported:.2f} s")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("MCP_INSPECT_CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_context(offline=True).new_page()
            start = time.perf_counter()
            page.goto(out.as_uri())
            page.wait_for_selector("body[data-ready=true]", timeout=300_000)
            opened = time.perf_counter() - start
            count = page.locator(".filters .count")
            start = time.perf_counter()
            page.fill("input[name=q]", "needle")
            count.filter(has_text="showing 1 row of").wait_for(timeout=300_000)  # polled: the page's CSP forbids eval
            searched = time.perf_counter() - start
            start = time.perf_counter()
            page.fill("input[name=q]", "lookup")  # every request: 50,000 rows
            count.filter(has_text="rows of").wait_for(timeout=300_000)
            searched_again = time.perf_counter() - start
            browser.close()
        print(f"open to ready {opened:.2f} s; first search {searched:.2f} s (0.25 s of it the typing pause); "
              f"second search {searched_again:.2f} s")


if __name__ == "__main__":
    main()
