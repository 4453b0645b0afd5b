"""Security row 27: secrets given to the server (argv options, -e, -H, the URL) and the launch token never reach the
live recording, the page, the exports or a command's output, even when a server echoes them back, raw or encoded.

The fixture servers echo what they were given (fake_server.py echo-secrets, http_sdk_server.py's `reveal`), each
value raw, base64- and URL-encoded; the tests then read the recording as it is being written and every place that
shows it."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from conftest import (
    ROOT, fixture_command, records_in, start_http_fixture, stop_process_group, wait_for, wait_tools_listed,
)
from inspector.protocol.json import REDACTED
from inspector.protocol.records import FROM_SERVER, MESSAGE, Record
from inspector.protocol.secrets import (
    MIN_PLAIN_CHARS, Masker, argv_secrets, base64_cores, env_secrets, header_secrets, mask_argv, mask_url,
    trie_pattern, url_secrets,
)

ROW_ID = re.compile(r'id="r-(\d+)"')
CHILD_TIMEOUT = 90  # a loaded machine is slow, not wrong


def forms(secret: str) -> dict[str, str]:
    """Every form of a secret that must not be written or shown."""
    raw = secret.encode()
    found = {"raw": secret, "base64": base64.b64encode(raw).decode(),
             "base64url": base64.urlsafe_b64encode(raw).decode(),
             "base64 unpadded": base64.b64encode(raw).decode().rstrip("="),
             "url": quote(secret, safe=""), "url+": quote_plus(secret, safe="")}
    found.update({f"base64 core {core}": core for core in base64_cores(raw)})
    return found


def leaks(where: dict[str, str], secrets: dict[str, str]) -> list[str]:
    """'<slot> (<form>) in <place>' for every form of every secret found in any text."""
    return [f"{slot} ({name}) in {place}" for place, text in where.items() for slot, secret in secrets.items()
            for name, form in forms(secret).items() if form in text]


@pytest.fixture
def sentinels() -> dict[str, str]:
    base = f"S3CR3T-{uuid.uuid4()}"
    # "/" and "+" in one of them, so its URL-encoded form differs from the raw one
    return {"--token": f"{base}-tok", "--api-key=": f"{base}-api", "--password=": f"{base}/pw+1",
            "-e ECHO_API_TOKEN": f"{base}-env", "-e ECHO_DATABASE_URL": f"postgres://{base}-db"}


def mcp(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def echo_server(sentinels: dict[str, str]) -> list[str]:
    return fixture_command("fake_server", "echo-secrets", "--token", sentinels["--token"],
                           f"--api-key={sentinels['--api-key=']}", f"--password={sentinels['--password=']}")


def env_options(sentinels: dict[str, str]) -> list[str]:
    return ["-e", f"ECHO_API_TOKEN={sentinels['-e ECHO_API_TOKEN']}",
            "-e", f"ECHO_DATABASE_URL={sentinels['-e ECHO_DATABASE_URL']}", "-e", "ECHO_LEVEL=debug"]


def call_of(records: list[dict], tool: str) -> tuple[dict, dict] | None:
    """The tools/call request of this tool and its answer, once both are recorded."""
    request = next((r for r in records if r.get("kind") == "message" and r["dir"] == "to_server"
                    and (r["msg"].get("params") or {}).get("name") == tool), None)
    answer = request and next((r for r in records if r.get("kind") == "message" and r["dir"] == FROM_SERVER
                               and r["msg"].get("id") == request["msg"]["id"]), None)
    return (request, answer) if answer else None


# -- the live page ---------------------------------------------------------------------------------------------------

def test_secrets_echoed_by_a_server_are_masked_in_the_live_recording_the_page_and_the_exports(
        inspector_factory, sentinels, tmp_path):
    inspector = inspector_factory(echo_server(sentinels), *env_options(sentinels))
    wait_tools_listed(inspector, timeout=60)
    ws = inspector.ws(timeout=CHILD_TIMEOUT)
    frames: list[str] = []
    status, _, reveal_body = inspector.post("/tools/reveal/call", {"arguments": "{}"})
    assert status == 200, reveal_body
    # The launch token, typed into a tool call by mistake: the server gets it, the recording does not.
    status, _, echo_body = inspector.post("/tools/echo/call", {"arguments": json.dumps({"text": inspector.token})})
    assert status == 200, echo_body
    request, result = wait_for(lambda: call_of(records_in(inspector.record), "reveal"), 60, message="reveal answered")
    _, echoed = wait_for(lambda: call_of(records_in(inspector.record), "echo"), 60, message="the token echoed back")
    seqs: set[int] = set()
    while not {result["seq"], echoed["seq"]} <= seqs:  # the websocket pushes both rows
        frames.append(ws.recv())
        seqs.update(int(s) for s in ROW_ID.findall(frames[-1]))
    ws.close()

    records = records_in(inspector.record)
    stderr_row = next(r for r in records if r.get("kind") == "stderr" and "starting with" in r["text"])
    pages = {path: inspector.request("GET", path)[2].decode() for path in (
        "/", "/config/snippet?flavour=claude", "/config/snippet?flavour=vscode", f"/records/{request['seq']}/command",
        f"/records/{result['seq']}", f"/records/{result['seq']}.json", f"/records/{stderr_row['seq']}",
        f"/records/{echoed['seq']}", "/timeline/rows?before=100000", "/export")}
    exported = mcp("export", str(inspector.record), "-o", str(tmp_path / "shared.jsonl"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    where = {"the recording": inspector.record.read_text(), **pages, "the tool call answer": reveal_body.decode(),
             "websocket frames": "".join(frames), "mcp-inspect export": (tmp_path / "shared.jsonl").read_text(),
             "export's stderr": exported.stderr, "the inspector's stderr": inspector.stderr_text()}

    assert leaks(where, sentinels) == []
    # The launch token (the page itself carries it, so only the recording and what is made from it are read).
    for place in ("the recording", f"/records/{echoed['seq']}", "/export", "mcp-inspect export", "websocket frames"):
        assert inspector.token not in where[place], place
    # Masked, not dropped: the rows are there and say so; a short value under an ordinary name stays readable.
    head = json.loads(inspector.record.read_text().splitlines()[0])
    assert head["target"]["command"][-3:] == [REDACTED, f"--api-key={REDACTED}", f"--password={REDACTED}"]
    assert f"{REDACTED} b64={REDACTED}" in stderr_row["text"]
    assert "debug b64=ZGVidWc= url=debug" in result["msg"]["result"]["content"][0]["text"]
    assert f"--token {REDACTED} --api-key={REDACTED}" in pages["/"]
    # Copy as command stays usable: the user's shell fills in the secrets.
    assert '--token "$TOKEN" --api-key="$API_KEY" --password="$PASSWORD"' in pages[f"/records/{request['seq']}/command"]
    assert '"${input:' in pages["/config/snippet?flavour=vscode"]

    # The server dies: the page shows its last stderr lines (the echo at start among them) and the call's failure.
    status, _, crash_body = inspector.post("/tools/crash/call", {"arguments": "{}"})
    assert status == 200, crash_body
    wait_for(lambda: any(r.get("event") == "exit" for r in records_in(inspector.record)), 60, message="the exit")
    wait_for(lambda: "Last stderr lines" in inspector.request("GET", "/")[2].decode(), 60, message="the tail shown")
    page = inspector.request("GET", "/")[2].decode()
    assert "starting with" in page
    assert leaks({"the page after the exit": page, "the recording": inspector.record.read_text()}, sentinels) == []


# -- the headless commands -------------------------------------------------------------------------------------------

def test_call_masks_echoed_secrets_in_its_output_and_its_recording(sentinels, tmp_path):
    record = tmp_path / "call.jsonl"
    result = mcp("call", "--tool", "reveal", "--record", str(record), *env_options(sentinels),
                 "--", *echo_server(sentinels), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "b64=" in result.stdout and "starting with" in result.stderr  # the echo was printed, masked
    where = {"stdout": result.stdout, "stderr": result.stderr, "the recording": record.read_text()}
    assert leaks(where, sentinels) == []
    assert f"{REDACTED} b64={REDACTED}" in result.stdout


def test_replay_and_check_show_the_command_masked(sentinels, tmp_path):
    record = tmp_path / "call.jsonl"
    assert mcp("call", "tools/list", "--record", str(record), "--", *echo_server(sentinels),
               cwd=tmp_path).returncode == 0
    replayed = mcp("replay", str(record), "--json", "--", *echo_server(sentinels), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    checked = mcp("check", "--json", "--record", str(tmp_path / "check.jsonl"), *env_options(sentinels), "--",
                  *echo_server(sentinels), cwd=tmp_path)
    where = {"replay stdout": replayed.stdout, "replay stderr": replayed.stderr, "check stdout": checked.stdout,
             "check stderr": checked.stderr, "check's recording": (tmp_path / "check.jsonl").read_text()}
    assert leaks(where, sentinels) == []
    assert json.loads(replayed.stdout)["summary"]["command"][-3:] == [REDACTED, f"--api-key={REDACTED}",
                                                                      f"--password={REDACTED}"]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    proc, port = start_http_fixture("http_sdk_server", "streamable-http",
                                    tmp_path_factory.mktemp("http") / "server.log")
    yield port
    stop_process_group(proc)


def test_header_and_url_secrets_echoed_over_http_are_masked(http_server, sentinels, tmp_path):
    base = sentinels["--token"]
    secrets = {"Authorization": f"{base}-bearer", "X-Api-Key": f"{base}-xkey", "X-Custom": f"{base}-custom",
               "?api_key=": f"{base}-query", "userinfo": f"{base}-userinfo"}
    url = f"http://bob:{secrets['userinfo']}@127.0.0.1:{http_server}/mcp?api_key={secrets['?api_key=']}"
    record = tmp_path / "http.jsonl"
    result = mcp("call", "--tool", "reveal", "--record", str(record), "--url", url,
                 "-H", f"Authorization: Bearer {secrets['Authorization']}", "-H", f"X-Api-Key: {secrets['X-Api-Key']}",
                 "-H", f"X-Custom: {secrets['X-Custom']}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    echoed = json.loads(json.loads(result.stdout)["content"][0]["text"])
    assert echoed["headers"]["x-custom"] == REDACTED and "api_key=[REDACTED]" in echoed["url"]
    where = {"stdout": result.stdout, "stderr": result.stderr, "the recording": record.read_text()}
    assert leaks(where, secrets) == []
    assert json.loads(record.read_text().splitlines()[0])["target"]["url"] == \
        f"http://bob:{REDACTED}@127.0.0.1:{http_server}/mcp?api_key={REDACTED}"


# -- the rules (pure) ------------------------------------------------------------------------------------------------

def test_what_counts_as_a_secret_option():
    argv = ["srv", "--token", "t0k3n", "--api-key=k3y", "--password", "pw", "--port", "9", "--client-secret", "s",
            "--auth-header=Bearer x", "--keep", "-v", "--bearer", "b", "--db-credentials", "c", "plain", "--token"]
    masked, positions = mask_argv(argv)
    assert masked == ["srv", "--token", REDACTED, f"--api-key={REDACTED}", "--password", REDACTED, "--port", "9",
                      "--client-secret", REDACTED, f"--auth-header={REDACTED}", "--keep", "-v", "--bearer", REDACTED,
                      "--db-credentials", REDACTED, "plain", "--token"]
    assert positions == [2, 3, 5, 9, 10, 14, 16]
    assert argv_secrets(argv) == ["t0k3n", "Bearer x"]  # the others are too short to search for in echoes


def test_short_values_are_not_searched_for():
    assert env_secrets([("LOG_LEVEL", "debug"), ("PORT", "8080"), ("DATABASE_URL", "postgres://x"),
                        ("GITHUB_TOKEN", "abcd"), ("API_KEY", "abc")]) == ["postgres://x", "abcd"]
    assert len("postgres://x") >= MIN_PLAIN_CHARS
    assert header_secrets([("Authorization", "Bearer abcdef"), ("X-Flag", "on")]) == ["Bearer abcdef", "abcdef"]
    assert url_secrets("https://u:pass@h/p?api_key=k3y42&page=2") == ["pass", "k3y42"]
    assert mask_url("https://u:p@h/p?access_token=x&page=2#f") == \
        f"https://u:{REDACTED}@h/p?access_token={REDACTED}&page=2#f"


def test_the_masker_finds_every_form_and_leaves_the_rest():
    secret = f"S3CR3T-{uuid.uuid4()}/+"
    masker = Masker([secret, "short-but-named"])
    text = " ".join(f"<{form}>" for form in forms(secret).values())
    assert leaks({"masked": masker.text(text)}, {"s": secret}) == []
    record = Record(MESSAGE, seq=1, t=1.0, dir=FROM_SERVER, msg={"id": 1, "result": {"text": f'"{secret}" and 1'}})
    original = record.msg
    line = masker.record(record)
    assert secret not in line.decode() and json.loads(line)["msg"]["result"]["text"] == f'"{REDACTED}" and 1'
    assert original["result"]["text"] == f'"{secret}" and 1', "the caller's message is never changed in place"
    untouched = Record(MESSAGE, seq=2, t=1.0, dir=FROM_SERVER, msg={"id": 2, "result": {}})
    assert masker.record(untouched) == untouched.to_line()


@pytest.mark.parametrize("others", [0, 40], ids=["few secrets: found by bytes", "many: by the trie pattern"])
def test_a_batch_is_masked_like_each_of_its_records_and_only_the_lines_with_a_secret_are_encoded_anew(others):
    """Masker.lines searches a pipe read's lines at once: a secret on one line of a batch is masked there (escaped
    forms included), the other lines stay the server's bytes as they came, and a batch without one is left whole;
    alike whether the run knows a few secrets or more than FIND_WORDS (the two ways a batch is searched)."""
    secret = f"S3CR3T-{uuid.uuid4()}/+"
    masker = Masker([secret] + [f"other-secret-{i}-{uuid.uuid4()}" for i in range(others)])

    def batch(texts):
        out = []
        for i, text in enumerate(texts):
            wire = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": text}}, separators=(", ", ": ")).encode()
            out.append(Record(MESSAGE, seq=i + 1, t=5.0, dir=FROM_SERVER, msg=json.loads(wire), wire=wire))
        return out

    texts = [f"line {i}" for i in range(300)]
    texts[7], texts[250] = f"echo {secret}", "the end of a word" + json.dumps(secret)[1:-1]
    lines = masker.lines(batch(texts), 5.0, b"5.0")
    alone = [masker.record(record, b"5.0") for record in batch(texts)]
    assert lines == alone and len(lines) == 300
    assert [i for i, line in enumerate(lines) if REDACTED.encode() in line] == [7, 250]
    assert all(secret not in json.loads(line)["msg"]["params"]["data"] for line in lines)
    assert lines[8] == b'{"seq":9,"t":5.0,"kind":"message","dir":"from_server","msg":%s}\n' % batch(texts)[8].wire
    clean = batch(texts[:5])
    assert masker.lines(clean, 5.0, b"5.0") == [b'{"seq":%d,"t":5.0,"kind":"message","dir":"from_server","msg":%s}\n'
                                              % (record.seq, record.wire) for record in clean]


def test_the_trie_pattern_matches_like_a_longest_first_alternation():
    words = ["abcd", "abcdef", "abx", "zzzz", "a.b*c"]
    assert trie_pattern(words).sub("X", "..abcdefg abcd abx a.b*c ab") == "..Xg X X X ab"
    assert trie_pattern([w.encode() for w in words]).sub(b"X", b"abcdef abx") == b"X X"
    long = "S" * 5000  # a run is one literal: no recursion per character
    assert trie_pattern([long]).fullmatch(long)
