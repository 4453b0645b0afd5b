"""Remake docs/screenshot.png and docs/screenshot-dark.png: the page at 1280x800 on the SDK fixture server, a tool
open and called, in the light and the dark scheme.

    python docs/screenshots.py [OUT_DIR] [--sizes 1024x768,1280x800,1920x1080]

With --sizes it writes screenshot-<scheme>-<width>.png for each size instead (to look at the layout at each width).
Needs Chromium (MCP_INSPECT_CHROMIUM, default /usr/bin/chromium) and Playwright, as the browser tests do.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, start_inspector, wait_tools_listed  # noqa: E402


def session(page, url: str) -> None:
    """What a user has done by the time of the picture: a first call, then a tool open and called."""
    page.goto(url)
    page.wait_for_selector("#tools-list .tool-item")
    for name, fields in (("echo", {"text": "Zürich, 8 °C"}), ("add", {"a": "2", "b": "40"})):
        page.get_by_role("button", name=re.compile("^" + name)).click()
        pane = page.locator(f'.tool-detail[data-tool="{name}"]')
        pane.wait_for()
        for label, value in fields.items():
            pane.get_by_label(re.compile(rf"^{label}\b")).first.fill(value)
        page.get_by_role("button", name="Call", exact=True).click()
        page.locator(".call.state-result").wait_for()
    page.wait_for_function("() => document.querySelectorAll('#timeline-rows .row.kind-response').length >= 4")
    page.mouse.move(0, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs")
    parser.add_argument("--sizes", help="comma-separated WxH: one picture per size and scheme")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",")] if args.sizes else [(1280, 800)]
    # Run from the repository with a relative path, so the header shows what a reader would type.
    python = "python" if shutil.which("python") else sys.executable
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for scheme in ("light", "dark"):
            with tempfile.TemporaryDirectory() as tmp:
                # One mcp-inspect per picture: each shows one session.
                inspector = start_inspector(Path(tmp), [python, "tests/fixtures/sdk_server.py"], cwd=ROOT)
                try:
                    wait_tools_listed(inspector, 90)
                    # The session at 1280 px, where the sidebar is shown with a tool open; then each size.
                    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
                    page = context.new_page()
                    session(page, inspector.url)
                    for width, height in sizes:
                        page.set_viewport_size({"width": width, "height": height})
                        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                        if args.sizes:
                            name = f"screenshot-{scheme}-{width}.png"
                        else:
                            name = "screenshot.png" if scheme == "light" else "screenshot-dark.png"
                        page.screenshot(path=str(args.out / name))
                        print(args.out / name)
                    context.close()
                finally:
                    inspector.stop()
        browser.close()

if __name__ == "__main__":
    main()
