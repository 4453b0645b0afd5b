"""Reading other clients' MCP config files (Claude Desktop, Cursor, VS Code) and writing our server as an entry."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.client_configs import (
    ConfigError, ServerEntry, load_config_file, parse_config, parse_env_file, pick, server_entry_snippet,
)


def write(path: Path, text: str) -> Path:
    """Write `text` (dedented) to `path`, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ---------------------------------------------------------------- Claude Desktop


def test_claude_desktop_stdio_entries(tmp_path):
    config = write(tmp_path / "claude_desktop_config.json", """\
        {
          "mcpServers": {
            "Filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "weather": {"type": "stdio", "command": "./bin/weather", "args": ["--units", "metric"],
                        "env": {"WEATHER_KEY": "abc123"}, "cwd": "work", "someFutureKey": 1}
          },
          "globalShortcut": "Ctrl+Space"
        }
    """)
    entries = load_config_file(str(config))
    assert list(entries) == ["Filesystem", "weather"]  # file order, original spelling
    fs = entries["Filesystem"]
    assert fs.transport == "stdio"
    assert fs.command == ("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")  # bare command stays bare
    assert fs.startable and fs.problems == ()
    weather = entries["weather"]
    assert weather.command == (str(tmp_path / "bin" / "weather"), "--units", "metric")
    assert weather.env == (("WEATHER_KEY", "abc123"),)
    assert weather.cwd == str(tmp_path / "work")
    assert weather.startable


# ---------------------------------------------------------------- Cursor


def test_cursor_stdio_url_headers_and_sse(tmp_path):
    config = write(tmp_path / "proj" / ".cursor" / "mcp.json", """\
        {
          "mcpServers": {
            "local": {"command": "python", "args": ["${workspaceFolder}/server.py"],
                      "env": {"TOKEN": "${env:MY_TOKEN}"}},
            "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:MY_TOKEN}"}},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:8000/sse"},
            "explicit": {"type": "streamable-http", "url": "https://example.com/mcp"},
            "old": {"command": "node", "args": ["old.js"], "disabled": true}
          }
        }
    """)
    entries = parse_config(config.read_text(), path=str(config), environ={"MY_TOKEN": "t0k"}, home="/home/u")
    project = str(tmp_path / "proj")  # .cursor/ sits in the workspace, like .vscode/
    assert entries["local"].command == ("python", f"{project}/server.py")
    assert entries["local"].env == (("TOKEN", "t0k"),)
    remote = entries["remote"]
    # no type: reached as --url is, Streamable HTTP falling back to SSE (headless-http.md finding 9)
    assert (remote.transport, remote.url) == ("auto", "https://mcp.example.com/mcp")
    assert remote.headers == (("Authorization", "Bearer t0k"),)
    assert remote.command == () and remote.startable
    assert (entries["legacy"].transport, entries["legacy"].url) == ("sse", "http://127.0.0.1:8000/sse")
    assert entries["explicit"].transport == "streamable-http"
    old = entries["old"]
    assert old.notes == ("disabled in the config file",)
    assert old.startable  # a note, not a problem: asking for it by name is deliberate


# ---------------------------------------------------------------- VS Code


VSCODE = """\
    // Workspace MCP servers
    {
      "inputs": [
        {"type": "promptString", "id": "api-key", "description": "Perplexity API Key", "password": true,},
      ],
      "servers": {
        /* asks for a key */
        "Perplexity": {
          "type": "stdio",
          "command": "npx",
          "args": ["-y", "server-perplexity-ask"],
          "env": {"PERPLEXITY_API_KEY": "${input:api-key}", "REGION": "${env:MCP_REGION}",},
        },
        "local": {
          "type": "stdio",
          "command": "${workspaceFolder}${pathSeparator}.venv/bin/python",
          "args": ["server.py", "--data", "${userHome}/data", "--token", "${env:UNSET_TOKEN}"],
          "envFile": "${workspaceFolder}/.env",
          "env": {"DEBUG": "1", "PORT": 8080},
          "cwd": "${workspaceFolder}/src",
        },
        "broken-env": {"type": "stdio", "command": "python", "envFile": "${workspaceFolder}/missing.env"},
        "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                   "headers": {"Authorization": "Bearer ${input:gh-token}"}},
        "events": {"type": "sse", "url": "http://localhost:3000/sse"},
      },
    }
"""


@pytest.fixture()
def vscode(tmp_path, monkeypatch):
    """A workspace with .vscode/mcp.json and a .env, loaded with a known environment."""
    monkeypatch.setenv("MCP_REGION", "eu")
    monkeypatch.delenv("UNSET_TOKEN", raising=False)
    workspace = tmp_path / "ws"
    config = write(workspace / ".vscode" / "mcp.json", VSCODE)
    write(workspace / ".env", """\
        # secrets for local dev
        export SECRET='s3 cr#et'
        PLAIN=value # trailing comment
        QUOTED="a\\nb"
        DEBUG=from-file
        not a pair
    """)
    return workspace, load_config_file(str(config))


def test_vscode_input_is_reported_and_env_resolved(vscode):
    _, entries = vscode
    assert list(entries) == ["Perplexity", "local", "broken-env", "github", "events"]
    perplexity = entries["Perplexity"]
    assert perplexity.command == ("npx", "-y", "server-perplexity-ask")
    assert dict(perplexity.env)["REGION"] == "eu"  # ${env:...} resolved from os.environ
    assert not perplexity.startable
    [problem] = perplexity.problems
    assert problem.startswith("env PERPLEXITY_API_KEY uses ${input:api-key}, which mcp-inspect cannot ask for")
    assert "Perplexity API Key" in problem and problem.endswith("set it with -e PERPLEXITY_API_KEY=...")
    assert perplexity.unresolved_env == ("PERPLEXITY_API_KEY",)


def test_with_env_fixes_what_minus_e_supplies(vscode):
    _, entries = vscode
    fixed = entries["Perplexity"].with_env({"PERPLEXITY_API_KEY": "pk-1"})
    assert fixed.startable and fixed.unresolved_env == ()
    assert dict(fixed.env) == {"PERPLEXITY_API_KEY": "pk-1", "REGION": "eu"}


def test_vscode_workspace_folder_env_file_and_unset_env(vscode):
    workspace, entries = vscode
    local = entries["local"]
    home = str(Path.home())
    assert local.command == (f"{workspace}/.venv/bin/python", "server.py", "--data", f"{home}/data",
                             "--token", "${env:UNSET_TOKEN}")
    assert local.cwd == f"{workspace}/src"
    assert local.env_file == f"{workspace}/.env"
    env = dict(local.env)
    assert env["SECRET"] == "s3 cr#et" and env["PLAIN"] == "value" and env["QUOTED"] == "a\nb"
    assert env["DEBUG"] == "1"  # the entry's own env wins over the envFile
    assert env["PORT"] == "8080"  # VS Code allows numbers
    assert local.problems == (
        "args[4] uses ${env:UNSET_TOKEN}, which is not set in mcp-inspect's environment (export UNSET_TOKEN first)",)
    assert any("line 6 is not KEY=VALUE" in note for note in local.notes)


def test_vscode_missing_env_file_is_reported(vscode):
    workspace, entries = vscode
    broken = entries["broken-env"]
    assert not broken.startable
    [problem] = broken.problems
    assert problem.startswith(f"envFile {workspace}/missing.env cannot be read: ")
    assert "No such file" in problem


def test_vscode_http_and_sse(vscode):
    _, entries = vscode
    github = entries["github"]
    assert (github.transport, github.url) == ("streamable-http", "https://api.githubcopilot.com/mcp/")
    assert github.problems == ("header Authorization uses ${input:gh-token}, which mcp-inspect cannot ask for; "
                               "set it with -H 'Authorization: ...'",)
    assert entries["events"].transport == "sse" and entries["events"].startable


def test_vscode_settings_json_form_and_workspace_without_path():
    text = '{"mcp": {"servers": {"s": {"command": "python", "args": ["${workspaceFolder}/x.py"]}}}}'
    [entry] = parse_config(text, environ={}).values()
    assert entry.problems == ("args[0] uses ${workspaceFolder}, which needs the config file's path",)


def test_claude_code_bare_variables_with_defaults():
    text = '{"mcpServers": {"s": {"command": "srv", "args": ["${HOST:-localhost}", "${PORT}", "${MISSING}"]}}}'
    [entry] = parse_config(text, environ={"PORT": "9"}).values()
    assert entry.command == ("srv", "localhost", "9", "${MISSING}")
    assert len(entry.problems) == 1 and "MISSING" in entry.problems[0]


# ---------------------------------------------------------------- entries with problems


@pytest.mark.parametrize("raw, problem", [
    ({"command": "python", "url": "https://x"}, "has both command and url"),
    ({}, "has neither command nor url"),
    ({"type": "stdio", "args": ["x"]}, "missing command"),
    ({"type": "sse"}, "type sse needs a url, and there is none"),
    ({"url": "ftp://example.com/mcp"}, "url is not http(s): ftp://example.com/mcp"),
    ({"type": "websocket", "url": "wss://x"}, "type 'websocket' is not one mcp-inspect knows (stdio, http, sse)"),
    ({"command": "python", "args": "server.py"}, "args is a string, not a list"),
    ({"command": "python", "env": {"A": "${config:editor.tabSize}"}},
     "env A uses ${config:editor.tabSize}, which mcp-inspect does not know; set it with -e A=..."),
    ("npx server", "is a string, not an object with command or url"),
])
def test_problems_are_words(raw, problem):
    entry = parse_config(json.dumps({"mcpServers": {"x": raw}}), environ={})["x"]
    assert problem in entry.problems
    assert not entry.startable


# ---------------------------------------------------------------- pick


def test_pick_by_name_and_errors_list_names():
    entries = parse_config('{"servers": {"Alpha": {"command": "a"}, "beta": {"command": "b"}}}', environ={})
    assert pick(entries, "Alpha").command == ("a",)
    assert pick(entries, "alpha").name == "Alpha"  # one case-insensitive match is good enough
    with pytest.raises(ConfigError, match=r"no server named 'gamma' in the config file; it lists: Alpha, beta"):
        pick(entries, "gamma")
    with pytest.raises(ConfigError, match=r"lists 2 servers; pick one with --server NAME: Alpha, beta"):
        pick(entries, None)
    only = {"solo": ServerEntry("solo", "stdio", command=("s",))}
    assert pick(only, None).name == "solo"
    with pytest.raises(ConfigError, match="lists no servers"):
        pick({}, None)


# ---------------------------------------------------------------- unusable files


def test_malformed_file_gives_line_and_column(tmp_path):
    config = write(tmp_path / "mcp.json", '{\n  "servers": {\n    "a": {"command": "x",, }\n  }\n}\n')
    with pytest.raises(ConfigError) as info:
        load_config_file(str(config))
    message = str(info.value)
    assert message.startswith(f"{config}: not valid JSON or JSON5: line 3, column ")
    assert "\n" not in message


def test_file_with_neither_map(tmp_path):
    config = write(tmp_path / "settings.json", '{"editor.fontSize": 14}')
    with pytest.raises(ConfigError, match=r'has neither an "mcpServers" nor a "servers" map'):
        load_config_file(str(config))


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("[1, 2]", "the top level is not an object"),
    ('{"mcpServers": []}', '"mcpServers" is not an object of named servers'),
])
def test_other_unusable_texts(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(text, path="c.json")


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config_file(str(tmp_path / "nope.json"))
    with pytest.raises(ConfigError, match="is a folder"):
        load_config_file(str(tmp_path))


def test_env_file_parsing():
    values, notes = parse_env_file('A=1\n\n# c\nexport B = "x \\"y\\""\nC=\'$HOME\'\n=nokey\nD=\n')
    assert values == {"A": "1", "B": 'x "y"', "C": "$HOME", "D": ""}
    assert notes == ["line 6 is not KEY=VALUE and was skipped"]


def test_env_file_follows_dotenv_syntax():
    # VS Code's envFile is dotenv syntax, read with python-dotenv: quoted values may span lines, a bare KEY has no
    # value (left out, with a note), and ${VAR} stays as written (VS Code does not expand it either).
    values, notes = parse_env_file('\ufeffM="one\ntwo"\nBARE\nX=${HOME}/a\nT="a\\tb"\n')
    assert values == {"M": "one\ntwo", "X": "${HOME}/a", "T": "a\tb"}
    assert notes == ["line 3 gives BARE no value, so it was left out"]


# ---------------------------------------------------------------- snippets


@pytest.mark.parametrize("flavour", ["claude", "cursor", "vscode"])
def test_stdio_snippet_round_trips_without_secrets(flavour):
    snippet = server_entry_snippet(name="my-server", command=["python", "/srv/server.py", "--verbose"],
                                   env_keys=["API_KEY", "REGION"], cwd="/srv", flavour=flavour)
    assert snippet.startswith("{\n  ")  # 2-space indentation
    document = json.loads(snippet)  # plain JSON, not only JSON5
    assert next(iter(document)) == ("servers" if flavour == "vscode" else "mcpServers")
    entry = parse_config(snippet, environ={"API_KEY": "real-secret"})["my-server"]
    assert entry.command == ("python", "/srv/server.py", "--verbose")
    assert entry.cwd == "/srv"
    assert "real-secret" not in snippet
    assert set(entry.unresolved_env) == {"API_KEY", "REGION"}  # placeholders block until -e gives values
    if flavour == "vscode":
        assert document["servers"]["my-server"]["type"] == "stdio"
        assert dict(entry.env)["API_KEY"].startswith("${input:")
        assert all(item["password"] is True for item in document["inputs"])
        assert len(document["inputs"]) == 2
    else:
        assert dict(entry.env) == {"API_KEY": "<set API_KEY here>", "REGION": "<set REGION here>"}
    assert entry.with_env({"API_KEY": "k", "REGION": "r"}).startable


@pytest.mark.parametrize("flavour", ["claude", "cursor", "vscode"])
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_url_snippet_round_trips_without_secrets(flavour, transport):
    snippet = server_entry_snippet(name="Remote ✓", url="https://example.com/mcp", header_names=["Authorization"],
                                   transport=transport, flavour=flavour)
    assert "✓" in snippet  # ensure_ascii=False
    entry = parse_config(snippet, environ={})["Remote ✓"]
    # claude/cursor write no type for Streamable HTTP: read back as auto, which tries Streamable HTTP first
    read_as = "auto" if transport == "streamable-http" and flavour != "vscode" else transport
    assert (entry.transport, entry.url, entry.command) == (read_as, "https://example.com/mcp", ())
    [(header, value)] = entry.headers
    assert header == "Authorization"
    assert value.startswith("${input:") if flavour == "vscode" else value == "<set Authorization here>"
    assert not entry.startable and len(entry.problems) == 1
    if flavour == "vscode":
        assert json.loads(snippet)["servers"]["Remote ✓"]["type"] == ("http" if transport != "sse" else "sse")


def test_snippet_rejects_bad_arguments():
    with pytest.raises(ValueError):
        server_entry_snippet(name="x", command=["a"], url="https://x", flavour="claude")
    with pytest.raises(ValueError):
        server_entry_snippet(name="x", flavour="claude")
    with pytest.raises(ValueError):
        server_entry_snippet(name="x", command=["a"], flavour="zed")


def test_snippet_input_ids_do_not_clash():
    snippet = server_entry_snippet(name="a}b", command=["x"], env_keys=["K K", "K-K"], flavour="vscode")
    entry = parse_config(snippet, environ={})["a}b"]
    ids = [item["id"] for item in json.loads(snippet)["inputs"]]
    assert len(set(ids)) == 2 and all("}" not in i for i in ids)
    assert set(entry.unresolved_env) == {"K K", "K-K"}


# None of the formats can escape "${", so argv text holding it would be read as a variable: left out on purpose.
_ARG = st.text().filter(lambda s: "${" not in s)


@settings(max_examples=200, deadline=None)
@given(name=st.text(), argv=st.lists(_ARG, min_size=1).filter(lambda a: a[0] != ""),
       flavour=st.sampled_from(["claude", "cursor", "vscode"]))
def test_any_name_and_argv_round_trip(name, argv, flavour):
    snippet = server_entry_snippet(name=name, command=argv, flavour=flavour)
    entries = parse_config(snippet, environ={}, home=os.sep)
    assert list(entries) == [name]
    assert entries[name].command == tuple(argv)
    assert entries[name].startable
