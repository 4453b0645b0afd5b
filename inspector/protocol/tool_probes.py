"""Pure: which of a server's tools `check` may call to probe it, and why it leaves each other one alone.

The probe calls a tool without its required arguments to see the server refuse. A server that does not validate
its arguments performs the call, so by default only tools the server itself declares harmless are probed:
annotated `readOnlyHint: true`. `destructiveHint: true` wins over `readOnlyHint` (contradictory hints are read
the careful way), and a missing annotation means "may write" (the spec's defaults: readOnlyHint false,
destructiveHint true). The user opts in to more, by name or all at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class ProbePlan:
    """One tool: whether the probe calls it, and when not, why."""

    tool: str
    call: bool
    reason: str = ""
    """Why it is not called ("" when it is)."""


def required_arguments(tool: dict) -> list:
    """The tool's required argument names (empty when its inputSchema names none)."""
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return required if isinstance(required, list) else []


def _hint(tool: dict, name: str) -> Any:
    annotations = tool.get("annotations")
    return annotations.get(name) if isinstance(annotations, dict) else None


def default_skip(tool: dict) -> str:
    """Why the default probe must not call this tool, or "" when it may."""
    name = tool["name"]
    if _hint(tool, "destructiveHint") is True:
        return f"annotated destructiveHint: true (opt in with --probe-tool {name} or --probe-all)"
    if _hint(tool, "readOnlyHint") is not True:
        return f"not annotated readOnlyHint: true (opt in with --probe-tool {name} or --probe-all)"
    return ""


def plan_probes(tools: list, named: Iterable[str] = (), probe_all: bool = False) -> list[ProbePlan]:
    """One ProbePlan per named tool, in the server's order.

    named: `--probe-tool` values; when given, exactly those tools are probed. probe_all: every tool. Either way a
    tool with no required argument is never called: without arguments it would simply run, which probes nothing.
    """
    chosen = set(named)
    plans: list[ProbePlan] = []
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        name = tool["name"]
        if not required_arguments(tool):
            plans.append(ProbePlan(name, False, "no required arguments, so a call without them would run it"))
        elif probe_all:
            plans.append(ProbePlan(name, True))
        elif chosen:
            plans.append(ProbePlan(name, True) if name in chosen
                         else ProbePlan(name, False, "not named by --probe-tool"))
        else:
            why = default_skip(tool)
            plans.append(ProbePlan(name, not why, why))
    return plans


def unknown_names(tools: list, named: Iterable[str]) -> list[str]:
    """The --probe-tool values that name no tool of the server, in the order given."""
    known = {t.get("name") for t in tools if isinstance(t, dict)}
    return [n for n in dict.fromkeys(named) if n not in known]
