"""`mcp-inspect export`: a shareable copy with every sentinel secret gone, raw, base64- or URL-encoded."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from conftest import ROOT, read_records
from factories import write_deep_recording
from inspector.protocol.redact import REDACTED, Finding, Rules, base64_cores, redact_argv, redact_text, redact_value

PY = sys.executable


def mcp(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def encodings(secret: str) -> dict[str, str]:
    """Every form of the secret that must not survive an export."""
    raw = secret.encode()
    return {"raw": secret, "base64": base64.b64encode(raw).decode(),
            "base64url": base64.urlsafe_b64encode(raw).decode(),
            "base64 unpadded": base64.b64encode(raw).decode().rstrip("="),
            "url": quote(secret, safe=""), "url+": quote_plus(secret, safe="")}


def assert_gone(text: str, secret: str) -> None:
    for name, form in encodings(secret).items():
        assert form not in text, f"the {name} form of the secret survived"
    for core in base64_cores(secret.encode()):
        assert core not in text, "a base64 core of the secret survived"


def write_recording(path: Path, header: dict, records: list[dict]) -> Path:
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-01-01T00:00:00.000Z",
            "inspector": "0.1.0", "protocol": "auto", **header}
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [head, *records]))
    return path


def message(seq: int, direction: str, msg: dict) -> dict:
    return {"seq": seq, "t": float(seq), "kind": "message", "dir": direction, "msg": msg}


def result_text(seq: int, text: str) -> dict:
    return message(seq, "from_server", {"jsonrpc": "2.0", "id": seq, "result": {"content": [{"type": "text",
                                                                                             "text": text}]}})


@pytest.fixture
def sentinel() -> str:
    return f"S3CR3T+{uuid.uuid4()}/x"  # + and / so the URL-encoded form differs from the raw one


def test_a_sentinel_secret_in_every_slot_is_gone_from_the_export(tmp_path, sentinel):
    touched = tmp_path / "TOUCHED"
    header = {"target": {"transport": "stdio", "command": ["touch", str(touched), "--api-token", sentinel],
                         "cwd": str(tmp_path), "headers": {"Authorization": f"Bearer {sentinel}"}},
              "env": {"API_KEY": sentinel, "OTHER": "[REDACTED]"}}
    b64_in_json = base64.b64encode(json.dumps({"note": "x", "session_secret": sentinel}).encode()).decode()
    records = [
        {"seq": 1, "t": 1.0, "kind": "event", "event": "spawn", "detail": {"pid": 1}},
        message(2, "to_server", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "login", "arguments": {"user": "ada", "Session_Secret": sentinel}}}),
        result_text(3, f"curl -H 'Authorization: Bearer {sentinel}' https://api.example"),
        result_text(4, f"data:text/plain;base64,{base64.b64encode(sentinel.encode()).decode()} and {b64_in_json}"),
        result_text(5, f"https://cb.example/?next=%2Fhome&auth={quote(sentinel, safe='')}&q={quote_plus(sentinel)}"),
        {"seq": 6, "t": 6.0, "kind": "stderr", "text": f"debug: headers={{'X-Api-Key': '{sentinel}'}}"},
        {"seq": 7, "t": 7.0, "kind": "invalid", "dir": "from_server", "raw": f"leak {sentinel}", "error": "not JSON"},
        {"seq": 8, "t": 8.0, "kind": "event", "event": "session-end", "detail": {}},
    ]
    source = write_recording(tmp_path / "in.jsonl", header, records)
    out = tmp_path / "out.jsonl"
    result = mcp(["export", str(source), "-o", str(out), "--redact-key", "session_secret"], tmp_path)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert_gone(text, sentinel)
    assert_gone(result.stderr, sentinel)  # the list of what was masked never shows the secret
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert not touched.exists()  # export never runs the recorded command
    lines = read_records(out)
    assert lines[0]["env"] == {"API_KEY": REDACTED, "OTHER": REDACTED}
    assert lines[0]["target"]["command"][:3] == ["touch", str(touched), "--api-token"]
    assert lines[2]["msg"]["params"]["arguments"] == {"user": "ada", "Session_Secret": REDACTED}
    assert "https://api.example" in lines[3]["msg"]["result"]["content"][0]["text"]  # only the secret goes
    assert [r["seq"] for r in lines[1:]] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "masked key Session_Secret: record 2 $.msg.params.arguments.Session_Secret" in result.stderr
    assert "record 3 $.msg.result.content[0].text" in result.stderr and "header $.env.API_KEY" in result.stderr


def test_the_builtin_scan_finds_secret_shapes_nobody_named(tmp_path):
    secrets = {
        "openai": "sk-proj-" + "Ab3xY9" * 5,
        "github": "ghp_" + "a1B2c3D4e5" * 4,
        "slack": "xoxb-1234567890-abcdefGHIJ",
        "aws": "AKIA" + "ABCDEFGHIJ234567",
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "token=": "f3A9kQ2xZ7pL0mW8vB4n",
        "launch": "Zq7-launch-token-" + "x9Y8" * 8,
    }
    hidden = "Authorization: Bearer " + "T0k3n" * 6
    records = [result_text(1, "keys: " + " ".join(v if k != "token=" else f"?token={v}&page=2"
                                                  for k, v in secrets.items() if k != "launch")),
               result_text(2, "b64: " + base64.b64encode(hidden.encode()).decode()),
               result_text(3, "url: " + quote(hidden)),
               {"seq": 4, "t": 4.0, "kind": "stderr", "text": f"GET /?token={secrets['launch']}"}]
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}, "env": {}}, records)
    out = tmp_path / "out.jsonl"
    result = mcp(["export", str(source), "-o", str(out), "--also-redact", secrets["launch"]], tmp_path)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    for value in [*secrets.values(), "T0k3n" * 6]:
        assert_gone(text, value)
    for kind in ("openai-style-key", "github-token", "slack-token", "aws-access-key-id", "jwt", "token= value",
                 "bearer-token (base64)", "bearer-token (url-encoded)", "literal"):
        assert f"masked {kind}" in result.stderr, kind
    assert "&page=2" in text  # the rest of the query string stays readable


def test_regex_rule_and_selection(tmp_path):
    records = [result_text(seq, f"order ORD-{seq:04d} shipped") for seq in range(1, 10)]
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}}, records)
    out = tmp_path / "out.jsonl"
    result = mcp(["export", str(source), "-o", str(out), "--seq", "3,5-6", "--redact-regex", r"ORD-\d{4}"], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = read_records(out)
    assert [r["seq"] for r in lines[1:]] == [3, 5, 6]
    assert all(r["msg"]["result"]["content"][0]["text"] == "order [REDACTED] shipped" for r in lines[1:])


@pytest.mark.parametrize("args, words", [
    (["--seq", "5-3"], "backwards"),
    (["--seq", "x"], "--seq"),
    (["--redact-regex", "("], "--redact-regex"),
    ([], "-o/--output"),
])
def test_export_usage_errors(tmp_path, args, words):
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}}, [result_text(1, "x")])
    output = ["-o", str(tmp_path / "out.jsonl")] if args else []
    result = mcp(["export", str(source), *output, *args], tmp_path)
    assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_export_never_overwrites(tmp_path):
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}}, [result_text(1, "x")])
    existing = tmp_path / "out.jsonl"
    existing.write_text("keep me\n")
    result = mcp(["export", str(source), "-o", str(existing)], tmp_path)
    assert result.returncode == 2 and "already exists" in result.stderr
    assert existing.read_text() == "keep me\n"


def test_a_report_to_an_existing_file_is_refused_before_it_is_made(tmp_path, monkeypatch, capsys):
    """The output is created (exclusively) before the report is rendered: a big recording's report is seconds of
    work, not to be thrown away for a name that is taken."""
    from inspector.commands import export
    from inspector.recording.reports import formats

    def never(*_args):
        raise AssertionError("rendered although the output exists")
    monkeypatch.setitem(formats.REPORTS, "html", formats.Report(never, ".html", "text/html"))
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}}, [result_text(1, "x")])
    existing = tmp_path / "out.html"
    existing.write_text("keep me\n")
    assert export.export_main([str(source), "-o", str(existing), "--format", "html"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert existing.read_text() == "keep me\n"


# -- redact (pure) -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "plain words, a sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 and ids 12345",
    "progressToken: 7, key: name, the token=abc is short",
    "Bearer of bad news",
    "https://example.com/a%20b?x=1",
    "VGhpcyBpcyBqdXN0IGEgbm9ybWFsIHNlbnRlbmNlLg==",  # base64 of an ordinary sentence
])
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text, Rules.build()) == (text, [])


def test_redact_value_keys_are_case_insensitive_and_anywhere():
    rules = Rules.build(keys=["Pin"])
    value = {"a": [{"PIN": 1234, "x": {"pin": {"nested": True}}}], "Authorization": "Basic abc", "b": None}
    masked, findings = redact_value(value, rules)
    assert masked == {"a": [{"PIN": REDACTED, "x": {"pin": REDACTED}}], "Authorization": REDACTED, "b": None}
    assert [f.path for f in findings] == ["$.a[0].PIN", "$.a[0].x.pin", "$.Authorization"]
    assert value["a"][0]["PIN"] == 1234  # the input is not touched


def test_a_literal_is_found_inside_any_base64_alignment():
    secret = "S3CR3T-literal-value"
    rules = Rules.build(literals=[secret])
    for prefix in ("", "a", "ab", "abc"):
        blob = base64.b64encode(f'{prefix}{{"k": "{secret}"}} trailing'.encode()).decode()
        for text in (f"x {blob} y", f"glued{blob}"):  # glued: only the alignment-independent cores can find it
            masked, findings = redact_value({"t": text}, rules)
            assert REDACTED in masked["t"] and findings == [Finding("literal (base64)", "$.t")]
            assert not any(core in masked["t"] for core in base64_cores(secret.encode()))


def test_redact_argv():
    argv = ["srv", "--api-key", "k1", "--token=t1", "--port", "9", "--auth-header", "-x", "--verbose"]
    assert redact_argv(argv) == (["srv", "--api-key", REDACTED, f"--token={REDACTED}", "--port", "9",
                                  "--auth-header", "-x", "--verbose"], [2, 3])


def test_a_too_deeply_nested_line_is_a_warning_and_the_rest_is_exported(tmp_path):
    source = write_deep_recording(tmp_path / "deep.jsonl")
    result = mcp(["export", str(source), "-o", str(tmp_path / "out.jsonl")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: line 3: not read: nested more than" in result.stderr
    assert "warning: line 4: not read: nested more than" in result.stderr
    assert "Traceback" not in result.stderr and "exported 2 records" in result.stderr
    assert [r.get("seq") for r in read_records(tmp_path / "out.jsonl")] == [None, 1, 3]
