"""Discoverable commands (issue 15 item 7): `--help` and `help` list the subcommands, `help COMMAND` shows one, and a
mistyped subcommand or a recording given as the server command is answered with what was meant. Real subprocesses;
a program of that name on PATH still runs (the command line is the server's)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from conftest import ROOT
from inspector.cli import SUBCOMMANDS, parse_config

PY = sys.executable


def run_cli(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def listed_subcommands(text: str) -> set[str]:
    """The subcommands that have a line of their own, `mcp-inspect NAME ...` plus words."""
    return {line.split()[1] for line in text.splitlines()
            if line.startswith("  mcp-inspect ") and len(line.split()) > 4}


@pytest.mark.parametrize("asked", [["--help"], ["help"]])
def test_help_lists_every_subcommand_with_a_line(tmp_path, asked):
    result = run_cli(asked, tmp_path)
    assert result.returncode == 0, result.stderr
    assert listed_subcommands(result.stdout) == {"view", "replay", "export", "call", "check"} == set(SUBCOMMANDS)


def test_help_command_shows_that_commands_help(tmp_path):
    result = run_cli(["help", "call"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: mcp-inspect call") and "--config FILE" in result.stdout
    unknown = run_cli(["help", "calls"], tmp_path)
    assert unknown.returncode == 2 and "help takes one of: view, replay, export, call, check" in unknown.stderr


@pytest.mark.parametrize("argv, meant", [
    (["calls", "tools/list"], "did you mean `mcp-inspect call`?"),
    (["--no-open", "chek"], "did you mean `mcp-inspect check`?"),
    (["replya", "rec.jsonl"], "did you mean `mcp-inspect replay`?"),
])
def test_a_mistyped_subcommand_is_named(tmp_path, argv, meant):
    result = run_cli(argv, tmp_path)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"mcp-inspect: command not found: {argv[-1] if argv[0] == '--no-open' else argv[0]};")
    assert meant in line and "token=" not in result.stdout


def test_a_recording_given_as_the_command_suggests_view(tmp_path):
    (tmp_path / "rec.jsonl").write_text('{"kind": "header"}\n', encoding="utf-8")
    result = run_cli(["rec.jsonl"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "rec.jsonl is a recording, not a server command: open it with `mcp-inspect view rec.jsonl`" \
        in result.stderr
    missing = run_cli(["--no-open", "gone.jsonl"], tmp_path)  # no such file: nothing to suggest
    assert missing.returncode == 2 and "command not found: gone.jsonl" in missing.stderr


def test_a_program_named_like_a_subcommand_on_path_still_runs(tmp_path):
    """Only a name that is no program gets a suggestion: `calls` on the server's PATH is the server's command."""
    program = tmp_path / "calls"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    config = parse_config(["-e", f"PATH={tmp_path}", "calls", "--x"])
    assert config.command == ("calls", "--x")
    assert parse_config(["python3", "server.py"]).command == ("python3", "server.py")
