"""Long-running tool calls as *tasks*, in both protocol eras: pure helpers, no I/O.

* 2025-11-25 (handshake era, experimental tasks): a ``tools/call`` whose params carry ``task: {ttl}`` is
  answered with a ``CreateTaskResult`` ``{task: Task}``; the client then uses ``tasks/get`` (-> Task),
  ``tasks/result`` (blocks, -> the CallToolResult), ``tasks/cancel`` (-> Task) and ``tasks/list``; the server
  pushes ``notifications/tasks/status`` whose params are a Task.
* 2026-07-28 (modern era), the ``io.modelcontextprotocol/tasks`` extension, as we read it: a task-augmented
  ``tools/call`` is answered ``{resultType: "task", task: Task}``; ``tasks/get`` -> ``{resultType:
  "complete", task: Task, result?}``; cancelling is ``tasks/update {taskId, status: "cancelled"}``.

The extension's own repository (modelcontextprotocol/ext-tasks, draft schema) uses *flat* shapes instead:
``{resultType: "task", taskId, status, ..., ttlMs, pollIntervalMs}`` and a flat ``tasks/get`` result with
``result`` / ``error`` inlined, a ``notifications/tasks`` notification and ``tasks/cancel`` for cancelling.  The
parsers here accept both the nested and the flat shapes (``ttl``/``ttlMs``, ``pollInterval``/
``pollIntervalMs``), so whichever a server sends is shown.

A Task is ``{taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl (ms or null), pollInterval?}``; its
status is one of working, input_required, completed, failed, cancelled (the last three are terminal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TASK_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL_STATUSES = ("completed", "failed", "cancelled")
TASK_SUPPORT_VALUES = ("forbidden", "optional", "required")

_CONTROLS = {
    "legacy": ("get", "result", "cancel"),
    "modern": ("get", "cancel"),
}


@dataclass
class TaskView:
    """One task as the inspector shows it."""

    task_id: str
    status: str
    status_message: str | None
    created_at: str | None
    last_updated_at: str | None
    ttl: int | None
    """Retention from creation in milliseconds; None for unlimited (or not given)."""
    poll_interval: int | None
    """Suggested polling interval in milliseconds, if the server gave one."""
    terminal: bool
    """True once the status is completed, failed or cancelled: it will not change again."""
    result: Any | None = None
    """The task's final result when the message carried one (a modern tasks/get of a completed task)."""
    error: Any | None = None
    """The JSON-RPC error object when the message carried one (a failed task, flat or nested shapes)."""


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _view(task: Any, outer: dict | None = None) -> TaskView | None:
    """A TaskView from a Task object (and the result object around it, for ``result``/``error``)."""
    if not isinstance(task, dict):
        return None
    task_id, status = task.get("taskId"), task.get("status")
    if not isinstance(task_id, str) or not task_id or not isinstance(status, str) or not status:
        return None
    ttl = task["ttl"] if "ttl" in task else task.get("ttlMs")
    poll = task["pollInterval"] if "pollInterval" in task else task.get("pollIntervalMs")
    around = outer if outer is not None else task
    return TaskView(
        task_id=task_id,
        status=status,
        status_message=_str_or_none(task.get("statusMessage")),
        created_at=_str_or_none(task.get("createdAt")),
        last_updated_at=_str_or_none(task.get("lastUpdatedAt")),
        ttl=_int_or_none(ttl),
        poll_interval=_int_or_none(poll),
        terminal=status in TERMINAL_STATUSES,
        result=around.get("result", task.get("result")),
        error=around.get("error", task.get("error")),
    )


def task_from_result(result: Any) -> TaskView | None:
    """The task a result describes, or None when it is not a task result.

    Recognised: a 2025-11-25 ``CreateTaskResult`` ``{task}``, the Task returned by 2025-11-25 ``tasks/get`` and
    ``tasks/cancel`` (flat), a 2026-07-28 ``{resultType: "task", task}`` and ``tasks/get``'s ``{resultType:
    "complete", task, result?}``, and the ext-tasks draft's flat ``{resultType: "task"|"complete", taskId,
    status, ...}``.  A CallToolResult that only mentions a related task in its ``_meta`` is not a task result.
    """
    if not isinstance(result, dict):
        return None
    if result.get("resultType") == "input_required":
        return None
    if isinstance(result.get("task"), dict):
        return _view(result["task"], result)
    return _view(result)


def task_from_status_notification(params: Any) -> TaskView | None:
    """The task in a ``notifications/tasks/status`` (or the draft's ``notifications/tasks``) params; None if none.

    The params are the Task itself (its ``_meta`` aside); a ``{task: Task}`` wrapper is accepted too.
    """
    if not isinstance(params, dict):
        return None
    if isinstance(params.get("task"), dict):
        return _view(params["task"], params)
    return _view(params)


def task_controls(era: str, task: TaskView) -> list[str]:
    """The buttons that make sense for this task now.

    legacy: get, result, cancel - no cancel once terminal (the result of a finished task can still be fetched).
    modern: get, cancel (cancel = ``tasks/update`` status cancelled) - only get once terminal.
    """
    if era not in _CONTROLS:
        raise ValueError(f"unknown era {era!r}: expected 'legacy' or 'modern'")
    controls = list(_CONTROLS[era])
    if task.terminal:
        controls.remove("cancel")
    return controls


def task_request(era: str, control: str, task_id: str) -> tuple[str, dict]:
    """(method, params) for a task control, without ``_meta`` (the caller adds the era's envelope).

    legacy: get -> tasks/get, result -> tasks/result, cancel -> tasks/cancel, all ``{taskId}``.
    modern: get -> tasks/get ``{taskId}``, cancel -> tasks/update ``{taskId, status: "cancelled"}``.
    """
    if era not in _CONTROLS:
        raise ValueError(f"unknown era {era!r}: expected 'legacy' or 'modern'")
    if control not in _CONTROLS[era]:
        raise ValueError(f"no {control!r} control for tasks in the {era} era")
    if control == "get":
        return "tasks/get", {"taskId": task_id}
    if era == "legacy":
        return f"tasks/{control}", {"taskId": task_id}
    return "tasks/update", {"taskId": task_id, "status": "cancelled"}


def augment_call_params(params: dict, ttl_ms: int) -> dict:
    """A copy of ``tools/call`` params asking for task-augmented execution: adds ``task: {ttl: ttl_ms}``."""
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
        raise ValueError(f"ttl_ms must be a non-negative integer, not {ttl_ms!r}")
    return {**params, "task": {"ttl": ttl_ms}}


def tool_task_support(tool: dict) -> str:
    """``forbidden`` | ``optional`` | ``required``, from ``tool.execution.taskSupport`` (absent or odd: forbidden)."""
    execution = tool.get("execution") if isinstance(tool, dict) else None
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in TASK_SUPPORT_VALUES else "forbidden"
