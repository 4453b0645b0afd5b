"""The pytest plugin: a server's own suite keeps recordings as regression tests.

Every test runs a real child pytest (pytester's subprocess mode) in a throw-away project that finds the plugin as an
installed user's pytest does: through the `pytest11` entry point that pyproject.toml declares. The recordings are
made by the real `mcp-inspect call --record` against the SDK fixture server; a "changed server" is a copy of that
server with one edit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

pytest_plugins = ["pytester"]

PY = sys.executable
CHILD_TIMEOUT = 90  # seconds for one child pytest (or one recording call); each replays the SDK server once or twice
ECHO = "    return text\n"
ADD_DOC = "Add two integers and return the sum."


def declared_entry_points() -> dict[str, str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[str, Path]:
    """Recordings of the SDK fixture server made by `mcp-inspect call --record`: a tool call and the tool list."""
    base = tmp_path_factory.mktemp("recordings")
    made = {}
    for name, request in {"echo": ["--tool", "echo", "--args", '{"text": "hi"}'], "tools": ["tools/list"]}.items():
        made[name] = base / f"{name}.jsonl"
        result = subprocess.run([PY, "-m", "inspector.cli", "call", *request, "--record", str(made[name]), "--",
                                 PY, str(FIXTURES / "sdk_server.py")], cwd=base, capture_output=True, text=True,
                                timeout=CHILD_TIMEOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert result.returncode == 0, result.stderr
    return made


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder with a dist-info that carries exactly the entry points pyproject.toml declares, as an install
    writes them. The shared venv's editable install predates the entry point, so this is how a child finds it."""
    folder = tmp_path_factory.mktemp("site")
    info = folder / "mcp_inspect_plugin_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mcp-inspect-plugin-probe\nVersion: 0\n")
    lines = [f"{name} = {target}" for name, target in declared_entry_points().items()]
    (info / "entry_points.txt").write_text("[pytest11]\n" + "\n".join(lines) + "\n")
    return folder


@pytest.fixture
def project(pytester, site, recordings, monkeypatch):
    """A server project in pytester's folder: the SDK server as server.py and both recordings in tests/recordings."""
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{ROOT}")
    server(pytester)
    folder = pytester.path / "tests" / "recordings"
    folder.mkdir(parents=True)
    for name, path in recordings.items():
        (folder / f"{name}.jsonl").write_bytes(path.read_bytes())
    return pytester


def server(pytester, name: str = "server.py", **edits: str) -> Path:
    """The SDK fixture server copied into the project, each edit replacing one exact piece of its text."""
    text = (FIXTURES / "sdk_server.py").read_text()
    for old, new in edits.values():
        assert old in text, old
        text = text.replace(old, new)
    path = pytester.path / name
    path.write_text(text)
    return path


def table(pytester, body: str | None) -> None:
    """pyproject.toml with this [tool.mcp-inspect] body (None: a pyproject.toml without the table)."""
    section = "" if body is None else f"[tool.mcp-inspect]\n{body}\n"
    pytester.makefile(".toml", pyproject=f"[tool.pytest.ini_options]\n\n{section}")


STANDARD = f'command = [{json.dumps(PY)}, "server.py"]\nrecordings = "tests/recordings"'


def run(pytester, *args: str):
    return pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", *args, timeout=CHILD_TIMEOUT)


def test_recordings_of_the_same_server_are_passed_items(project):
    table(project, STANDARD)
    result = run(project)
    result.stdout.fnmatch_lines(["*tests/recordings/echo.jsonl::echo PASSED*",
                                 "*tests/recordings/tools.jsonl::tools PASSED*"])
    result.assert_outcomes(passed=2)


def test_a_changed_server_is_a_failed_item_whose_message_is_the_step_diff(project):
    server(project, result=(ECHO, '    return text + "!"\n'), tools=(ADD_DOC, "Add two integers."))
    table(project, STANDARD)
    recording = project.path / "tests" / "recordings" / "echo.jsonl"
    header, rest = recording.read_text().split("\n", 1)
    recording.write_text(json.dumps({**json.loads(header), "env": {"MCP_PLUGIN_KEY": "[REDACTED]"}}) + "\n" + rest)
    result = run(project)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "warning: the recording was made with -e MCP_PLUGIN_KEY; not set here" in out  # a likely reason why
    assert "replay of tests/recordings/echo.jsonl against:" in out
    assert '$.result.content[0].text: "hi" → "hi!"' in out and "tools/call echo" in out
    assert "replay: 2 steps: 1 same, 1 different, 0 missing, 0 extra" in out
    assert '$.result.tools[?(@.name=="add")].description: "Add two integers and return the sum." → ' \
           '"Add two integers."' in out
    assert "Traceback" not in out and "pytest_plugin.py" not in out  # the diff is the message, not a traceback


def test_the_table_s_ignore_rules_hide_an_intended_difference(project):
    server(project, result=(ECHO, '    return text + "!"\n'))
    table(project, STANDARD + '\nignore = ["$.result.content[*].text", "$.result.structuredContent.result"]')
    run(project).assert_outcomes(passed=2)


def test_a_bare_run_collects_the_folder_outside_the_testpaths_too(project):
    (project.path / "tests" / "recordings").rename(project.path / "regressions")
    project.makepyfile(**{"tests/test_plain": "def test_plain():\n    pass\n"})
    body = f'command = [{json.dumps(PY)}, "server.py"]\nrecordings = "regressions"'
    project.makefile(".toml", pyproject=f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.mcp-inspect]\n{body}\n')
    result = run(project, "--co")
    result.stdout.fnmatch_lines(["*collected 3 items*", "*<RecordingItem echo>*", "*<RecordingItem tools>*"])
    assert "collected 1 item" in run(project, "--co", "tests").stdout.str()  # named paths are run as named


def test_k_selects_one_recording(project):
    server(project, result=(ECHO, '    return text + "!"\n'))
    table(project, STANDARD)
    result = run(project, "-k", "tools")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*tests/recordings/tools.jsonl::tools PASSED*"])
    run(project, "-k", "echo").assert_outcomes(failed=1, deselected=1)


def test_a_server_that_cannot_start_fails_with_a_clear_message(project):
    table(project, 'command = ["./no-such-server"]\nrecordings = "tests/recordings"')
    result = run(project, "-k", "echo")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["replay of tests/recordings/echo.jsonl against: ./no-such-server",
                                 "replay could not run: *no-such-server*"])


def test_a_server_that_dies_mid_replay_fails_with_its_last_stderr_lines(project):
    dying = '    import os, sys\n    print("echo broke down", file=sys.stderr, flush=True)\n    os._exit(3)\n'
    server(project, result=(ECHO, dying))
    table(project, STANDARD)
    result = run(project, "-k", "echo")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["   2  tools/call echo * missing", "*exited with code 3*",
                                 "replay: 2 steps: 1 same, 0 different, 1 missing, 0 extra",
                                 "the server's stderr (last lines):", "*echo broke down"])


def test_without_the_table_nothing_is_collected_and_nothing_heavy_is_imported(project):
    table(project, None)
    project.makepyfile(test_plain="""
        import sys

        def test_plain(request):
            assert request.config.pluginmanager.has_plugin("mcp-inspect")  # loaded, through its entry point
            heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("flask", "werkzeug", "jsonschema", "httpx")
                           or m.startswith(("inspector.client", "inspector.recording", "inspector.commands")))
            assert heavy == []
    """)
    result = run(project)
    result.assert_outcomes(passed=1)
    assert ".jsonl" not in result.stdout.str()


def test_the_fixture_replays_with_its_own_command_and_ignore_rules(project):
    table(project, None)  # the fixture needs no table
    server(project, "changed.py", result=(ECHO, '    return text + "!"\n'))
    project.makepyfile(test_replays=f"""
        import sys

        def test_same(mcp_replay):
            report = mcp_replay("tests/recordings/echo.jsonl", command=[sys.executable, "server.py"])
            assert [step.status for step in report.steps] == ["same", "same"]

        def test_changed(mcp_replay):
            mcp_replay("tests/recordings/echo.jsonl", command=[sys.executable, "changed.py"])

        def test_changed_but_ignored(mcp_replay):
            mcp_replay("tests/recordings/echo.jsonl", command=[sys.executable, "changed.py"],
                       ignore=["$.result.content[*].text", "$.result.structuredContent"])

        def test_no_command(mcp_replay):
            mcp_replay("tests/recordings/echo.jsonl")
    """)
    result = run(project)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*test_replays.py::test_same PASSED*", "*test_replays.py::test_changed FAILED*",
                                 "*test_replays.py::test_changed_but_ignored PASSED*",
                                 "*test_replays.py::test_no_command FAILED*"])
    out = result.stdout.str()
    assert '$.result.content[0].text: "hi" → "hi!"' in out
    assert "replay could not run: no server command" in out


def test_p_no_mcp_inspect_turns_the_plugin_off(project):
    table(project, STANDARD)
    assert "collected 2 items" in run(project, "--co").stdout.str()
    off = run(project, "--co", "-p", "no:mcp-inspect")
    assert "no tests collected" in off.stdout.str() and ".jsonl" not in off.stdout.str()


def test_a_malformed_table_is_a_usage_error_naming_the_key(project):
    table(project, 'command = 3\nrecordings = "tests/recordings"')
    result = run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pyproject.toml [[]tool.mcp-inspect[]]: command must be a list of strings*"])


def test_importing_the_plugin_loads_nothing_but_itself():
    probe = "import pytest, sys; before = set(sys.modules); import inspector.pytest_plugin; " \
            "print(sorted(set(sys.modules) - before))"
    result = subprocess.run([PY, "-c", probe], capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.strip() == "['inspector', 'inspector.pytest_plugin']", result.stderr
