"""Security row 12, the file part: `cat recording.jsonl` cannot be driven by what a server says.

json escapes C0 (ESC, BEL) by itself; C1 controls (U+0080-U+009F: U+009B is a CSI, U+009D an OSC), DEL and the
line separators U+2028/2029 are escaped by the one line encoder too. The file stays valid JSON that reads back to
exactly the server's text, and other non-ASCII text stays readable UTF-8. A real inspector, a real server."""

from __future__ import annotations

import re
import sys

from conftest import FIXTURES, fixture_command, records_in, wait_for, wait_tools_listed

from inspector.recording.files import read_recording

sys.path.insert(0, str(FIXTURES))
from control_text_server import TEXT  # noqa: E402 - the fixture's folder is on the path only from here

# Raw in UTF-8: C1 is c2 80 - c2 9f, DEL is 7f, U+2028/2029 are e2 80 a8/a9; ESC and BEL are C0.
TERMINAL_BYTES = re.compile(rb"\xc2[\x80-\x9f]|[\x00-\x09\x0b-\x1f\x7f]|\xe2\x80[\xa8\xa9]")


def test_a_servers_control_characters_are_escaped_in_the_recording_and_read_back_exactly(inspector_factory):
    inspector = inspector_factory(fixture_command("control_text_server"))
    wait_tools_listed(inspector)
    status, _, _ = inspector.post("/tool/call?name=shout", {"arguments": "{}"})
    assert status == 200

    def recorded():
        records = records_in(inspector.record)
        return (any(r.get("kind") == "stderr" for r in records)
                and any("content" in str((r.get("msg") or {}).get("result")) for r in records))
    wait_for(recorded, 60, message="the result and the stderr line recorded")

    data = inspector.record.read_bytes()
    found = sorted({m.group(0) for m in TERMINAL_BYTES.finditer(data)})
    assert not found, f"raw terminal controls in the recording: {found}"
    assert "Zürich ✓".encode() in data, "other non-ASCII text stays readable UTF-8"
    assert b"\\u009b31mred" in data and b"\\u2028ls" in data

    status, _, exported = inspector.request("GET", "/export")
    assert status == 200 and not TERMINAL_BYTES.search(exported.replace(b"\n", b" "))

    inspector.stop()
    recording = read_recording(inspector.record)
    assert recording.problems == []
    texts = {"stderr": [r.text for r in recording.records if r.kind == "stderr"],
             "result": [r.msg["result"]["content"][0]["text"] for r in recording.records
                        if r.kind == "message" and "content" in str(r.msg.get("result"))],
             "description": [r.msg["result"]["tools"][0]["description"] for r in recording.records
                             if r.kind == "message" and "tools" in (r.msg.get("result") or {})]}
    assert texts == {"stderr": [TEXT], "result": [TEXT], "description": [TEXT]}
