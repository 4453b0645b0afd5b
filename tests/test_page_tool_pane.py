"""The tool pane people can trust (issue 16 item 5; findings 9, 10): after a restart the open pane shows the new
description and schema with what was typed, and a reload during a call brings back the tool, the pending call with
its progress, and then its result. Real mcp-inspect processes, real servers, a real browser."""

from __future__ import annotations

import pytest

from conftest import fixture_command, wait_tools_listed
from editable_server import tool, write_server

pytestmark = pytest.mark.browser


def open_tool(page, name: str):
    page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text=name)).first.click()
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()


def test_a_restart_refreshes_the_open_tool_and_keeps_what_was_typed(page, inspector_factory, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    write_server(project, [tool("word_count", "Count words."), tool("other", "Another.")])
    inspector = inspector_factory(["python3", "server.py"], cwd=project)
    wait_tools_listed(inspector, 60)
    page.goto(inspector.url)
    open_tool(page, "word_count")
    pane = page.locator('.tool-detail[data-tool="word_count"]')
    pane.get_by_label("text").fill("typed before the edit")
    write_server(project, [tool("word_count", "Count the words, now better.",
                                {"text": {"type": "string"}, "lang": {"type": "string"}}), tool("other", "Another.")])
    # No click: the open pane follows the new definition by itself.
    page.locator(".tool-detail .description", has_text="now better").wait_for(timeout=60000)
    assert page.locator('.tool-detail input[name="f:/lang"]').count() == 1, "the new schema's field"
    assert page.get_by_label("text").input_value() == "typed before the edit"
    assert page.locator("#tools-list .tool-item .mark-changed").count() == 1, "still marked: not clicked yet"


def test_a_reload_during_a_call_brings_back_the_tool_the_pending_call_and_its_result(page, inspector_factory,
                                                                                    tmp_path):
    inspector = inspector_factory(fixture_command("asks_forms_server"))
    wait_tools_listed(inspector)
    flag = tmp_path / "go"
    page.goto(inspector.url)
    open_tool(page, "wait_file")
    page.get_by_label("path").fill(str(flag))
    page.get_by_role("button", name="Call", exact=True).click()
    page.locator(".call.state-pending .progress-text", has_text="1 / 2").wait_for()
    page.reload()
    page.locator('.tool-detail[data-tool="wait_file"]').wait_for()
    pending = page.locator(".call.state-pending")
    pending.wait_for()
    assert "1 / 2 · waiting for the file" in pending.locator(".progress-text").inner_text()
    flag.write_text("go")
    page.locator(".call.state-result", has_text="the file is there").wait_for(timeout=30000)
    page.reload()
    page.locator(".call.state-result", has_text="the file is there").wait_for()
