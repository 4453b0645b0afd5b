"""inspector.cli: the argv split, Config parsing, and the real command's exit codes and messages."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading

import pytest

from conftest import ROOT, fixture_command
from inspector import __version__
from inspector.cli import UsageError, parse_config, split_argv
from inspector.config import DEFAULT_PORT, DEFAULT_TIMEOUT

PY = sys.executable


@pytest.mark.parametrize("argv, ours, command", [
    (["python", "s.py", "--port", "9"], [], ["python", "s.py", "--port", "9"]),
    (["--port", "7000", "python", "s.py", "--port", "9"], ["--port", "7000"], ["python", "s.py", "--port", "9"]),
    (["--port=7000", "python"], ["--port=7000"], ["python"]),
    (["--no-open", "--", "python", "s.py"], ["--no-open"], ["python", "s.py"]),
    (["--", "--port", "9"], [], ["--port", "9"]),  # a program named --port
    (["--", "check"], [], ["check"]),
    (["--port", "9", "--", "--", "x"], ["--port", "9"], ["--", "x"]),
    (["--no-open", "node", "server.js", "--", "x"], ["--no-open"], ["node", "server.js", "--", "x"]),
    (["-e", "K=V", "python"], ["-e", "K=V"], ["python"]),
    (["--env", "K=V", "python"], ["--env", "K=V"], ["python"]),
    (["--env=K=V", "python"], ["--env=K=V"], ["python"]),
    (["-eK=V", "python"], ["-eK=V"], ["python"]),
    (["-e", "--port", "python"], ["-e", "--port"], ["python"]),  # a value option takes the next token as is
    (["--record", "out.jsonl", "--timeout", "5", "uvx", "srv"], ["--record", "out.jsonl", "--timeout", "5"],
     ["uvx", "srv"]),
    (["--probe-timeout", "2", "node", "s.js"], ["--probe-timeout", "2"], ["node", "s.js"]),
    (["--demo"], ["--demo"], []),
    ([], [], []),
    (["-"], [], ["-"]),
    (["./server", "-e", "K=V"], [], ["./server", "-e", "K=V"]),
])
def test_split_argv(argv, ours, command):
    assert split_argv(argv) == (ours, command)


def test_server_options_pass_through():
    config = parse_config(["python", "s.py", "--port", "9", "--host", "0.0.0.0", "--no-open"])
    assert config.command == ("python", "s.py", "--port", "9", "--host", "0.0.0.0", "--no-open")
    assert config.port is None and config.host == "127.0.0.1" and config.open_browser


@pytest.mark.parametrize("option", [["-e", "K=V"], ["--env", "K=V"], ["--env=K=V"], ["-eK=V"]])
def test_env_forms(option):
    assert parse_config([*option, "python", "s.py"]).env == (("K", "V"),)


def test_env_values_keep_equals_and_may_be_empty():
    config = parse_config(["-e", "A=x=y", "-e", "B=", "--env=C==", "python"])
    assert config.env == (("A", "x=y"), ("B", ""), ("C", "="))
    assert config.server_env()["A"] == "x=y"


def test_defaults_and_demo():
    config = parse_config(["python", "s.py"])
    assert (config.host, config.port, config.timeout, config.no_record, config.record_path) == (
        "127.0.0.1", None, DEFAULT_TIMEOUT, False, None)
    demo = parse_config(["--demo", "--no-open", "--port", "0"])
    assert demo.demo and demo.command[1:] == ("-m", "inspector.demo.server") and demo.port == 0


def test_probe_timeout_defaults_to_the_probe_seconds_and_reaches_every_face():
    from inspector.commands.call import parse_call
    from inspector.commands.check import parse_check
    from inspector.commands.replay import build_parser as replay_parser

    from inspector.protocol.eras import PROBE_SECONDS

    # Counted from the server's first sign of life; a server that shows none gets the whole request timeout.
    assert parse_config(["python"]).probe_timeout == PROBE_SECONDS
    assert parse_config(["--probe-timeout", "2.5", "python"]).probe_timeout == 2.5
    assert parse_call(["tools/list", "--probe-timeout", "1", "--", "srv"]).probe_timeout == 1.0
    assert parse_check(["--probe-timeout", "4", "--", "srv"]).probe_timeout == 4.0
    assert replay_parser().parse_args(["r.jsonl", "--probe-timeout", "5"]).probe_timeout == 5.0


def test_value_options_come_from_the_parser():
    from inspector.cli import VALUE_OPTIONS, build_parser

    takes_value = {name for action in build_parser()._actions if action.nargs != 0 for name in action.option_strings}
    assert VALUE_OPTIONS == takes_value
    assert {"-e", "--env", "-H", "--header", "--timeout", "--probe-timeout", "--port"} <= VALUE_OPTIONS
    assert not {"--demo", "--no-open", "--no-record", "--version", "-h"} & VALUE_OPTIONS


@pytest.mark.parametrize("host, expected", [("localhost", "127.0.0.1"), ("127.0.0.1", "127.0.0.1"), ("::1", "::1"),
                                            ("[::1]", "::1")])
def test_loopback_hosts_are_accepted(host, expected):
    assert parse_config(["--host", host, "python"]).host == expected


@pytest.mark.parametrize("argv, words", [
    ([], "no server command"),
    (["--no-open"], "no server command"),
    (["--no-open", "--"], "no server command"),
    (["--host", "0.0.0.0", "python"], "loopback"),
    (["--host", "::", "python"], "loopback"),
    (["--host", "192.168.1.1", "python"], "loopback"),
    (["--host", "10.0.0.1", "python"], "loopback"),
    (["--host", "example.com", "python"], "loopback"),
    (["--host", "localhost.evil.example", "python"], "loopback"),
    (["--host", "", "python"], "loopback"),
    (["--host", "127.0.0.2", "python"], "use 127.0.0.1, localhost or ::1"),  # the page would refuse its Host
    (["-e", "NOEQUALS", "python"], "KEY=VALUE"),
    (["-e", "=V", "python"], "KEY=VALUE"),
    (["--env="], "KEY=VALUE"),
    (["--timeout", "abc", "python"], "seconds"),
    (["--timeout", "0", "python"], "timeout"),
    (["--timeout", "-1", "python"], "timeout"),
    (["--timeout", "nan", "python"], "timeout"),
    (["--timeout", "inf", "python"], "timeout"),
    (["--probe-timeout", "0", "python"], "timeout"),
    (["--probe-timeout", "soon", "python"], "seconds"),
    (["--record", "x.jsonl", "--no-record", "python"], "--record and --no-record"),
    (["--port", "abc", "python"], "port"),
    (["--port", "70000", "python"], "port"),
    (["--port", "-1", "python"], "port"),
    (["--bogus", "python"], "--bogus"),
    (["--demo", "python", "s.py"], "--demo"),
    (["--cwd", "/definitely/not/a/dir", "python"], "--cwd"),
])
def test_parse_config_errors(argv, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        parse_config(argv)


# ------------------------------------------------------------------------------------------- subprocesses

def run_cli(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def assert_usage_exit(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mcp-inspect: ") and words in lines[0], lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    assert "token=" not in result.stdout  # it never got as far as serving


def test_exit_2_without_a_command(tmp_path):
    assert_usage_exit(run_cli(["--no-open"], tmp_path), "no server command")


def test_exit_2_for_a_command_that_does_not_exist(tmp_path):
    result = run_cli(["--no-open", "--port", "0", "--", "does-not-exist-xyz", "--flag"], tmp_path)
    assert_usage_exit(result, "does-not-exist-xyz")
    assert not (tmp_path / "recordings").exists()


def test_exit_2_for_a_file_that_is_not_executable(tmp_path):
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o000)
    try:
        result = run_cli(["--no-open", "--port", "0", str(script)], tmp_path)
    finally:
        script.chmod(0o600)
    assert_usage_exit(result, "not executable")
    assert not (tmp_path / "recordings").exists()


def test_exit_2_for_a_missing_relative_path(tmp_path):
    assert_usage_exit(run_cli(["--no-open", "--port", "0", "./nope.py"], tmp_path), "command not found")


def test_exit_2_for_a_busy_explicit_port(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli(["--no-open", "--port", str(port), *fixture_command("fake_server", "ok")], tmp_path)
    assert_usage_exit(result, f"port {port} in use")
    assert list((tmp_path / "recordings").glob("*.jsonl")) == []  # the file made for the run is removed again


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.1"])
def test_exit_2_for_a_non_loopback_host(tmp_path, host):
    assert_usage_exit(run_cli(["--no-open", "--host", host, "--demo"], tmp_path), "loopback")


def test_exit_2_for_a_subcommand_that_does_not_exist_yet(tmp_path):
    result = run_cli(["replay", "x.jsonl"], tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_version(tmp_path):
    result = run_cli(["--version"], tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"mcp-inspect {__version__}"


def test_help_mentions_the_option_order(tmp_path):
    result = run_cli(["--help"], tmp_path)
    assert result.returncode == 0 and "mcp-inspect [OPTIONS] [--] COMMAND" in result.stdout


def _bind_or_none(port: int) -> socket.socket | None:
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        return sock
    except OSError:
        sock.close()
        return None


def test_default_port_is_the_next_free_one_from_6280(tmp_path):
    held = _bind_or_none(DEFAULT_PORT)  # None: something else holds it, which is just as busy
    probes = [_bind_or_none(port) for port in range(DEFAULT_PORT + 1, DEFAULT_PORT + 11)]
    free = [DEFAULT_PORT + 1 + i for i, sock in enumerate(probes) if sock]
    for sock in probes:
        if sock:
            sock.close()
    try:
        if not free:
            pytest.skip(f"ports {DEFAULT_PORT}..{DEFAULT_PORT + 10} are all taken")
        proc = subprocess.Popen([PY, "-m", "inspector.cli", "--no-open", "--no-record", "--demo"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            line: list[bytes] = []
            reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
            reader.start()
            reader.join(20)
            text = line[0].decode() if line else ""
            match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=[A-Za-z0-9_-]{43}\n", text)
            assert match, (text, proc.poll())
            port = int(match.group(1))
            assert DEFAULT_PORT < port <= free[-1] + 100
            if free[0] == DEFAULT_PORT + 1:  # nobody raced us for 6281: it must be the one chosen
                assert port == DEFAULT_PORT + 1 or _bind_or_none(DEFAULT_PORT + 1) is None
        finally:
            proc.terminate()
            proc.wait(15)
    finally:
        if held:
            held.close()
