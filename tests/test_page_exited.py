"""When mcp-inspect itself is gone the page says so and stops offering actions; an action that gets no answer is said
in the page, not only in the console (issue 16 item 5; page.md finding 15). A real mcp-inspect child, killed."""

from __future__ import annotations

import re
import signal

import pytest

from conftest import fixture_command, live_synced, wait_for

pytestmark = pytest.mark.browser


def open_tool(page, inspector, name: str):
    page.goto(inspector.url)
    live_synced(page)
    page.get_by_role("button", name=re.compile("^" + name)).click()
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()
    page.wait_for_function("() => document.querySelectorAll('#timeline-rows .row').length > 0")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_the_page_says_when_mcp_inspect_has_exited_and_disables_its_actions(page, inspector_factory, sig):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "count")
    banner = page.locator("#connection-banner")
    assert banner.is_hidden()
    call = page.get_by_role("button", name="Call", exact=True)
    assert call.is_enabled()

    inspector.stop(sig)
    # The socket closes at once; a probe then finds nobody home. Generous: a loaded machine is slow to schedule.
    banner.wait_for(state="visible", timeout=60_000)
    assert "mcp-inspect has exited" in banner.inner_text()
    assert call.is_disabled(), "Call must not look usable when nothing can answer it"
    assert page.get_by_role("button", name=re.compile("^misc")).is_disabled()
    assert page.locator("#filters select[name=kind]").is_disabled()
    # The layout's own controls still work: they need no server.
    assert page.locator("#toggle-sidebar").is_enabled()
    page.locator("#toggle-sidebar").click()
    wait_for(lambda: page.locator("#toggle-sidebar").get_attribute("aria-expanded") == "false", 10,
             message="the sidebar still collapses")


def test_an_action_that_gets_no_answer_is_shown_in_the_page(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "count")
    # One request lost on the way while mcp-inspect itself is fine (a real peer cannot be made to drop just it).
    page.route(re.compile(r".*/tool/call\?.*"), lambda route: route.abort("connectionreset"))
    page.get_by_role("button", name="Call", exact=True).click()
    banner = page.locator("#connection-banner")
    banner.wait_for(state="visible", timeout=30_000)
    assert "did not reach mcp-inspect" in banner.inner_text() and "/tool/call" in banner.inner_text()
    # mcp-inspect answers the probe, so nothing is disabled.
    assert "has exited" not in banner.inner_text()
    assert page.get_by_role("button", name="Call", exact=True).is_enabled()
    page.get_by_role("button", name="Dismiss").click()
    assert banner.is_hidden()
