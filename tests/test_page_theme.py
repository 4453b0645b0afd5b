"""Looks: the light and dark themes, the switch that picks one and is remembered, and the contrast of every badge
(WCAG AA, 4.5:1) in both themes, in a real Chromium against a real mcp-inspect and a server that shows every badge."""

from __future__ import annotations

import pytest

from conftest import fixture_command, start_inspector, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

# The effective background of an element: its own and its ancestors' backgrounds, composited until one is opaque.
# The ratio is WCAG 2's relative-luminance contrast of the text colour over that background.
CONTRAST_JS = """
(selector) => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return [...document.querySelectorAll(selector)].filter(el => el.getClientRects().length).map(el => {
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    return {text: el.textContent.trim(), cls: el.className, row: el.closest('.row') ? el.closest('.row').className : '',
            fg: getComputedStyle(el).color, bg: 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')',
            ratio: Math.round((hi + 0.05) / (lo + 0.05) * 100) / 100};
  });
}
"""

BADGES = ".badge, .flag"


def badges_inspector(tmp_path):
    """An inspector on the badges fixture, with each of its tools called once (every badge and flag in view)."""
    inspector = start_inspector(tmp_path, fixture_command("badges_server"))
    wait_tools_listed(inspector, 60)
    for name, timeout in (("log", ""), ("fail", ""), ("slow", "0.3")):
        status, _, body = inspector.post(f"/tool/call?name={name}", {"mode": "form", "action": "call",
                                                                    "timeout": timeout})
        assert status == 200, body
    return inspector


@pytest.fixture(scope="module")
def badges_page(tmp_path_factory):
    inspector = badges_inspector(tmp_path_factory.mktemp("badges"))
    yield inspector
    inspector.stop()


def open_page(context, inspector):
    page = context.new_page()
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    # Every row the fixture makes is in: the late response, the error, the invalid line, a warned log row.
    for selector in (".row.flag-late", ".row.kind-error", ".row.kind-invalid", ".row.kind-stderr",
                     ".row .flag-warning", ".row.log-error"):
        page.wait_for_selector(f"#timeline-rows {selector}", timeout=30_000)
    return page


def low_contrast(page) -> list[str]:
    """Each badge or flag under 4.5:1, in words."""
    return sorted({f"{b['text']!r} ({b['cls']}) in {b['row'] or 'the page'}: {b['fg']} on {b['bg']} = {b['ratio']}"
                   for b in page.evaluate(CONTRAST_JS, BADGES) if b["ratio"] < 4.5})


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_badge_has_aa_contrast_in_both_themes(browser, badges_page, scheme):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 800})
    try:
        page = open_page(context, badges_page)
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        # A tool open: its badges in the detail too, each kind of annotation badge in the list.
        page.locator("#tools-list .tool-item", has_text="look_up").click()
        page.wait_for_selector(".tool-detail .badges .badge")
        shown = page.evaluate(CONTRAST_JS, BADGES)
        classes = " ".join(b["cls"] for b in shown)
        for kind in ("ro", "destructive", "idem", "open", "closed", "advice", "k-request", "k-response",
                     "k-notification", "k-error", "k-invalid", "k-stderr", "k-event", "flag-late", "flag-warning",
                     "level-badge"):
            assert kind in classes.split(), f"no {kind} badge on the page to check"
        # A log row's level is its own badge in the kind cell (templates/partials/_row.html), one colour per level:
        # each level the fixture logs is checked.
        levels = {b["text"] for b in shown if "level-badge" in b["cls"].split()}
        assert levels >= {"debug", "info", "warning", "error"}, f"level badges on the page: {sorted(levels)}"
        bad = low_contrast(page)
        assert not bad, "\n".join(bad)
        # The same rows opened, hovered and targeted by a pair link.
        error_row = page.locator("#timeline-rows .row.kind-error").last
        error_row.locator("a.pair-link").click()
        request = page.locator("#timeline-rows .row:target")
        request.wait_for()
        error_row.locator("summary .c-time").click()
        page.locator("#timeline-rows .row.flag-late summary .c-time").last.hover()
        bad = low_contrast(page)
        assert not bad, "\n".join(bad)
    finally:
        context.close()


def test_theme_switch_overrides_the_system_and_is_remembered(browser, badges_page, tmp_path):
    context = browser.new_context(color_scheme="light")
    try:
        page = open_page(context, badges_page)
        background = "getComputedStyle(document.body).backgroundColor"
        light = page.evaluate(background)
        assert page.evaluate("document.documentElement.dataset.theme") == "light"
        switch = page.get_by_label("Theme")
        assert switch.input_value() == "system"
        switch.select_option("dark")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        dark = page.evaluate(background)
        assert dark != light
        page.reload()
        page.wait_for_selector("#tools-list .tool-item")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        assert page.evaluate(background) == dark
        assert page.get_by_label("Theme").input_value() == "dark"
        # Another mcp-inspect is another port, so another origin: the choice still holds there.
        other = start_inspector(tmp_path, fixture_command("raw_server"))
        try:
            wait_tools_listed(other, 60)
            second = context.new_page()
            second.goto(other.url)
            second.wait_for_selector("#tools-list .tool-item")
            assert second.evaluate("document.documentElement.dataset.theme") == "dark"
        finally:
            other.stop()
        # Back to the system's choice, which follows the OS setting as it changes.
        page.get_by_label("Theme").select_option("system")
        assert page.evaluate("document.documentElement.dataset.theme") == "light"
        page.emulate_media(color_scheme="dark")
        wait_for(lambda: page.evaluate("document.documentElement.dataset.theme") == "dark", 5,
                 message="the page follows the OS to dark")
        assert page.evaluate(background) == dark
    finally:
        context.close()


def test_theme_is_set_before_the_first_paint(browser, badges_page):
    """The theme script runs in <head>, blocking, before the body exists: no light flash before a dark page."""
    context = browser.new_context(color_scheme="dark")
    try:
        # Seen from a script that runs before any of the page's: the theme at the moment <body> appears.
        context.add_init_script("""
            new MutationObserver((changes, observer) => {
              if (document.body) { window.__themeAtBody = document.documentElement.dataset.theme || ''; observer.disconnect(); }
            }).observe(document, {childList: true, subtree: true});
        """)
        page = open_page(context, badges_page)
        assert page.evaluate("window.__themeAtBody") == "dark"
        script = page.locator("head script[src*='theme.js']")
        assert script.count() == 1 and script.get_attribute("defer") is None and script.get_attribute("async") is None
    finally:
        context.close()


def test_a_targeted_error_row_is_highlighted(browser, badges_page):
    """Finding 29: the pair link's :target highlight must show on a red error row too."""
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        try:
            page = open_page(context, badges_page)
            look = """(row) => { const s = getComputedStyle(row.querySelector('summary'));
                                 return [s.backgroundColor, s.outlineStyle, s.outlineWidth, s.boxShadow].join(' | '); }"""
            error_row = page.locator("#timeline-rows .row.kind-error").last
            plain = error_row.evaluate(look)
            request = page.locator(f"#r-{error_row.get_attribute('data-pair')}")
            request.locator("a.pair-link").click()
            wait_for(lambda: error_row.evaluate("row => row.matches(':target')"), 5, message="the error row targeted")
            targeted = error_row.evaluate(look)
            assert targeted != plain
            # An outline, not only a tint that a red row's own tint hides.
            assert error_row.evaluate("row => getComputedStyle(row.querySelector('summary')).outlineStyle") != "none"
        finally:
            context.close()
