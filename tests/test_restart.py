"""Watch the server's code, restart on change, and show what changed (real files, real processes, real watcher)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import fixture_command, process_group_alive, read_records, records_in, wait_for, wait_tools_listed
from editable_server import tool, write_server
from inspector.session.restarts import CrashLoop
from inspector.session.restarts import Restarter

BASE_TOOLS = [tool("word_count", "Count words."), tool("slow", "Sleeps."), tool("grow", "Adds a tool.")]


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
    wait_tools_listed(inspector, 60)  # recorded AND known to the page (the record comes first)
    if "--no-watch" not in options:
        # printed once Watcher.start() has set up every watch (Watcher.ready), before the server is even spawned
        assert "for changes" in inspector.stderr_text()
    return inspector


def restarts_settled(inspector, path: Path) -> list[dict]:
    """Write `path` (a source file beside server.py, so seen after every earlier change there), wait until a
    restart for it has finished, and return every restart: a restart that earlier changes would still cause
    would have come before it, or be this one."""
    path.write_text(f"# barrier {time.monotonic()}\n")

    def done():
        restarts = events(inspector, "restart")
        if any(str(path) in r["detail"]["paths"] for r in restarts) and len(events(inspector, "diff")) >= len(restarts):
            return restarts
        return None

    restarts = wait_for(done, 15, message=f"the restart for {path.name}")
    assert str(path) in restarts[-1]["detail"]["paths"], "no restart after the barrier's"
    return restarts


def test_an_edit_restarts_once_and_the_diff_names_exactly_the_changes(inspector_factory, project):
    inspector = start(inspector_factory, project)
    edited = [tool("word_count", "Count the words in a text."), BASE_TOOLS[1], BASE_TOOLS[2],
              tool("count_words", "Another counter.")]
    write_server(project, edited)
    diff = wait_for(lambda: events(inspector, "diff"), 15, message="diff event")[0]
    restarts = restarts_settled(inspector, project / "barrier.py")
    assert [r["detail"]["paths"] for r in restarts] == [[str(project / "server.py")], [str(project / "barrier.py")]]
    assert len(events(inspector, "spawn")) == 3
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
    restarts = restarts_settled(inspector, project / "barrier.py")
    for_the_burst = [r for r in restarts if str(project / "server.py") in r["detail"]["paths"]]
    assert 1 <= len(for_the_burst) <= 2
    assert len(restarts) <= 3 and all(r in for_the_burst for r in restarts[:-1])


def test_recordings_git_and_logs_do_not_restart(inspector_factory, project):
    inspector = start(inspector_factory, project)
    for folder in ("recordings", ".git", "__pycache__"):
        (project / folder).mkdir(exist_ok=True)
        (project / folder / "x.py").write_text("x = 1\n")
        (project / folder / "data.json").write_text("{}")
    (project / "server.log").write_text("log line\n")
    (project / "4913").write_text("")
    (project / "server.py.swp").write_text("")
    # ...while a real change, seen after all of the above, restarts for itself alone.
    restarts = restarts_settled(inspector, project / "helper.py")
    assert [r["detail"]["paths"] for r in restarts] == [[str(project / "helper.py")]]


def test_a_call_in_flight_fails_with_server_restarted_and_the_old_group_is_gone(inspector_factory, project):
    inspector = start(inspector_factory, project)
    old_pid = events(inspector, "spawn")[0]["detail"]["pid"]
    status, _, body = inspector.post("/tools/slow/call", {"arguments": "{}"})
    call_id = re.search(r'id="call-(\d+)"', body.decode()).group(1)
    wait_for(lambda: any(r.get("kind") == "message" and r["msg"].get("method") == "tools/call"
                         for r in records_in(inspector.record)), 10, message="the call sent to the server")
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
    loop = wait_for(lambda: events(inspector, "crash-loop"), 30, message="crash loop detected")[0]
    # Five exits within the window make a crash loop; on a busy machine the first starts can be slow enough to fall
    # out of the window, so more restarts may come first. The exit that makes the loop starts no restart
    # (test_a_crash_loop_stops_restarting shows that, without waiting for one not to come).
    # (The era probe may still start the server once more for initialize, as it does for any server that exits on
    # server/discover: that is the handshake's fallback, not a restart.)
    restarts = events(inspector, "restart")
    assert len(restarts) >= 4 and all(restart["seq"] < loop["seq"] for restart in restarts)
    _, _, body = inspector.request("GET", "/")
    assert "crash loop" in body.decode()


class FakeSession:
    """What Restarter touches of a Session when the server exits."""

    def __init__(self) -> None:
        self.on_listed_hooks, self.on_exit_hooks, self.on_notification_hooks = [], [], []
        self.server = SimpleNamespace(error=None)
        self.events: list[str] = []
        self.store = SimpleNamespace(signal=lambda change: None)

    def event(self, name: str, detail: dict) -> None:
        self.events.append(name)


def test_a_crash_loop_stops_restarting():
    now = [0.0]
    session = FakeSession()
    loop = CrashLoop(limit=5, window=10, clock=lambda: now[0])
    restarter = Restarter(session, restart_on_crash=True, crash_loop=loop)
    restarts = []
    restarter.restart_in_background = lambda reason, paths=(): restarts.append(reason)
    exit_ = session.on_exit_hooks[0]
    for _ in range(4):  # slow crashes (one each 3 s) are restarted
        exit_(None, True)
        now[0] += 3.0
    exit_(None, True)  # the 5th exit within 12 s: still slow
    assert restarts == ["crash"] * 5 and session.events == []
    now[0] += 0.1
    exit_(None, True)  # a quick one: the last 5 exits span 9.1 s
    assert restarts == ["crash"] * 5, "no restart once it is a crash loop"
    assert session.events == ["crash-loop"] and restarter.crash_looping and "crash loop" in session.server.error
    exit_(None, False)  # an exit the inspector caused (a stop) is no crash
    assert restarts == ["crash"] * 5 and session.events == ["crash-loop"]


def test_a_crash_restart_asked_for_before_the_loop_but_run_after_it_is_not_made():
    # The exit hook starts crash restarts on threads; on a busy machine such a thread can run after a later exit has
    # already called the crash loop. It must then do nothing (no restart event, no stop, no start).
    session = FakeSession()
    session.stop = session.start = lambda *args, **kwargs: pytest.fail("a crash restart ran during a crash loop")
    restarter = Restarter(session, restart_on_crash=True)
    restarter.crash_looping = True
    restarter.restart("crash")
    assert session.events == []


def test_list_changed_relists_and_diffs_without_a_restart(inspector_factory, project):
    inspector = start(inspector_factory, project, "--no-watch")
    inspector.post("/tools/grow/call", {"arguments": "{}"})
    diff = wait_for(lambda: events(inspector, "diff"), 10, message="diff after list_changed")[0]
    assert diff["detail"]["reason"] == "list_changed"
    assert diff["detail"]["sections"]["tools"]["added"] == ["grown"]
    assert events(inspector, "restart") == []


def test_inputs_survive_a_restart_when_the_schema_still_fits(inspector_factory, project):
    inspector = start(inspector_factory, project)
    status, _, body = inspector.post("/tools/word_count/call", {"arguments": '{"text": "keep me"}'})
    assert status == 200, body[:300]
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
