"""inspector/protocol/tasks.py's pure helpers, and one smoke test of the task fixture server over real pipes (the
page tests in test_tasks_page.py drive it through the inspector in both eras)."""

from __future__ import annotations

import pytest

from conftest import fixture_command
from fixture_client import FixtureClient
from inspector.protocol.tasks import (
    TaskView, augment_call_params, task_controls, task_from_result, task_from_status_notification, task_request,
    tool_task_support,
)

LEGACY = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"

TASK = {"taskId": "t-1", "status": "working", "statusMessage": "Going", "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:31:00Z", "ttl": 60000, "pollInterval": 500}


# -- unit tests of the pure helpers ---------------------------------------------------------------------------

def test_tool_task_support_reads_execution_and_defaults_to_forbidden():
    assert tool_task_support({"name": "a", "execution": {"taskSupport": "optional"}}) == "optional"
    assert tool_task_support({"name": "a", "execution": {"taskSupport": "required"}}) == "required"
    assert tool_task_support({"name": "a", "execution": {"taskSupport": "forbidden"}}) == "forbidden"
    assert tool_task_support({"name": "a"}) == "forbidden"
    assert tool_task_support({"name": "a", "execution": {}}) == "forbidden"
    assert tool_task_support({"name": "a", "execution": {"taskSupport": "sometimes"}}) == "forbidden"
    assert tool_task_support({"name": "a", "execution": "optional"}) == "forbidden"


def test_augment_call_params_adds_task_without_touching_the_original():
    params = {"name": "slow_report", "arguments": {"seconds": 2}, "_meta": {"progressToken": 7}}
    augmented = augment_call_params(params, 60000)
    assert augmented == {**params, "task": {"ttl": 60000}}
    assert "task" not in params
    with pytest.raises(ValueError):
        augment_call_params(params, -1)
    with pytest.raises(ValueError):
        augment_call_params(params, True)


def test_task_from_result_reads_the_2025_11_25_create_task_result():
    view = task_from_result({"task": TASK})
    assert view == TaskView(task_id="t-1", status="working", status_message="Going",
                            created_at="2025-11-25T10:30:00Z", last_updated_at="2025-11-25T10:31:00Z",
                            ttl=60000, poll_interval=500, terminal=False, result=None)


def test_task_from_result_reads_flat_tasks_and_the_modern_shapes():
    # 2025-11-25 tasks/get and tasks/cancel answer the Task itself.
    cancelled = task_from_result({**TASK, "status": "cancelled", "ttl": None})
    assert cancelled.status == "cancelled" and cancelled.terminal and cancelled.ttl is None
    # 2026-07-28 as we read overview.mdx: nested under "task", result beside it once completed.
    created = task_from_result({"resultType": "task", "task": TASK})
    assert created.task_id == "t-1" and not created.terminal
    done = task_from_result({"resultType": "complete", "task": {**TASK, "status": "completed"},
                             "result": {"content": [{"type": "text", "text": "ok"}]}})
    assert done.terminal and done.result == {"content": [{"type": "text", "text": "ok"}]}
    # The ext-tasks draft schema: flat, with ttlMs / pollIntervalMs and result or error inlined.
    flat = task_from_result({"resultType": "task", "taskId": "t-2", "status": "working",
                             "createdAt": "x", "lastUpdatedAt": "y", "ttlMs": 3600000, "pollIntervalMs": 5000})
    assert (flat.task_id, flat.ttl, flat.poll_interval) == ("t-2", 3600000, 5000)
    failed = task_from_result({"resultType": "complete", "taskId": "t-2", "status": "failed", "createdAt": "x",
                               "lastUpdatedAt": "y", "ttlMs": None, "error": {"code": -32603, "message": "no"}})
    assert failed.terminal and failed.error == {"code": -32603, "message": "no"} and failed.result is None


def test_task_from_result_refuses_what_is_not_a_task():
    assert task_from_result({"content": [{"type": "text", "text": "hi"}],
                             "_meta": {RELATED: {"taskId": "t-1"}}}) is None
    assert task_from_result({"resultType": "input_required", "inputRequests": {}}) is None
    assert task_from_result({"task": {"status": "working"}}) is None  # no taskId
    assert task_from_result({"taskId": 5, "status": "working"}) is None
    assert task_from_result(None) is None
    assert task_from_result([TASK]) is None


def test_task_from_status_notification():
    view = task_from_status_notification({**TASK, "status": "completed", "_meta": {"x": 1}})
    assert view.task_id == "t-1" and view.status == "completed" and view.terminal
    assert task_from_status_notification({"task": TASK}).status == "working"
    assert task_from_status_notification({"status": "working"}) is None
    assert task_from_status_notification("t-1") is None


def test_task_controls_depend_on_era_and_terminal_state():
    working = task_from_result({"task": TASK})
    finished = task_from_result({"task": {**TASK, "status": "completed"}})
    assert task_controls("legacy", working) == ["get", "result", "cancel"]
    assert task_controls("legacy", finished) == ["get", "result"]
    assert task_controls("modern", working) == ["get", "cancel"]
    assert task_controls("modern", finished) == ["get"]
    with pytest.raises(ValueError):
        task_controls("medieval", working)


def test_task_request_maps_controls_to_methods():
    assert task_request("legacy", "get", "t") == ("tasks/get", {"taskId": "t"})
    assert task_request("legacy", "result", "t") == ("tasks/result", {"taskId": "t"})
    assert task_request("legacy", "cancel", "t") == ("tasks/cancel", {"taskId": "t"})
    assert task_request("modern", "get", "t") == ("tasks/get", {"taskId": "t"})
    assert task_request("modern", "cancel", "t") == ("tasks/update", {"taskId": "t", "status": "cancelled"})
    with pytest.raises(ValueError):
        task_request("modern", "result", "t")
    with pytest.raises(ValueError):
        task_request("legacy", "list", "t")


# -- the fixture over real pipes: one smoke test ----------------------------------------------------------------

@pytest.fixture
def wire():
    client = FixtureClient(fixture_command("task_server"))
    yield client
    client.close()


def test_legacy_task_runs_reports_status_and_yields_its_result(wire):
    answer = wire.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "test_tasks", "version": "0"}})
    assert answer["result"]["protocolVersion"] == LEGACY
    assert answer["result"]["capabilities"]["tasks"] == {"list": {}, "cancel": {},
                                                         "requests": {"tools": {"call": {}}}}
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = {t["name"]: t for t in wire.request("tools/list")["result"]["tools"]}
    assert tool_task_support(tools["slow_report"]) == "optional"
    assert tool_task_support(tools["quick"]) == "forbidden"

    created = wire.request("tools/call", augment_call_params(
        {"name": "slow_report", "arguments": {"seconds": 0.6, "topic": "sales"}}, 60000))["result"]
    task = task_from_result(created)
    assert task is not None and "task" in created
    assert (task.status, task.ttl, task.poll_interval, task.terminal) == ("working", 60000, 500, False)
    assert task_controls("legacy", task) == ["get", "result", "cancel"]

    method, params = task_request("legacy", "get", task.task_id)
    polled = task_from_result(wire.request(method, params)["result"])
    assert polled.task_id == task.task_id and polled.status == "working"
    listed = wire.request("tasks/list")["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [task.task_id]

    method, params = task_request("legacy", "result", task.task_id)
    result = wire.request(method, params, timeout=10)["result"]  # blocks until the task is done
    assert result["content"][0]["text"] == "sales report ready after 0.6 s"
    assert result["_meta"][RELATED] == {"taskId": task.task_id}

    updates = [task_from_status_notification(p) for p in wire.notifications("notifications/tasks/status")]
    assert all(u is not None and u.task_id == task.task_id for u in updates)
    assert [u.status for u in updates] == ["working", "working", "completed"]
    assert updates[0].status_message == "Step 1 of 3 done"

    final = task_from_result(wire.request("tasks/get", {"taskId": task.task_id})["result"])
    assert final.status == "completed" and final.terminal
    assert task_controls("legacy", final) == ["get", "result"]
    refused = wire.request("tasks/cancel", {"taskId": task.task_id})
    assert refused["error"]["code"] == -32602
    assert wire.request("tasks/get", {"taskId": "no-such-task"})["error"]["code"] == -32602
