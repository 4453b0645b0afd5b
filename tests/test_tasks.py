"""inspector/tasks.py's pure helpers, and the task fixture server driven over real pipes in both eras."""

from __future__ import annotations

import time

import pytest

from conftest import fixture_command
from fixture_client import FixtureClient
from inspector.protocol.tasks import (
    TASK_EXTENSION, TaskView, augment_call_params, task_controls, task_from_result, task_from_status_notification,
    task_request, tool_task_support,
)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
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


# -- the product's client, straight to the fixture over real pipes -------------------------------------------------------------------

def modern_meta(extension: bool = True) -> dict:
    caps = {"extensions": {TASK_EXTENSION: {}}} if extension else {}
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": {"name": "test_tasks", "version": "0"}}


@pytest.fixture
def wire_factory():
    wires: list[FixtureClient] = []

    def make(*args: str) -> FixtureClient:
        wire = FixtureClient(fixture_command("task_server", *args))
        wires.append(wire)
        return wire

    yield make
    for wire in wires:
        wire.close()


def legacy_wire(wire_factory) -> FixtureClient:
    wire = wire_factory()
    answer = wire.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "test_tasks", "version": "0"}})
    assert answer["result"]["protocolVersion"] == LEGACY
    assert answer["result"]["capabilities"]["tasks"] == {"list": {}, "cancel": {},
                                                         "requests": {"tools": {"call": {}}}}
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return wire


def modern_wire(wire_factory, *args: str) -> FixtureClient:
    wire = wire_factory(*args)
    found = wire.request("server/discover", {"_meta": modern_meta()})["result"]
    assert found["resultType"] == "complete" and found["supportedVersions"] == [MODERN]
    assert found["capabilities"]["extensions"] == {TASK_EXTENSION: {}}
    assert found["ttlMs"] == 0 and found["cacheScope"] == "private"
    assert found["_meta"][SERVER_INFO_KEY]["name"] == "task-fixture"
    return wire


def call_slow_report(wire: FixtureClient, seconds: float, meta: dict | None = None, **extra) -> dict:
    params = {"name": "slow_report", "arguments": {"seconds": seconds, **extra}}
    if meta is not None:
        params["_meta"] = meta
    return wire.request("tools/call", augment_call_params(params, 60000))


# -- 2025-11-25: experimental tasks ---------------------------------------------------------------------------

def test_legacy_task_runs_reports_status_and_yields_its_result(wire_factory):
    wire = legacy_wire(wire_factory)
    tools = {t["name"]: t for t in wire.request("tools/list")["result"]["tools"]}
    assert tool_task_support(tools["slow_report"]) == "optional"
    assert tool_task_support(tools["quick"]) == "forbidden"

    created = call_slow_report(wire, 0.6, topic="sales")["result"]
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


def test_legacy_cancel_stops_the_task(wire_factory):
    wire = legacy_wire(wire_factory)
    task = task_from_result(call_slow_report(wire, 5)["result"])
    pending_result = wire.start("tasks/result", {"taskId": task.task_id})

    method, params = task_request("legacy", "cancel", task.task_id)
    assert method == "tasks/cancel"
    cancelled = task_from_result(wire.request(method, params)["result"])
    assert cancelled.task_id == task.task_id and cancelled.status == "cancelled" and cancelled.terminal

    note = wire.wait_for(lambda m: m.get("method") == "notifications/tasks/status"
                         and m["params"]["status"] == "cancelled", what="cancelled status")
    assert task_from_status_notification(note["params"]).terminal
    # The blocked tasks/result returns (an error: there is no result), tied to the task.
    blocked = wire.response(pending_result)
    assert blocked["error"]["data"][RELATED] == {"taskId": task.task_id}
    deadline = time.monotonic() + 5
    while not any("cancelled" in line for line in wire.stderr) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(f"task {task.task_id} cancelled" in line for line in wire.stderr)
    assert wire.request("tasks/get", {"taskId": task.task_id})["result"]["status"] == "cancelled"


def test_legacy_failed_task_and_plain_calls(wire_factory):
    wire = legacy_wire(wire_factory)
    task = task_from_result(call_slow_report(wire, 0.3, fail=True)["result"])
    outcome = wire.request("tasks/result", {"taskId": task.task_id})
    assert outcome["error"]["code"] == -32603 and "failed on purpose" in outcome["error"]["message"]
    assert wire.request("tasks/get", {"taskId": task.task_id})["result"]["status"] == "failed"

    plain = wire.request("tools/call", {"name": "slow_report", "arguments": {"seconds": 0.3}})["result"]
    assert task_from_result(plain) is None and plain["content"][0]["text"] == "weekly report ready after 0.3 s"
    forbidden = wire.request("tools/call", augment_call_params({"name": "quick", "arguments": {"text": "x"}}, 1000))
    assert forbidden["error"]["code"] == -32601
    assert wire.request("tools/call", {"name": "quick", "arguments": {"text": "x"}})["result"]["content"][0][
        "text"] == "quick: x"
    assert wire.request("server/discover", {"_meta": modern_meta()})["error"]["code"] == -32601


# -- 2026-07-28: the io.modelcontextprotocol/tasks extension ---------------------------------------------------

def test_modern_task_runs_and_tasks_get_carries_the_result(wire_factory):
    wire = modern_wire(wire_factory)
    created = call_slow_report(wire, 0.6, meta=modern_meta())["result"]
    assert created["resultType"] == "task" and "task" in created
    task = task_from_result(created)
    assert task.status == "working" and task.ttl == 60000
    assert task_controls("modern", task) == ["get", "cancel"]

    method, params = task_request("modern", "get", task.task_id)
    deadline = time.monotonic() + 10
    while True:
        got = wire.request(method, {**params, "_meta": modern_meta()})["result"]
        assert got["resultType"] == "complete"
        view = task_from_result(got)
        if view.terminal or time.monotonic() > deadline:
            break
        time.sleep(view.poll_interval / 1000)
    assert view.status == "completed"
    assert view.result["content"][0]["text"] == "weekly report ready after 0.6 s"
    assert task_controls("modern", view) == ["get"]
    statuses = [task_from_status_notification(p).status for p in wire.notifications("notifications/tasks/status")]
    assert statuses == ["working", "working", "completed"]


def test_modern_cancel_is_tasks_update(wire_factory):
    wire = modern_wire(wire_factory)
    task = task_from_result(call_slow_report(wire, 5, meta=modern_meta())["result"])
    method, params = task_request("modern", "cancel", task.task_id)
    answer = wire.request(method, {**params, "_meta": modern_meta()})["result"]
    assert method == "tasks/update" and task_from_result(answer).status == "cancelled"
    wire.wait_for(lambda m: m.get("method") == "notifications/tasks/status"
                  and m["params"]["status"] == "cancelled", what="cancelled status")
    got = task_from_result(wire.request("tasks/get", {"taskId": task.task_id, "_meta": modern_meta()})["result"])
    assert got.status == "cancelled" and got.terminal and got.result is None
    again = wire.request(method, {**params, "_meta": modern_meta()})
    assert again["error"]["code"] == -32602


def test_modern_era_rules(wire_factory):
    wire = modern_wire(wire_factory)
    # No extension in this request's capabilities: no task, the call just runs.
    plain = call_slow_report(wire, 0.3, meta=modern_meta(extension=False))["result"]
    assert plain["resultType"] == "complete" and task_from_result(plain) is None
    assert plain["content"][0]["text"] == "weekly report ready after 0.3 s"
    missing = wire.request("tools/list", {})
    assert missing["error"]["code"] == -32602
    late_handshake = wire.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                                 "clientInfo": {"name": "t", "version": "0"}})
    assert late_handshake["error"]["code"] == -32022
    assert late_handshake["error"]["data"] == {"supported": [MODERN], "requested": LEGACY}
    assert wire.request("ping", {"_meta": modern_meta()})["error"]["code"] == -32601
    assert wire.request("logging/setLevel", {"level": "info", "_meta": modern_meta()})["error"]["code"] == -32601
    listed = wire.request("tools/list", {"_meta": modern_meta()})["result"]
    assert listed["ttlMs"] == 0 and listed["cacheScope"] == "private"
    assert wire.request("tasks/get", {"taskId": "nope", "_meta": modern_meta()})["error"]["code"] == -32602


def test_ext_tasks_draft_shapes_parse_too(wire_factory):
    """With --ext-tasks-draft the modern era uses the ext-tasks repository's flat shapes: the helpers read them."""
    wire = modern_wire(wire_factory, "--ext-tasks-draft")
    created = wire.request("tools/call", {"name": "slow_report", "arguments": {"seconds": 0.3},
                                          "_meta": modern_meta()})["result"]
    assert created["resultType"] == "task" and "task" not in created and "ttlMs" in created
    task = task_from_result(created)
    assert task.ttl == 60000 and task.poll_interval == 500
    done = wire.wait_for(lambda m: m.get("method") == "notifications/tasks"
                         and m["params"]["status"] == "completed", what="notifications/tasks completed")
    view = task_from_status_notification(done["params"])
    assert view.terminal and view.result["content"][0]["text"] == "weekly report ready after 0.3 s"
    ack = wire.request("tasks/cancel", {"taskId": task.task_id, "_meta": modern_meta()})["result"]
    assert ack["resultType"] == "complete" and task_from_result(ack) is None


def test_silent_discover_is_never_answered_but_initialize_is(wire_factory):
    wire = wire_factory("--silent-discover")
    started = time.monotonic()
    probe = wire.start("server/discover", {"_meta": modern_meta()})
    with pytest.raises(AssertionError):
        wire.response(probe, timeout=1.0)
    answer = wire.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "t", "version": "0"}}, timeout=2)
    assert answer["result"]["protocolVersion"] == LEGACY
    assert time.monotonic() - started < 3
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    again = wire.start("server/discover", {"_meta": modern_meta()})
    assert wire.request("tools/list")["result"]["tools"]
    assert not [m for m in wire.messages if m.get("id") in (probe, again)]
