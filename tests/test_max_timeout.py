"""A request whose progress kept pushing its timeout back ends at --max-timeout, and says so (security findings,
12: it said "no answer within 1 s", the --timeout, when --max-timeout 3 had ended it). The real page's Session and
Calls, built in-process, over a real fixture server that reports progress every 0.25 s."""

from __future__ import annotations

from conftest import fixture_command, read_records, wait_for, wait_tools_listed


def test_a_call_ended_by_the_maximum_timeout_names_that_limit(page_factory):
    inspector = page_factory(fixture_command("fake_server", "ok"), "--timeout", "2", "--max-timeout", "4")
    wait_tools_listed(inspector)
    status, _, _ = inspector.post("/tool/call?name=slow", {"arguments": '{"seconds": 60}'})
    assert status == 200
    call = next(c for c in inspector.services.calls.calls.values() if c.tool == "slow")
    assert call.done.wait(60), "the call ended by the maximum timeout"
    assert call.state == "failed" and "no answer within 4 s" in call.message, call.message
    assert call.progress, "progress came, so --timeout (2 s) did not end it"
    timeouts = [r["detail"] for r in read_records(inspector.record) if r.get("event") == "timeout"]
    assert [t["after_s"] for t in timeouts] == [4]
