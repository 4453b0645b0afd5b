"""`mcp-inspect check` as a real subprocess against the mistakes fixture (one mistake per mode) and clean servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, fixture_command, read_records

PYTHON = sys.executable


def run_check(*args: str, timeout: float = 110) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "inspector.commands.check", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def check_json(tmp_path, server: list[str], *options: str) -> tuple[int, dict, list[dict]]:
    record = tmp_path / "check.jsonl"
    done = run_check("--json", "--record", str(record), *options, "--", *server)
    return done.returncode, json.loads(done.stdout), read_records(record)


def row(records: list[dict], seq: int) -> dict:
    return next(r for r in records if r.get("seq") == seq)


# mode -> (rule, a test of the row the warning must sit on)
MISTAKES = {
    "answers-notifications": ("answered-notification",
                              lambda r: r["dir"] == "from_server" and r["msg"].get("id", 0) is None),
    "prints-stdout": ("stdout-not-json", lambda r: r["kind"] == "invalid" and "Starting" in r["raw"]),
    "never-flush": ("no-answer-silent", lambda r: r["dir"] == "to_server" and r["msg"]["method"] == "initialize"),
    "mismatched-ids": ("unmatched-response", lambda r: r["dir"] == "from_server" and r["msg"]["id"] == "1"),
    "bad-content": ("result-schema",
                    lambda r: r["dir"] == "from_server" and r["msg"]["result"]["content"][0]["type"] == "json"),
    "undeclared-capability": ("undeclared-capability",
                              lambda r: r["dir"] == "from_server" and r["msg"].get("method") == "notifications/message"),
}


@pytest.mark.parametrize("mode", sorted(MISTAKES))
def test_each_mistake_gives_exactly_its_warning_on_its_row(tmp_path, mode):
    rule, on_row = MISTAKES[mode]
    code, out, records = check_json(tmp_path, fixture_command("mistakes_server", mode), "--timeout", "1")
    assert code == 1, out
    # The same mistake may show on more than one row (a server that mangles ids does it to the era probe too).
    assert {w["rule"] for w in out["warnings"]} == {rule}, out["warnings"]
    warning = out["warnings"][0]
    assert on_row(row(records, warning["seq"])), row(records, warning["seq"])
    assert warning["fix"] and warning["text"]
    events = [r for r in records if r["kind"] == "event" and r["event"] == "warning"]
    assert [e["detail"] for e in events] == [{"rule": w["rule"], "seq": w["seq"], "text": w["text"]}
                                             for w in out["warnings"]]


def test_poor_description_is_advice_only(tmp_path):
    code, out, _ = check_json(tmp_path, fixture_command("mistakes_server", "poor-description"))
    assert code == 0
    assert out["warnings"] == []
    assert sorted((a["rule"], a["tool"]) for a in out["advice"]) == [("duplicate-name", "count_words"),
                                                                     ("short-description", "count_words")]
    assert out["summary"]["review"]["clean_tools"] == ["word_count", "reverse_text"]


def test_clean_mode_has_no_findings_and_exit_0(tmp_path):
    code, out, records = check_json(tmp_path, fixture_command("mistakes_server", "clean"))
    assert (code, out["warnings"], out["advice"]) == (0, [], [])
    assert out["summary"]["probe"].endswith("(good)")
    assert out["summary"]["tools"] == 2
    methods = [r["msg"].get("method") for r in records if r.get("dir") == "to_server"]
    assert methods[:5] == ["server/discover", "initialize", "notifications/initialized", "ping", "tools/list"]
    assert "tools/call" in methods
    assert out["summary"]["era"] == "legacy"


@pytest.mark.parametrize("protocol, era", [("auto", "modern"), ("legacy", "legacy"), ("modern", "modern")])
def test_check_speaks_the_era_asked_for(tmp_path, protocol, era):
    # --timeout 60: these servers are good; on a loaded machine an SDK server can take more than the default 10 s.
    code, out, records = check_json(tmp_path, fixture_command("sdk_server"), "--protocol", protocol, "--timeout", "60")
    assert (code, out["warnings"]) == (0, [])
    assert out["summary"]["era"] == era and out["summary"]["tools"] >= 4
    methods = [r["msg"].get("method") for r in records if r.get("dir") == "to_server"]
    assert ("initialize" in methods) == (era == "legacy")
    assert ("ping" in methods) == (era == "legacy")  # 2026-07-28 has no ping


@pytest.mark.parametrize("server", [
    [PYTHON, "-m", "inspector.demo.server"],
    fixture_command("raw_server"),
    fixture_command("sdk_server"),
], ids=["demo", "raw", "sdk"])
def test_no_false_warnings_on_the_known_good_servers(tmp_path, server):
    code, out, _ = check_json(tmp_path, server, "--timeout", "60")  # good servers; a loaded machine is slow
    assert out["warnings"] == [], out["warnings"]
    assert code == 0
    assert out["summary"]["error"] is None


def test_demo_server_gets_no_advice(tmp_path):
    _, out, _ = check_json(tmp_path, [PYTHON, "-m", "inspector.demo.server"])
    assert out["advice"] == []
    assert out["summary"]["tools"] == 7 and out["summary"]["prompts"] == 1


def test_rules_file_switches_rules_off(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"disable": ["answered-notification", "param-no-example"]}))
    code, out, _ = check_json(tmp_path, fixture_command("mistakes_server", "answers-notifications"),
                              "--rules", str(rules))
    assert (code, out["warnings"]) == (0, [])


def test_human_output_names_rule_row_and_fix():
    done = run_check("--timeout", "2", "--", *fixture_command("mistakes_server", "prints-stdout"))
    assert done.returncode == 1
    assert "[stdout-not-json]" in done.stdout and re.search(r"row \d+  \[stdout-not-json\]", done.stdout) and "log to stderr" in done.stdout


def test_exit_2_when_it_cannot_run(tmp_path):
    done = run_check("--", str(tmp_path / "no-such-server"))
    assert done.returncode == 2 and "mcp-inspect:" in done.stderr
    assert run_check("--json").returncode == 2  # no command
    bad = tmp_path / "bad.json"
    bad.write_text('{"disable": ["no-such-rule"]}')
    done = run_check("--rules", str(bad), "--", PYTHON, "-c", "pass")
    assert done.returncode == 2 and "no-such-rule" in done.stderr


def test_exit_2_when_the_server_exits_at_once():
    done = run_check("--json", "--", PYTHON, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)")
    assert done.returncode == 2
    out = json.loads(done.stdout)
    assert out["warnings"] == [] and "could not connect" in out["summary"]["error"]


def test_check_does_not_import_flask():
    code = ("import sys, inspector.commands.check as c; "
            "assert not any(m == 'flask' or m.startswith('flask.') for m in sys.modules), 'flask imported'")
    subprocess.run([PYTHON, "-c", code], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
