"""Tasks in the page: a task-augmented call from the tool form, the Tasks panel, its controls, in both eras.

The fixture (tests/fixtures/task_server.py) picks its era from the first message it gets: `--protocol legacy`
makes it the 2025-11-25 experimental tasks, `--protocol modern` the 2026-07-28 tasks extension.
"""

from __future__ import annotations

import os
import re

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed

STATUS = "notifications/tasks/status"


def messages(inspector, direction: str | None = None) -> list[dict]:
    return [r["msg"] for r in records_in(inspector.record)
            if r.get("kind") == "message" and (direction is None or r.get("dir") == direction)]


def wait_tools(inspector) -> None:
    wait_tools_listed(inspector)


def panel(inspector) -> str:
    status, _, body = inspector.request("GET", "/tasks")
    assert status == 200
    return body.decode()


def task_block(html: str, key: int) -> str:
    """One task's <article> in a rendered panel or card."""
    match = re.search(rf'<article class="task [^"]*" data-task="{key}">.*?</article>', html, re.S)
    assert match, f"task {key} is not shown"
    return match.group(0)


def status_of(inspector, key: int) -> str:
    return re.search(r'class="task-status status-[a-z_]+">([^<]*)<', task_block(panel(inspector), key)).group(1)


def start_task(inspector, seconds: float, topic: str = "weekly") -> tuple[str, int]:
    """A task-augmented slow_report call from the generated form: (the answer, the new task's key)."""
    status, _, body = inspector.post("/tools/slow_report/call", {
        "mode": "form", "f:/seconds": str(seconds), "set:/fail": "false", "f:/topic": topic,
        "timeout": "", "task": "on", "task_ttl": "30000", "action": "call"})
    html = body.decode()
    assert status == 200, html
    call_id = int(re.search(r'id="task-call-(\d+)"', html).group(1))
    if "state-task" not in html:  # not answered within the POST: the card is long-polled, like the page does
        html = inspector.request("GET", f"/tasks/calls/{call_id}?wait=10")[2].decode()
    assert "state-task" in html and "CreateTaskResult" in html, html
    return html, int(re.search(r'data-task="(\d+)"', html).group(1))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_task_call_status_and_controls(page_factory, era):
    inspector = page_factory(fixture_command("task_server"), "--protocol", era)
    wait_tools(inspector)
    form = inspector.request("GET", "/tools/slow_report")[2].decode()
    assert "Run as a task" in form and 'name="task_ttl"' in form

    # A task-augmented call: the card shows the task (not the CreateTaskResult as a plain result) and its controls.
    card, key = start_task(inspector, 1.2)
    first = task_block(card, key)
    assert "status-working" in first and "30000 ms" in first and "500 ms" in first  # ttl, poll interval
    assert 'hx-post="/tasks/%d/get"' % key in first and 'hx-post="/tasks/%d/cancel"' % key in first
    assert ('hx-post="/tasks/%d/result"' % key in first) == (era == "legacy")
    call = next(m for m in messages(inspector, "to_server") if m.get("method") == "tools/call")
    assert call["params"]["task"] == {"ttl": 30000} and call["params"]["arguments"]["seconds"] == 1.2
    if era == "modern":
        assert "io.modelcontextprotocol/protocolVersion" in call["params"]["_meta"]

    # The panel follows the status notifications until the task completes.
    assert status_of(inspector, key) == "working"
    wait_for(lambda: status_of(inspector, key) == "completed", 10, message="status notification: completed")
    done = task_block(panel(inspector), key)
    assert "Report ready" in done and STATUS in done  # the message, and the history names the notification
    assert 'hx-post="/tasks/%d/cancel"' % key not in done  # no cancel once terminal

    # get: answered at once with the re-rendered panel.
    status, _, body = inspector.post(f"/tasks/{key}/get", {"in": "panel"})
    assert status == 200 and "status-completed" in task_block(body.decode(), key)
    assert any(m.get("method") == "tasks/get" for m in messages(inspector, "to_server"))
    if era == "modern":  # the extension's tasks/get carries the final result of a completed task
        assert "weekly report ready after 1.2 s" in task_block(body.decode(), key)
    else:  # tasks/result: the tool's final CallToolResult
        inspector.post(f"/tasks/{key}/result", {"in": "panel"})
        wait_for(lambda: "weekly report ready after 1.2 s" in task_block(panel(inspector), key), 10,
                 message="the task's result")
        assert "Result of the task" in task_block(panel(inspector), key)

    # A second task, cancelled from the panel.
    _, other = start_task(inspector, 20, topic="monthly")
    assert other != key
    if era == "legacy":  # tasks/result blocks: the POST answers at once, saying it waits
        status, _, body = inspector.post(f"/tasks/{other}/result", {"in": "panel"})
        assert status == 200 and "Waiting for the result" in task_block(body.decode(), other)
    status, _, body = inspector.post(f"/tasks/{other}/cancel", {"in": "panel"})
    assert status == 200
    wait_for(lambda: status_of(inspector, other) == "cancelled", 10, message="cancelled")
    sent = [m for m in messages(inspector, "to_server") if m.get("method", "").startswith("tasks/")]
    cancel = next(m for m in sent if m["method"] in ("tasks/cancel", "tasks/update"))
    if era == "legacy":
        assert cancel["method"] == "tasks/cancel" and cancel["params"]["taskId"]
        # the waiting tasks/result ends with the task: the server's error for a cancelled task is shown
        wait_for(lambda: "Task cancelled" in task_block(panel(inspector), other), 10, message="result error shown")
        assert "Waiting for the result" not in task_block(panel(inspector), other)
    else:
        assert cancel["method"] == "tasks/update" and cancel["params"]["status"] == "cancelled"
    assert not any(m["method"] == "tasks/update" for m in sent) if era == "legacy" else True

    # Errors are small texts in the panel: a control on a finished task, an unknown task id.
    status, _, body = inspector.post(f"/tasks/{other}/cancel", {"in": "panel"})
    problem = task_block(body.decode(), other)
    assert status == 200 and 'class="task-problem"' in problem and "-32602" in problem
    assert "Traceback" not in body.decode()
    status, _, body = inspector.post("/tasks/lookup", {"task_id": "no-such-task"})
    assert status == 200 and "-32602" in body.decode() and "Unknown taskId" in body.decode()
    # The page itself lists the tasks (the panel is part of the index).
    page = inspector.request("GET", "/")[2].decode()
    assert 'id="tasks-panel"' in page and "status-cancelled" in page and "status-completed" in page


def test_control_of_an_unknown_key_and_a_bad_ttl_are_small_errors(page_factory):
    inspector = page_factory(fixture_command("task_server"), "--protocol", "legacy")
    wait_tools(inspector)
    status, _, body = inspector.post("/tasks/999/get", {"in": "panel"})
    assert status == 404 and b"no task #999" in body and b"Traceback" not in body
    status, _, body = inspector.post("/tools/slow_report/call", {"mode": "json", "arguments": "{}", "task": "on",
                                                                 "task_ttl": "soon"})
    assert status == 422 and b"Task TTL must be a whole number" in body
    assert not any(m.get("method") == "tools/call" for m in messages(inspector, "to_server"))
    # quick has no task support: the form still offers a task (the server declares tasks), with a note
    form = inspector.request("GET", "/tools/quick")[2].decode()
    assert "Run as a task" in form and "does not declare task support" in form


BENIGN_CONSOLE = ("WebSocket connection to",)


@pytest.mark.browser
def test_run_as_a_task_in_the_browser(page, inspector_factory):
    """Tick "Run as a task", send, watch the status go to completed live, then cancel a second one."""
    inspector = inspector_factory(fixture_command("task_server"))  # auto: the probe finds the modern era
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    page.get_by_role("button", name=re.compile("^Slow report")).click()
    page.locator('.tool-detail[data-tool="slow_report"]').wait_for()
    page.get_by_label("seconds").fill("1")
    page.get_by_label("Run as a task").check()
    page.get_by_role("button", name="Call", exact=True).click()
    card = page.locator(".task-call.state-task")
    card.wait_for()
    assert card.locator(".task-id").inner_text()
    # Live over the websocket, no reload: both the call's card and the Tasks panel reach completed.
    card.locator(".task-completed").wait_for(timeout=10_000)
    page.locator("#tasks-panel .task-completed").wait_for(timeout=10_000)
    card.get_by_role("button", name="Get").click()  # the extension's tasks/get carries the final result
    page.locator(".task-call .task-result", has_text="weekly report ready after 1 s").wait_for(timeout=10_000)

    # A second, long one: the form kept "Run as a task" ticked; cancel it from the Tasks panel.
    assert page.get_by_label("Run as a task").is_checked()
    page.get_by_label("seconds").fill("30")
    page.get_by_role("button", name="Call", exact=True).click()
    working = page.locator("#tasks-panel .task-working")
    working.wait_for(timeout=10_000)
    working.get_by_role("button", name="Cancel").click()
    page.locator("#tasks-panel .task-cancelled").wait_for(timeout=10_000)
    page.locator(".task-call .task-cancelled").wait_for(timeout=10_000)
    assert page.locator("#tasks-panel .task").count() == 2
    if os.environ.get("MCP_INSPECT_SCREENSHOT_TASKS"):
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=os.environ["MCP_INSPECT_SCREENSHOT_TASKS"], full_page=True)
    sent = [m for m in messages(inspector, "to_server") if m.get("method") == "tasks/update"]
    assert sent and sent[-1]["params"]["status"] == "cancelled"
    assert [e for e in page.console_errors if not any(b in e for b in BENIGN_CONSOLE)] == []


def test_a_plain_call_answered_with_a_task_shows_the_task(page_factory):
    """The ext-tasks draft: the server makes a task on its own and says so with `notifications/tasks`."""
    inspector = page_factory(fixture_command("task_server", "--ext-tasks-draft"), "--protocol", "modern")
    wait_tools(inspector)
    # Ticking "Run as a task" and switching to the JSON editor keeps the tick (and the TTL).
    inspector.post("/tools/slow_report/form", {"mode": "form", "f:/seconds": "1", "task": "on", "task_ttl": "5000"})
    form = inspector.request("GET", "/tools/slow_report")[2].decode()
    assert re.search(r'name="task" value="on" checked', form) and 'value="5000"' in form
    status, _, body = inspector.post("/tools/slow_report/call", {"mode": "json", "arguments": '{"seconds": 1}'})
    call_id = int(re.search(r'id="call-(\d+)"', body.decode()).group(1))
    html = inspector.request("GET", f"/calls/{call_id}?wait=10")[2].decode()
    assert 'id="task-card-' in html and "The result as sent" in html
    key = int(re.search(r'data-task="(\d+)"', html).group(1))
    wait_for(lambda: status_of(inspector, key) == "completed", 10, message="notifications/tasks: completed")
    shown = task_block(panel(inspector), key)
    assert "notifications/tasks<" in shown and "slow_report" in shown
