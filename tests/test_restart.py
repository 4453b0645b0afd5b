"""Watch the server's code, restart on change, and show what changed (real files, real processes, real watcher)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from conftest import fixture_command, process_group_alive, read_records, records_in, wait_for

SERVER = '''"""An editable server: the tests rewrite TOOLS and save."""
import json, sys, time
TOOLS = {tools!r}
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{"listChanged": True}}}},
             "serverInfo": {{"name": "editable", "version": "1"}}}}
    elif m["method"] == "tools/list":
        r = {{"tools": TOOLS}}
    elif m["method"] != "tools/call":
        print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "error": {{"code": -32601, "message": "no"}}}}), flush=True)
        continue
    elif m["params"]["name"] == "slow":
        time.sleep(30)
        r = {{"content": []}}
    elif m["params"]["name"] == "grow":
        TOOLS.append({{"name": "grown", "description": "appeared", "inputSchema": {{"type": "object"}}}})
        print(json.dumps({{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}), flush=True)
        r = {{"content": [{{"type": "text", "text": "grew"}}]}}
    else:
        r = {{"content": [{{"type": "text", "text": "ok"}}]}}
    print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": r}}), flush=True)
'''


def tool(name: str, description: str, properties: dict | None = None) -> dict:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": properties or {"text": {"type": "string"}}}}


BASE_TOOLS = [tool("word_count", "Count words."), tool("slow", "Sleeps."), tool("grow", "Adds a tool.")]


def write_server(folder: Path, tools: list[dict]) -> Path:
    path = folder / "server.py"
    path.write_text(SERVER.format(tools=tools))
    return path


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    write_server(folder, BASE_TOOLS)
    return folder


def events(inspector, name: str) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("event") == name]


def start(inspector_factory, project: Path, *options: str):
    inspector = inspector_factory(["python3", "server.py"], *options, cwd=project)
    wait_for(lambda: any(r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {})
                         for r in records_in(inspector.record)), 15, message="tools listed")
    time.sleep(0.3)  # let the watcher finish setting up before the first edit
    return inspector


def test_an_edit_restarts_once_and_the_diff_names_exactly_the_changes(inspector_factory, project):
    inspector = start(inspector_factory, project)
    edited = [tool("word_count", "Count the words in a text."), BASE_TOOLS[1], BASE_TOOLS[2],
              tool("count_words", "Another counter.")]
    write_server(project, edited)
    diff = wait_for(lambda: events(inspector, "diff"), 15, message="diff event")[0]
    time.sleep(1.0)  # a second restart would come after the quiet period
    assert len(events(inspector, "restart")) == 1
    assert len(events(inspector, "spawn")) == 2
    tools = diff["detail"]["sections"]["tools"]
    assert tools["added"] == ["count_words"]
    assert tools["removed"] == []
    assert list(tools["changed"]) == ["word_count"]
    assert [c["path"] for c in tools["changed"]["word_count"]] == ["/description"]
    assert tools["changed"]["word_count"][0]["after"] == "Count the words in a text."
    assert set(diff["detail"]["sections"]) == {"tools"}
    restart = events(inspector, "restart")[0]
    assert restart["detail"]["reason"] == "file change"
    assert any(p.endswith("server.py") for p in restart["detail"]["paths"])
    order = [r.get("event") for r in read_records(inspector.record) if r.get("event")]
    assert order.index("restart") < order.index("exit") < order.index("diff")
    # The page: the tool is marked until looked at, and the header says what happened.
    _, _, body = inspector.request("GET", "/")
    page = body.decode()
    assert "mark-changed" in page and "mark-new" in page and "restarted" in page
    inspector.request("GET", "/tools/word_count")
    _, _, body = inspector.request("GET", "/")
    assert 'mark-changed' not in body.decode()


def test_a_restart_that_changed_nothing_says_so(inspector_factory, project):
    inspector = start(inspector_factory, project)
    (project / "server.py").write_text((project / "server.py").read_text() + "\n# a comment\n")
    diff = wait_for(lambda: events(inspector, "diff"), 15, message="diff event")[0]
    assert diff["detail"]["summary"] == "nothing changed"


def test_a_burst_of_saves_causes_at_most_two_restarts(inspector_factory, project):
    inspector = start(inspector_factory, project)
    source = (project / "server.py").read_text()
    deadline = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < deadline and n < 200:
        if n % 2:
            (project / "server.py").write_text(source + f"\n# save {n}\n")
        else:  # editor style: write a temporary file, then rename it over the original
            temp = project / f".server.py.{n}.tmp"
            temp.write_text(source + f"\n# save {n}\n")
            os.replace(temp, project / "server.py")
        n += 1
    wait_for(lambda: events(inspector, "diff"), 15, message="a restart")
    time.sleep(1.5)
    assert 1 <= len(events(inspector, "restart")) <= 2


def test_recordings_git_and_logs_do_not_restart(inspector_factory, project):
    inspector = start(inspector_factory, project)
    for folder in ("recordings", ".git", "__pycache__"):
        (project / folder).mkdir(exist_ok=True)
        (project / folder / "x.py").write_text("x = 1\n")
        (project / folder / "data.json").write_text("{}")
    (project / "server.log").write_text("log line\n")
    (project / "4913").write_text("")
    (project / "server.py.swp").write_text("")
    time.sleep(1.5)
    assert events(inspector, "restart") == []
    # ...while a real change still does.
    (project / "helper.py").write_text("y = 2\n")
    wait_for(lambda: events(inspector, "restart"), 15, message="restart for a source file")


def test_a_call_in_flight_fails_with_server_restarted_and_the_old_group_is_gone(inspector_factory, project):
    inspector = start(inspector_factory, project)
    old_pid = events(inspector, "spawn")[0]["detail"]["pid"]
    status, _, body = inspector.post("/tools/slow/call", {"arguments": "{}"})
    call_id = re.search(r'id="call-(\d+)"', body.decode()).group(1)
    time.sleep(0.2)
    status, _, _ = inspector.post("/server/restart")
    assert status == 200
    wait_for(lambda: len(events(inspector, "spawn")) == 2, 15, message="second spawn")
    _, _, body = inspector.request("GET", f"/calls/{call_id}")
    wait_for(lambda: "server restarted" in inspector.request("GET", f"/calls/{call_id}")[2].decode(), 10,
             message="the call failed with 'server restarted'")
    assert not process_group_alive(old_pid)
    new_pid = events(inspector, "spawn")[1]["detail"]["pid"]
    assert process_group_alive(new_pid)
    # Never two servers: the old exit is recorded before the new spawn.
    order = [(r.get("event"), r["seq"]) for r in read_records(inspector.record) if r.get("event") in ("exit", "spawn")]
    assert [name for name, _ in order] == ["spawn", "exit", "spawn"]


def test_restart_on_crash_stops_at_a_crash_loop(inspector_factory, tmp_path):
    inspector = inspector_factory(fixture_command("fake_server", "exit-at-start"), "--restart-on-crash", "--no-watch")
    wait_for(lambda: events(inspector, "crash-loop"), 30, message="crash loop detected")
    spawns = len(events(inspector, "spawn"))
    time.sleep(1.0)
    assert len(events(inspector, "spawn")) == spawns, "no more restarts after the crash loop"
    assert spawns == 5
    _, _, body = inspector.request("GET", "/")
    assert "crash loop" in body.decode()


def test_list_changed_relists_and_diffs_without_a_restart(inspector_factory, project):
    inspector = start(inspector_factory, project, "--no-watch")
    inspector.post("/tools/grow/call", {"arguments": "{}"})
    diff = wait_for(lambda: events(inspector, "diff"), 10, message="diff after list_changed")[0]
    assert diff["detail"]["reason"] == "list_changed"
    assert diff["detail"]["sections"]["tools"]["added"] == ["grown"]
    assert events(inspector, "restart") == []


def test_inputs_survive_a_restart_when_the_schema_still_fits(inspector_factory, project):
    inspector = start(inspector_factory, project)
    inspector.post("/tools/word_count/call", {"arguments": '{"text": "keep me"}'})
    write_server(project, [tool("word_count", "Changed description."), BASE_TOOLS[1],
                           tool("grow", "Adds a tool.", {"n": {"type": "integer"}})])
    wait_for(lambda: events(inspector, "diff"), 15, message="diff event")
    _, _, body = inspector.request("GET", "/tools/word_count")
    assert "keep me" in body.decode()


def test_no_watch_for_demo_and_for_module_commands(inspector_factory, tmp_path):
    inspector = inspector_factory([], "--demo")
    _, _, body = inspector.request("GET", "/")
    assert "not watching" in body.decode()
    assert "watching" not in inspector.stderr_text()


def test_cli_rejects_a_missing_watch_path(tmp_path):
    import subprocess

    from conftest import PYTHON, ROOT

    result = subprocess.run([PYTHON, "-m", "inspector.cli", "--no-open", "--watch", "nope", "python3", "x.py"],
                            capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT)}, timeout=30)
    assert result.returncode == 2 and "--watch: no such file or folder: nope" in result.stderr


@pytest.mark.browser
def test_page_shows_the_restart_the_changed_tool_and_keeps_the_input(page, inspector_factory, project):
    inspector = start(inspector_factory, project)
    page.goto(inspector.url)
    page.locator("#tools-list .tool-item", has_text="word_count").click()
    page.get_by_label("text").fill("typed before the edit")
    page.get_by_role("button", name="Call", exact=True).click()
    page.locator(".call.state-result").wait_for()
    write_server(project, [tool("word_count", "Count the words, now better."), BASE_TOOLS[1], BASE_TOOLS[2]])
    page.locator("#timeline-rows .row.kind-event", has_text="what changed").wait_for(timeout=15000)
    diff_row = page.locator("#timeline-rows .row.kind-event", has_text="what changed")
    assert "word_count" in diff_row.inner_text()
    page.locator("#tools-list .tool-item", has_text="word_count").locator(".mark-changed").wait_for()
    assert "restarted" in page.locator("#watch-status").inner_text()
    # Expanding the diff row shows the field-level difference, with the text diff of the description.
    diff_row.locator("summary .c-time").click()
    diff_row.locator(".diff-field").first.wait_for()
    assert "/description" in diff_row.locator(".diff").inner_text()
    assert diff_row.locator(".text-diff ins").count() >= 1
    page.locator("#tools-list .tool-item", has_text="word_count").click()
    assert page.get_by_label("text").input_value() == "typed before the edit"
    wait_for(lambda: page.locator("#tools-list .tool-item .mark-changed").count() == 0, 5,
             message="the mark goes once the tool was looked at")
