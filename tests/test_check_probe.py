"""`check` does no harm: which tools its probe calls (the server logs every call it gets), a server that ignores
ping still reviewed, identical descriptions flagged, and server-everything over stdio passing."""

from __future__ import annotations

import pytest
from conftest import everything_command, fixture_command, needs_everything, read_records
from test_check import check_json, run_check

from inspector.protocol.diagnostics import review_tools

# probe_server.py's tools, in order, and why the default probe leaves each one alone (None: it is probed).
DEFAULT_SKIPS = {
    "wipe_database": "destructiveHint",
    "read_row": None,
    "update_row": "readOnlyHint",
    "archive_row": "destructiveHint",
    "count_rows": "no required arguments",
}


def probe_check(tmp_path, *options: str, mode: str = "plain") -> tuple[int, dict, list[str]]:
    """check --json against probe_server.py; the exit code, the report and the calls the server logged."""
    calls = tmp_path / "calls.log"
    code, out, _ = check_json(tmp_path, fixture_command("probe_server", str(calls), mode), "--timeout", "60",
                              *options)
    logged = calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []
    return code, out, logged


def probes_by_tool(out: dict) -> dict[str, dict]:
    return {p["tool"]: p for p in out["summary"]["probes"]}


def test_by_default_only_the_read_only_tool_is_called(tmp_path):
    code, out, logged = probe_check(tmp_path)
    assert logged == ["read_row {}"]
    probes = probes_by_tool(out)
    assert list(probes) == list(DEFAULT_SKIPS)
    for name, why in DEFAULT_SKIPS.items():
        if why is None:
            assert probes[name]["called"] is True and "success result" in probes[name]["outcome"], probes[name]
        else:
            assert probes[name]["called"] is False and why in probes[name]["reason"], probes[name]
    # read_row took {} as fine: advice, not a warning.
    assert (code, out["warnings"]) == (0, [])
    assert ("probe-accepted-missing-args", "read_row") in {(a["rule"], a["tool"]) for a in out["advice"]}


def test_the_text_report_says_what_was_called_and_what_was_not(tmp_path):
    calls = tmp_path / "calls.log"
    done = run_check("--timeout", "60", "--", *fixture_command("probe_server", str(calls)))
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    assert "read_row without arguments: a success result" in text
    skipped = next(line for line in text.splitlines() if "wipe_database" in line)
    assert "not called" in skipped and "destructiveHint" in skipped, text
    assert "--probe-tool" in text  # it tells how to opt in
    assert calls.read_text(encoding="utf-8").splitlines() == ["read_row {}"]


def test_probe_tool_calls_exactly_the_tools_named(tmp_path):
    code, out, logged = probe_check(tmp_path, "--probe-tool", "wipe_database", "--probe-tool", "update_row")
    assert logged == ["wipe_database {}", "update_row {}"]
    probes = probes_by_tool(out)
    assert probes["wipe_database"]["called"] and probes["update_row"]["called"]
    assert not probes["read_row"]["called"] and "--probe-tool" in probes["read_row"]["reason"]
    assert code == 0


def test_probe_all_calls_every_tool_with_required_arguments(tmp_path):
    _, out, logged = probe_check(tmp_path, "--probe-all")
    assert logged == ["wipe_database {}", "read_row {}", "update_row {}", "archive_row {}"]
    assert "no required arguments" in probes_by_tool(out)["count_rows"]["reason"]


def test_probe_tool_naming_no_tool_of_the_server_cannot_run(tmp_path):
    code, out, logged = probe_check(tmp_path, "--probe-tool", "wipe_databse")
    assert logged == []
    assert code == 2 and "wipe_databse" in out["summary"]["error"]


def test_probe_options_are_refused_together():
    done = run_check("--probe-all", "--probe-tool", "x", "--", "python", "server.py")
    assert done.returncode == 2 and "not allowed with" in done.stderr, done.stderr


def test_help_says_what_check_sends():
    done = run_check("--help")
    text = " ".join(done.stdout.split())
    for words in ("readOnlyHint: true", "destructiveHint: true", "--probe-tool", "--probe-all", "ping", "tools/list"):
        assert words in text, words


def test_a_server_that_ignores_ping_is_still_reviewed_and_probed(tmp_path):
    calls = tmp_path / "calls.log"
    # --protocol legacy: the era probe would wait on this silent server too; ping's own 15 s is what is under test
    # (long enough for a loaded machine to start the server and list its tools).
    code, out, records = check_json(tmp_path, fixture_command("probe_server", str(calls), "silent"),
                                    "--protocol", "legacy", "--timeout", "15")
    assert out["summary"]["error"] is None, out["summary"]
    rules = {w["rule"] for w in out["warnings"]}
    assert rules == {"no-answer-silent"}, out["warnings"]
    ping_seq = next(r["seq"] for r in records if r.get("dir") == "to_server" and r["msg"].get("method") == "ping")
    assert out["warnings"][0]["seq"] == ping_seq
    assert code == 1
    assert out["summary"]["tools"] == 5 and out["advice"]  # the lists and the review went on
    assert calls.read_text(encoding="utf-8").splitlines() == ["read_row {}"]  # and the probe
    assert any("ping" in note for note in out["summary"]["notes"])


def test_identical_descriptions_are_flagged(tmp_path):
    _, out, _ = probe_check(tmp_path, mode="twins")
    twins = [a for a in out["advice"] if a["rule"] == "duplicate-description"]
    assert [a["tool"] for a in twins] == ["lookup_row"] and "find_row" in twins[0]["text"]


def test_identical_descriptions_rule_compares_text_not_names():
    def tool(name, description):
        return {"name": name, "description": description, "inputSchema": {"type": "object"}}
    found = review_tools([tool("do", "Does it. Returns the result."), tool("do_it", "does it.  returns the RESULT."),
                          tool("other", "Does something else. Returns it.")])
    assert [(a.rule, a.tool) for a in found if a.rule.startswith("duplicate")] == [("duplicate-description", "do_it")]
    assert review_tools([tool("do", "Does it. Returns it."), tool("do_it", "Does it. Returns it.")],
                        disabled=["duplicate-description"]) == []


def test_plan_probes_destructive_wins_and_opt_ins():
    from inspector.protocol.tool_probes import plan_probes

    tools = [{"name": "a", "inputSchema": {"required": ["x"]}, "annotations": {"readOnlyHint": True}},
             {"name": "b", "inputSchema": {"required": ["x"]},
              "annotations": {"readOnlyHint": True, "destructiveHint": True}},
             {"name": "c", "inputSchema": {"required": ["x"]}, "annotations": {"readOnlyHint": "true"}}]
    assert [(p.tool, p.call) for p in plan_probes(tools)] == [("a", True), ("b", False), ("c", False)]
    assert [(p.tool, p.call) for p in plan_probes(tools, probe_all=True)] == [("a", True), ("b", True), ("c", True)]
    assert [(p.tool, p.call) for p in plan_probes(tools, named=("c",))] == [("a", False), ("b", False), ("c", True)]


def test_could_not_finish_is_not_preceded_by_no_warnings(tmp_path):
    done = run_check("--", str(tmp_path / "no-such-server"))
    assert done.returncode == 2 and "Could not finish" in done.stdout
    assert "No protocol warnings" not in done.stdout and "Probe" not in done.stdout, done.stdout


@needs_everything
def test_server_everything_over_stdio_passes_and_only_read_only_tools_are_called(tmp_path):
    code, out, records = check_json(tmp_path, everything_command(), "--timeout", "60")
    assert out["warnings"] == [], out["warnings"]
    assert code == 0 and out["summary"]["error"] is None
    listed = next(r["msg"]["result"]["tools"] for r in records
                  if r.get("dir") == "from_server" and "tools" in (r["msg"].get("result") or {}))
    read_only = {t["name"] for t in listed if (t.get("annotations") or {}).get("readOnlyHint") is True
                 and (t.get("annotations") or {}).get("destructiveHint") is not True}
    called = [r["msg"]["params"]["name"] for r in records
              if r.get("dir") == "to_server" and r["msg"].get("method") == "tools/call"]
    assert called and set(called) <= read_only, called
    assert {p["tool"] for p in out["summary"]["probes"] if p["called"]} == set(called)


def test_rows_are_explained_when_no_recording_is_written(tmp_path):
    server = fixture_command("mistakes_server", "prints-stdout")
    unrecorded = run_check("--timeout", "60", "--", *server)
    assert unrecorded.returncode == 1 and "rows are numbered as in the recording --record PATH" in unrecorded.stdout
    recorded = run_check("--timeout", "60", "--record", str(tmp_path / "c.jsonl"), "--", *server)
    assert recorded.returncode == 1 and "rows are numbered" not in recorded.stdout
