"""The tool pane and the workbench people can trust (issue 16 item 5; findings 9, 10, 25, 36, 39): after a restart
the open pane shows the new description and schema with what was typed; a reload during a call brings back the tool,
the pending call with its progress, and then its result; a resource template offers completions on focus; a task
waiting for input says how to get the question; `view` lists the recording's tasks. Real mcp-inspect processes,
real servers, a real browser where the behaviour is the page's script."""

from __future__ import annotations

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed
from editable_server import tool, write_server


def open_tool(page, name: str):
    page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text=name)).first.click()
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()


@pytest.mark.browser
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


@pytest.mark.browser
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


@pytest.mark.browser
def test_a_resource_templates_completion_is_offered_on_focus_before_typing(page, inspector_factory):
    inspector = inspector_factory(fixture_command("rich_server"))
    wait_tools_listed(inspector)
    page.goto(inspector.url)
    page.locator("#resource-templates-list .res-item").first.click()
    field = page.locator('.res-detail input[name="v:topic"]')
    field.focus()
    options = page.locator(".res-detail datalist option")
    options.first.wait_for(state="attached")
    assert field.input_value() == "" and options.count() >= 2, "suggestions before any typing"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_waiting_for_input_says_how_to_receive_the_question(page_factory, era):
    from inspector.protocol.tasks import task_from_status_notification

    inspector = page_factory(fixture_command("task_server"), "--protocol", era)
    wait_tools_listed(inspector)
    # task_server has no task that asks: this is the status notification a server sends for one that does
    view = task_from_status_notification({"taskId": "t-asks", "status": "input_required",
                                          "createdAt": "2026-11-30T00:00:00Z", "ttl": 30000})
    inspector.services.tasks.note(view, source="notifications/tasks/status")
    html = inspector.request("GET", "/")[2].decode()
    hint = "click Result to receive the server's question" if era == "legacy" else \
        "click Get to receive the server's question"
    assert hint in html


def test_view_shows_the_tasks_the_recording_holds(page_factory):
    import re

    live = page_factory(fixture_command("task_server"), "--protocol", "legacy")
    wait_tools_listed(live)
    status, _, body = live.post("/tools/slow_report/call", {
        "mode": "form", "f:/seconds": "0.2", "set:/fail": "false", "f:/topic": "weekly", "timeout": "",
        "task": "on", "task_ttl": "30000", "action": "call"})
    assert status == 200
    task_id = wait_for(lambda: next((r["msg"]["result"]["task"]["taskId"] for r in records_in(live.record)
                                     if r.get("dir") == "from_server" and isinstance(r.get("msg"), dict)
                                     and isinstance((r["msg"].get("result") or {}).get("task"), dict)), None),
                       20, message="the task created")
    wait_for(lambda: any(r.get("msg", {}).get("method") == "notifications/tasks/status"
                         and (r["msg"].get("params") or {}).get("status") == "completed"
                         for r in records_in(live.record) if isinstance(r.get("msg"), dict)), 20,
             message="the task completed")
    live.stop()
    viewer = page_factory([], view=live.record)
    html = viewer.request("GET", "/")[2].decode()
    panel = html[html.index('id="tasks-panel"'):]
    panel = panel[:panel.index("</section>")]
    assert "No tasks yet" not in panel and task_id in panel and "slow_report" in panel
    assert re.search(r'class="task-status status-completed"', panel)
