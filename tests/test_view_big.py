"""`mcp-inspect view` of a big recording (issue 14, item 6): 100,000 lines with a damaged line and a line that is
not UTF-8 in the middle. The real `view` process: the newest rows first, the oldest by paging, a search hit,
requests paired with their answers, and the two damaged lines reported and skipped with nothing else lost."""

from __future__ import annotations

import json
import re

from test_view import ROW_ID, first_frame_rows

COUNT = 100_000
NEEDLE_SEQ = 77_777
CALL_EVERY = 1000


def line(seq: int) -> bytes:
    """The record of one seq: mostly log notifications, a tools/call request and its answer every 1000 seqs, one
    stderr line holding the needle."""
    if seq == NEEDLE_SEQ:
        record = {"seq": seq, "t": float(seq), "kind": "stderr", "text": "the Needle-Ü is here"}
    elif seq % CALL_EVERY == 0:
        record = {"seq": seq, "t": float(seq), "kind": "message", "dir": "to_server",
                  "msg": {"jsonrpc": "2.0", "id": seq, "method": "tools/call", "params": {"name": "echo"}}}
    elif seq % CALL_EVERY == 1 and seq > 1:
        record = {"seq": seq, "t": seq + 0.25, "kind": "message", "dir": "from_server",
                  "msg": {"jsonrpc": "2.0", "id": seq - 1, "result": {"content": []}}}
    else:
        record = {"seq": seq, "t": float(seq), "kind": "message", "dir": "from_server",
                  "msg": {"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": f"flood {seq}"}}}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_big_recording(path) -> None:
    head = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "target": {"command": ["flood"]}}
    with open(path, "wb") as handle:
        handle.write(json.dumps(head).encode() + b"\n")
        for seq in range(1, COUNT + 1):
            if seq == 50_001:
                handle.write(line(seq)[:60] + b"\n")  # line 50,002: torn in the middle of the message
            elif seq == 60_002:
                handle.write(line(seq).replace(b"flood", b"fl\xffod"))  # line 60,003: not UTF-8
            else:
                handle.write(line(seq))


def seqs_of(body: bytes) -> list[int]:
    return [int(s) for s in ROW_ID.findall(body.decode())]


def test_a_big_recording_with_damaged_lines_opens_with_everything_else(tmp_path, inspector_factory):
    path = tmp_path / "big.jsonl"
    write_big_recording(path)
    view = inspector_factory([], view=path)
    status, _, body = view.request("GET", "/")
    page = body.decode()
    assert status == 200 and "2 lines of this recording could not be read" in page
    assert "line 50002: not JSON" in page and "line 60003: not UTF-8" in page
    newest, frame = first_frame_rows(view)
    assert newest == list(range(COUNT - 999, COUNT + 1))  # the newest rows first
    assert "flood 99999" in frame and "flood 99000" not in frame  # 99,000 is a request
    _, _, oldest = view.request("GET", "/timeline/rows?before=6")
    assert seqs_of(oldest) == [1, 2, 3, 4, 5] and "flood 1&#34;}" in oldest.decode()  # previews from the file
    _, _, around = view.request("GET", "/timeline/rows?before=50004")
    assert seqs_of(around)[-4:] == [49_999, 50_000, 50_002, 50_003]  # only the torn line is missing
    _, _, around = view.request("GET", "/timeline/rows?before=60004")
    assert seqs_of(around)[-3:] == [60_000, 60_001, 60_003]
    _, _, hit = view.request("GET", "/timeline/rows?q=needle-%C3%BC")
    assert seqs_of(hit) == [NEEDLE_SEQ] and "the Needle-Ü is here" in hit.decode()
    _, _, calls = view.request("GET", "/timeline/rows?kind=request")
    requests = seqs_of(calls)
    assert requests[-3:] == [98_000, 99_000, 100_000] and len(requests) == 100
    _, _, answered = view.request("GET", "/timeline/rows?before=99003")
    row = re.search(r'<details[^>]*id="r-99001"[^>]*>', answered.decode()).group(0)
    assert 'data-pair="99000"' in row and "kind-response" in row
    assert "tools/call" in answered.decode().split('id="r-99001"')[1].split("</details>")[0]
    assert view.stop() == 0
    assert "line 50002: not JSON" in view.stderr_text() and "line 60003: not UTF-8" in view.stderr_text()
