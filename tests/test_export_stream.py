"""The streaming export: lines the Screen clears are copied as read (never decoded for masking), every other line
is masked as before, and the file is read with the one reader, line cap included."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from urllib.parse import quote

import pytest

from conftest import ROOT
from test_export import message, mcp, result_text, write_recording
from inspector.protocol.records import from_dict
from inspector.protocol.redact import Rules, Screen, redact_value, secrets_under_keys
from inspector.recording.export import Masking

SECRET = "hunter2-" + "Qx7" * 6

# Values that carry a secret in some form, each one a different way in: a secret key, each built-in shape, a
# key=value, a literal raw / base64 / URL-encoded, an escaped or non-ASCII string, an event's --token option.
SECRETS = [
    {"params": {"arguments": {"Password": "ada-lovelace"}}},
    {"text": "Authorization: Bearer abcdefgh12345678"},
    {"text": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
    {"text": "key sk-proj-" + "Ab3xY9" * 5},
    {"text": "ghp_" + "a1B2c3D4e5" * 4},
    {"text": "aws AKIA" + "ABCDEFGHIJ234567"},
    {"text": "GET /?Token=f3A9kQ2xZ7pL0mW8vB4n&page=2"},
    {"text": f"literal {SECRET} in text"},
    {"text": "b64 " + base64.b64encode(f"Authorization: Bearer {'T0k3n' * 6}".encode()).decode()},
    {"text": "b64 of a literal " + base64.b64encode(SECRET.encode()).decode()},
    {"text": "url " + quote(f"Bearer {'T0k3n' * 6}")},
    {"text": "escaped \u00e9 Bearer abcdefgh12345678"},
    {"detail": {"command": ["srv", "--api-token", "abc123456"]}, "event": "restart", "kind": "event"},
]
ORDINARY = [
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "flood 7"}},
    {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "flooded 100000 lines, all fine"}]}},
    {"seq": 4, "t": 1.5, "kind": "stderr", "text": "listening on stdio; ready"},
]


@pytest.mark.parametrize("compact", [True, False])
def test_the_screen_suspects_every_line_that_masking_would_change(compact):
    rules = Rules.build(literals=[SECRET])
    screen = Screen(rules)
    separators = (",", ":") if compact else (", ", ": ")
    for value in SECRETS:
        line = json.dumps(value, separators=separators).encode()
        masked, found = redact_value(value, rules)
        assert found or secrets_under_keys(value, rules) or value.get("kind") == "event", value
        assert screen.suspect(line), f"cleared a line holding a secret: {line!r}"
    for value in ORDINARY:  # the common case stays cheap: nothing here can be masked, and the Screen knows it
        line = json.dumps(value, separators=separators).encode()
        assert redact_value(value, rules) == (value, [])
        assert not screen.suspect(line), line


def test_with_a_user_regex_every_line_is_suspect():
    screen = Screen(Rules.build(regexes=[r"^flood"]))
    assert screen.suspect(json.dumps(ORDINARY[0]).encode())


def test_export_copies_clean_lines_byte_for_byte_and_masks_the_others(tmp_path):
    records = [result_text(1, "plain words"), result_text(2, "Authorization: Bearer abcdefgh12345678"),
               message(3, "to_server", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})]
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}, "env": {}}, records)
    # An unusual but valid spelling of a clean line: an export is a copy, so it keeps the bytes as they were.
    lines = source.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"seq": 1, ', b'"seq":1 ,  ')
    source.write_bytes(b"".join(lines))
    out = tmp_path / "out.jsonl"
    result = mcp(["export", str(source), "-o", str(out)], tmp_path)
    assert result.returncode == 0, result.stderr
    exported = out.read_bytes().splitlines(keepends=True)
    assert exported[1] == lines[1] and exported[3] == lines[3]
    assert b"abcdefgh12345678" not in exported[2] and json.loads(exported[2])["seq"] == 2
    assert "masked bearer-token: record 2" in result.stderr and "exported 3 records" in result.stderr


def test_export_reports_a_line_over_the_cap_and_exports_the_rest(tmp_path):
    records = [result_text(1, "short"), result_text(2, "x" * 5000), result_text(3, "short too")]
    source = write_recording(tmp_path / "in.jsonl", {"target": {"command": ["srv"]}, "env": {}}, records)
    sitecustomize = tmp_path / "cap" / "sitecustomize.py"  # a small cap in the child, so the file stays small
    sitecustomize.parent.mkdir()
    sitecustomize.write_text("import inspector.recording.format as f\nf.MAX_LINE_BYTES = 4096\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(sitecustomize.parent), str(ROOT)])}
    for fmt in ("jsonl", "md", "html"):
        out = tmp_path / f"out.{fmt}"
        result = subprocess.run([sys.executable, "-m", "inspector.cli", "export", str(source), "-o", str(out),
                                 "--format", fmt], cwd=tmp_path, capture_output=True, text=True, timeout=90, env=env)
        assert result.returncode == 0, result.stderr
        assert "warning: line 3: longer than 4096 bytes, skipped" in result.stderr, fmt
        assert "x" * 5000 not in out.read_text()
    assert [json.loads(line)["seq"] for line in out.with_suffix(".jsonl").read_text().splitlines()[1:]] == [1, 3]


def test_a_line_the_first_pass_did_not_see_is_screened_in_the_second():
    """A recording still being written grows between export's two passes: a verdict is only reused for a line the
    first pass saw whole."""
    masking = Masking(Rules.build())
    clean = json.dumps(message(1, "from_server", ORDINARY[0])).encode()
    masking.learn_line(2, clean)
    masking.learned_all()
    assert masking.record(from_dict(json.loads(clean)), clean, 2) == (None, [])
    leaking = result_text(2, "Authorization: Bearer abcdefgh12345678")
    masked, found = masking.record(from_dict(leaking), json.dumps(leaking).encode(), 3)
    assert masked is not None and "abcdefgh12345678" not in json.dumps(masked) and found


@pytest.mark.parametrize("literals", [[SECRET], []])
@pytest.mark.parametrize("repeats", [1, 8])
def test_the_screen_finds_in_one_scan_the_lines_it_suspects_one_by_one(literals, repeats):
    """Export's first pass screens a run of whole lines at once; it must pick out exactly the lines `suspect` picks
    (also when the lines repeat with other numbers, as a flood's do, and each distinct shape is searched once)."""
    rules = Rules.build(literals=literals)
    screen = Screen(rules)
    values = [*SECRETS, *ORDINARY, {"text": "ordinary words and a run notifications/message-ok"},
              {"text": "a run that is base64 of text: " + base64.b64encode(b"plain text, nothing secret").decode()},
              {"text": "padded " + base64.b64encode(b"plain text!").decode() + "== and more"}]
    lines = [json.dumps(value, separators=separators, ensure_ascii=ascii).encode()
             for separators in ((",", ":"), (", ", ": ")) for ascii in (True, False) for value in values]
    lines += [b"", b"not json at all", "caf\u00e9".encode()]
    lines = [line.replace(b"7", str(copy).encode()) for copy in range(repeats) for line in lines]
    expected = [index for index, line in enumerate(lines) if screen.suspect(line)]
    assert 0 < len(expected) < len(lines)
    assert screen.suspect_lines(b"\n".join(lines)) == expected


@pytest.mark.parametrize("not_utf8", [b"", b"\xff\xfe"])
def test_export_copies_skips_and_reports_lines_as_the_one_reader_does(tmp_path, not_utf8):
    """The export checks most lines without the reader (no Record made); what it keeps, copies and reports must
    still be exactly what read_recording keeps and reports (with a line that is not UTF-8, lines near it go through
    the reader)."""
    from inspector.recording.files import read_recording
    good = [json.dumps(message(seq, "from_server", ORDINARY[0])).encode() for seq in range(1, 8)]
    lines = [json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1, "env": {},
                         "target": {"command": ["srv"]}}).encode(),
             good[0], b"", good[1], b"{not json", good[1], b'{"seq": 9, "kind": "message"}', good[2] + b"  ",
             good[3] + b" {}", not_utf8 + good[4], good[5].replace(b'"t": 6.0', b'"t": 1e999'),
             json.dumps(message(8, "from_server", {"jsonrpc": "2.0", "method": "caf\u00e9"}),
                        ensure_ascii=False).encode(),
             b"[" * 200 + b"]" * 200, good[6].replace(b'"seq": 7', b'"seq": 9'),
             json.dumps(message(12, "from_server", ORDINARY[0]))[:-5].encode()]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lines))  # the last line has no newline: cut off
    loaded = read_recording(source)
    out = tmp_path / "out.jsonl"
    result = mcp(["export", str(source), "-o", str(out)], tmp_path)
    assert result.returncode == 0, result.stderr
    warnings = [line.removeprefix("mcp-inspect: warning: ") for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == loaded.problems and len(warnings) == 6 + bool(not_utf8), result.stderr
    exported = out.read_bytes().splitlines()[1:]
    kept = [1, 2, 3, *([] if not_utf8 else [5]), 6, 8, 9]
    assert [json.loads(line)["seq"] for line in exported] == [r.seq for r in loaded.records] == kept
    assert exported[:3] == [good[0], good[1], good[2] + b"  "] and exported[-1] == lines[-2]


# -- many literals (each value under a --redact-key is one): one trie pattern instead of a search per literal --------

# Literals that overlap one another in the texts below ("data-1234" within "data-12345", "cdefgh" after "abcd"), in
# every form literal_variants gives (raw, URL-encoded, base64): the trie's spans must cover what a find per literal
# covers, and name it alike.
OVERLAPPING = ["abcd-secret", "secret-efgh", "data-1234", "data-12345", "a b&c=d+e", "zz" * 9]
MANY = OVERLAPPING + [f"learned-value-{n:04d}" for n in range(40)]
TEXTS = [
    "abcd-secret-efgh and data-12345 then data-1234",
    "xx abcd-secret-efgh-secret-efgh data-123456 learned-value-0007learned-value-0008",
    "url " + quote("a b&c=d+e") + " b64 " + base64.b64encode(b"abcd-secret-efgh").decode() + " zz" * 20,
    "nothing here but data-12 and learned-value-99999 are near misses",
    "b64 of one " + base64.b64encode(b"prefix learned-value-0031 suffix").decode(),
]


def test_many_literals_are_masked_as_a_search_per_literal_masks_them(monkeypatch):
    from inspector.protocol import redact

    rules = Rules.build(literals=MANY)
    assert len(rules.variants()) > redact.FIND_WORDS
    trie = [redact.redact_text(text, rules) for text in TEXTS]
    monkeypatch.setattr(redact, "FIND_WORDS", 10 ** 6)  # every literal searched for with str.find
    one_by_one = [redact.redact_text(text, Rules.build(literals=MANY)) for text in TEXTS]
    assert trie == one_by_one
    assert all(kinds for _, kinds in trie[:3]) and "data-12" in trie[3][0]


def test_the_screen_with_many_literals_suspects_what_it_suspects_with_few(monkeypatch):
    from inspector.protocol import redact

    rules = Rules.build(keys=["data"], literals=MANY)
    lines = [json.dumps({"seq": n, "text": text}).encode() for n, text in enumerate(TEXTS)]
    lines += [json.dumps(value).encode() for value in ORDINARY + SECRETS]
    lines += [b'{"text":"caf\xc3\xa9"}', b'{"text":"100%"}', b'{"text":"a\\\\b"}']
    joined = b"\n".join(lines)
    many = Screen(rules)
    assert many._many  # the trie path
    monkeypatch.setattr(redact, "_PRUNED_UP_TO", 10 ** 6)
    few = Screen(rules)
    assert not few._many
    assert many.suspect_lines(joined) == few.suspect_lines(joined)
    assert [many.suspect(line) for line in lines] == [few.suspect(line) for line in lines]
    assert len(few.suspect_lines(joined)) < len(lines)  # some lines are clear: the comparison means something
