"""`check`'s probe: call each tool the plan allows once without its required arguments, and judge the answer.

A good server refuses (a JSON-RPC error or an isError result); one that hangs or exits gets a protocol warning,
one that accepts the call gets advice. Which tools are called is decided in protocol.tool_probes; this module only
sends the calls and words the outcome. After a hang or a crash the remaining tools are left alone: the server is
in no state to judge, and each further call could cost a whole timeout.
"""

from __future__ import annotations

from typing import Any, Callable

from inspector.client.rpc import Client, RequestFailed
from inspector.protocol import jsonrpc
from inspector.protocol.diagnostics.rules import Advice, Warning, advice, warning
from inspector.protocol.tool_probes import ProbePlan


def probe_entry(plan: ProbePlan, outcome: str = "") -> dict:
    """One tool's line of the report: {"tool", "called", "outcome"} or {"tool", "called": false, "reason"}."""
    if plan.call:
        return {"tool": plan.tool, "called": True, "outcome": outcome}
    return {"tool": plan.tool, "called": False, "reason": plan.reason}


class ToolProber:
    """Runs the planned probes on one connected client; found warnings go to `report_warnings`."""

    def __init__(self, client: Client, request_seq: dict[str, int], found: Callable[[], list[Warning]],
                 report_warnings: Callable[[list[Warning]], None], timeout: float, disabled: frozenset) -> None:
        self.client, self.request_seq, self.found = client, request_seq, found
        self.report_warnings, self.timeout, self.disabled = report_warnings, timeout, disabled
        self.advice: list[Advice] = []

    def run(self, plans: list[ProbePlan]) -> list[dict]:
        """Probe each planned tool in order; one report entry per tool."""
        entries: list[dict] = []
        stopped = ""
        for plan in plans:
            if plan.call and stopped:
                plan = ProbePlan(plan.tool, False, stopped)
            if not plan.call:
                entries.append(probe_entry(plan))
                continue
            outcome, failed = self._probe(plan.tool)
            entries.append(probe_entry(plan, outcome))
            if failed:
                stopped = f"not probed: {failed}"
        return entries

    def _probe(self, name: str) -> tuple[str, str]:
        """(what happened, why the probing must stop or "")."""
        pending = self.client.request("tools/call", {"name": name, "arguments": {}})
        try:
            response = pending.answer()
        except RequestFailed as exc:
            seq = self.request_seq.get(jsonrpc.id_key(pending.id) or "", 0)
            if exc.reason == "timeout":
                if not any(w.seq == seq for w in self.found()):  # the silence rule may already say why
                    self.report_warnings([warning("probe-hang", seq, f"tools/call {name} without its required "
                                                  f"arguments got no answer within {self.timeout:g} s")])
                return (f"{name} without arguments: no answer within {self.timeout:g} s",
                        f"the probe of {name} got no answer")
            self.report_warnings([warning("probe-crash", seq, f"the server exited after tools/call {name} "
                                          "without its required arguments")])
            return f"{name} without arguments: the server exited", f"the server exited after the probe of {name}"
        return self._judge(name, response), ""

    def _judge(self, name: str, response: dict) -> str:
        result = response.get("result")
        if "error" in response:
            return f"{name} without arguments: JSON-RPC error {error_text(response['error'])} (good)"
        if isinstance(result, dict) and result.get("isError") is True:
            return f"{name} without arguments: an isError result (good)"
        if "probe-accepted-missing-args" not in self.disabled:
            self.advice.append(advice("probe-accepted-missing-args", name,
                                      "called without its required arguments, it returned a success result"))
        return f"{name} without arguments: a success result"


def probe_summary(entries: list[dict]) -> str:
    """The one-line `probe` of the JSON summary: the outcomes joined, or why nothing was called."""
    outcomes = [e["outcome"] for e in entries if e["called"]]
    if outcomes:
        return "; ".join(outcomes)
    if not entries:
        return "skipped: the server lists no tools"
    return "skipped: no tool may be called (see probes)"


def error_text(error: Any) -> str:
    """A JSON-RPC error object in a few words."""
    if isinstance(error, dict):
        return f"{error.get('message', 'error')} (code {error.get('code')})"
    return "no result" if error is None else str(error)
