"""The page in a real Chromium (Playwright), against real mcp-inspect processes and real servers."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, read_records, records_in, wait_for
from inspector.protocol import bursts

pytestmark = pytest.mark.browser

# flask-sock on Werkzeug ends sockets abruptly when the inspector stops; the browser logs that, harmlessly.
BENIGN_CONSOLE = ("WebSocket connection to",)


def real_errors(page) -> list[str]:
    return [e for e in page.console_errors if not any(b in e for b in BENIGN_CONSOLE)]


def json_editor(page):
    """Switch the selected tool's form to the JSON editor and return the editor."""
    page.get_by_role("button", name="JSON", exact=True).click()
    editor = page.get_by_label("Arguments (JSON)")
    editor.wait_for()
    return editor


def open_page(page, inspector):
    page.goto(inspector.url)
    assert page.url.endswith("/"), "the token is traded for a cookie and the URL cleaned"
    assert "token" not in page.url
    page.wait_for_selector("#tools-list .tool-item")
    page.wait_for_function("() => document.querySelectorAll('#timeline-rows .row').length > 0")


def test_demo_call_a_tool_and_see_it_in_the_timeline_and_after_reload(page, inspector_factory):
    inspector = inspector_factory([], "--demo")
    open_page(page, inspector)
    assert page.get_by_role("button", name=re.compile("^Word count")).is_visible()
    page.get_by_role("button", name=re.compile("^Word count")).click()
    page.get_by_label("text").fill("the cat sat on the mat")
    page.get_by_role("button", name="Call", exact=True).click()
    result = page.locator(".call.state-result")
    result.wait_for()
    assert '"words": 6' in result.inner_text()
    # The request and its response are rows, linked to each other.
    request_row = page.locator("#timeline-rows .row.kind-request", has_text="tools/call").last
    response_row = page.locator("#timeline-rows .row.kind-response", has_text="tools/call").last
    response_row.wait_for()
    request_seq = request_row.get_attribute("data-seq")
    assert response_row.get_attribute("data-pair") == request_seq
    wait_for(lambda: request_row.locator("a.pair-link").get_attribute("href") ==
             f"#r-{response_row.get_attribute('data-seq')}", 5, message="request links to its response")
    # Expanding the response shows its pretty JSON.
    response_row.locator("summary .c-time").click()
    body = response_row.locator(".row-body pre")
    body.wait_for()
    assert '"jsonrpc": "2.0"' in body.inner_text()
    seqs_before = page.locator("#timeline-rows .row").evaluate_all("rows => rows.map(r => r.dataset.seq)")
    page.reload()
    page.wait_for_function(f"() => document.getElementById('r-{response_row.get_attribute('data-seq')}') !== null")
    seqs_after = page.locator("#timeline-rows .row").evaluate_all("rows => rows.map(r => r.dataset.seq)")
    assert seqs_after[:len(seqs_before)] == seqs_before
    # The same rows are in the recording, in order; a stderr burst is one row, at its first line's seq.
    tracker = bursts.Bursts()
    recorded = [str(r["seq"]) for r in read_records(inspector.record)[1:]
                if tracker.observe(r["kind"], r.get("dir"), r["seq"], r["t"], r.get("text")) in (None, r["seq"])]
    assert seqs_after == recorded[:len(seqs_after)]
    assert real_errors(page) == []


def test_is_error_and_json_rpc_error_look_different(page, inspector_factory, tmp_path):
    script = tmp_path / "two_failures.py"
    script.write_text(
        "import json,sys\n"
        "for line in sys.stdin:\n"
        "    m=json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    out={'jsonrpc':'2.0','id':m['id']}\n"
        "    if m['method']=='initialize':\n"
        "        out['result']={'protocolVersion':'2025-11-25','capabilities':{'tools':{}},'serverInfo':{'name':'f','version':'1'}}\n"
        "    elif m['method']=='tools/list':\n"
        "        s={'type':'object'}\n"
        "        out['result']={'tools':[{'name':'tool_error','inputSchema':s},{'name':'rpc_error','inputSchema':s}]}\n"
        "    elif m['params']['name']=='tool_error':\n"
        "        out['result']={'isError':True,'content':[{'type':'text','text':'disk full'}]}\n"
        "    else:\n"
        "        out['error']={'code':-32602,'message':'Unknown argument','data':{'field':'x'}}\n"
        "    print(json.dumps(out),flush=True)\n")
    inspector = inspector_factory(["python3", str(script)])
    open_page(page, inspector)
    page.get_by_role("button", name=re.compile("^tool_error")).click()
    page.locator('.tool-detail[data-tool="tool_error"]').wait_for()
    page.get_by_role("button", name="Call", exact=True).click()
    tool_error = page.locator(".call.state-result .is-error")
    tool_error.wait_for()
    assert "isError" in tool_error.inner_text() and "disk full" in tool_error.inner_text()
    assert page.locator(".call .rpc-error").count() == 0
    style = "e => { const s = getComputedStyle(e); return [s.borderColor, s.backgroundColor]; }"
    tool_error_style = tool_error.evaluate(style)
    page.get_by_role("button", name=re.compile("^rpc_error")).click()
    page.locator('.tool-detail[data-tool="rpc_error"]').wait_for()
    page.get_by_role("button", name="Call", exact=True).click()
    rpc_error = page.locator(".call.state-error .rpc-error")
    rpc_error.wait_for()
    assert "JSON-RPC error -32602" in rpc_error.inner_text() and "Unknown argument" in rpc_error.inner_text()
    assert page.locator(".call .is-error").count() == 0
    assert rpc_error.evaluate(style) != tool_error_style, "the two kinds of failure must look different"


def test_invalid_json_is_refused_in_the_page(page, inspector_factory):
    inspector = inspector_factory([], "--demo")
    open_page(page, inspector)
    page.get_by_role("button", name=re.compile("^Word count")).click()
    json_editor(page).fill('{"text": ')
    page.get_by_role("button", name="Call", exact=True).click()
    error = page.locator(".json-error")
    wait_for(lambda: error.inner_text().strip() != "", 5, message="JSON error shown")
    assert not any(r.get("kind") == "message" and r["msg"].get("method") == "tools/call"
                   for r in records_in(inspector.record))


def test_filters_run_on_the_server_and_survive_reconnect(page, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "stderr"))
    open_page(page, inspector)
    page.wait_for_selector("#timeline-rows .row.kind-stderr")
    page.select_option("#filters select[name=kind]", "request")
    page.wait_for_function("""() => {
        const rows = [...document.querySelectorAll('#timeline-rows .row')];
        return rows.length > 0 && rows.every(r => r.classList.contains('kind-request'));
    }""")
    expected = [str(r["seq"]) for r in read_records(inspector.record)[1:]
                if r["kind"] == "message" and "method" in r["msg"] and "id" in r["msg"]]
    shown = page.locator("#timeline-rows .row").evaluate_all("rows => rows.map(r => r.dataset.seq)")
    assert shown == expected
    # Method text filter, then free text over message bodies.
    page.select_option("#filters select[name=kind]", "")
    page.fill("#filters input[name=method]", "tools/list")
    page.wait_for_function("""() => {
        const rows = [...document.querySelectorAll('#timeline-rows .row')];
        return rows.length === 2 && rows.every(r => r.querySelector('.c-method').textContent.includes('tools/list'));
    }""")
    # Simulate the tab being hidden and shown: hx-ws closes and reopens; the filter still applies.
    page.evaluate("() => document.querySelectorAll('#timeline-rows .row').forEach(r => r.dataset.old = '1')")
    page.evaluate("""() => {
        Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
        document.dispatchEvent(new Event('visibilitychange'));
        Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    # The socket reconnects, the server re-syncs (rows re-rendered: no mark), then re-applies the filters it is sent.
    page.wait_for_function("""() => {
        const rows = [...document.querySelectorAll('#timeline-rows .row')];
        return rows.length === 2 && rows.every(r => !r.dataset.old
            && r.querySelector('.c-method').textContent.includes('tools/list'));
    }""", timeout=10000)


def test_server_text_is_never_markup(page, inspector_factory, tmp_path):
    # Each piece of markup has an id: whether it became an element is read from the DOM, which the CSP does not
    # decide (the CSP stops the handlers from running, so window.__xss could never show a missing escape).
    payload = ("<img src=x id=xss-img onerror=window.__xss=1><script id=xss-script>window.__xss=2</script>"
               "<b id=xss-b>b</b>")
    script = tmp_path / "evil.py"
    script.write_text(
        "import json,sys\n"
        f"P={payload!r}\n"
        "Q='\" autofocus onfocus=\"window.__xss=3'\n"
        "sys.stderr.write(P+'\\n'); sys.stderr.flush()\n"
        "for line in sys.stdin:\n"
        "    m=json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    if m['method']=='initialize':\n"
        "        r={'protocolVersion':'2025-11-25','capabilities':{'tools':{}},'serverInfo':{'name':P,'version':P},'instructions':P}\n"
        "    elif m['method']=='tools/list':\n"
        "        q={'type':'string','title':P,'description':P,'examples':[Q],'default':Q,'enum':[Q,P]}\n"
        "        r={'tools':[{'name':'t'+P,'title':P,'description':P,'inputSchema':{'type':'object','title':P,'properties':{'q':q}}}]}\n"
        "    else:\n"
        "        r={'content':[{'type':'text','text':P}]}\n"
        "    print(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':r}),flush=True)\n"
        "    print(P,flush=True)\n")
    inspector = inspector_factory(["python3", str(script)])
    injected = "() => document.querySelectorAll('#xss-img, #xss-script, #xss-b, [onfocus], [onerror]').length"
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    assert page.evaluate(injected) == 0, "server text became elements in the page as served"
    open_page(page, inspector)
    page.locator("#tools-list .tool-item").first.click()
    page.get_by_role("button", name="Call", exact=True).click()
    page.locator(".call.state-result").wait_for()
    page.locator("#timeline-rows .row.kind-invalid summary .c-time").first.click()
    assert payload in page.locator(".call").inner_text()
    page.locator("#tools-list .tool-item").first.click()  # re-rendered with the call in its history
    page.locator(".history li").first.wait_for()
    # htmx has settled the swap: any element or handler a payload could carry is in the DOM and checked for below
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    assert page.evaluate(injected) == 0, "server text became elements in a partial or a push"
    assert page.evaluate("() => document.querySelectorAll('[autofocus]').length") == 0
    # ... and the payload is there, as text, where the server sent it
    assert payload in page.locator("#tool-detail").inner_text()
    assert payload in page.locator("#timeline-rows").inner_text()
    assert page.locator("#tools-panel img, #timeline img, #server-panel img").count() == 0


def test_page_keeps_a_bounded_number_of_rows_and_pages_older_ones(page, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "flood", "3000"))
    open_page(page, inspector)
    inspector.post("/tools/flood/call", {"arguments": "{}"})
    final = wait_for(lambda: next((r["seq"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                   and r["msg"].get("id") is not None and "content" in (r["msg"].get("result") or {})),
                                  None), 30, message="flood answered")
    # The page works through 3,000 pushed rows at its own pace (slow on a loaded machine): wait for the newest.
    page.wait_for_function(f"() => document.getElementById('r-{final}') !== null", timeout=120000)
    count = page.locator("#timeline-rows .row").count()
    assert count <= 1000
    oldest = int(page.locator("#timeline-rows .row").first.get_attribute("data-seq"))
    assert oldest > 1
    older = page.locator("#older")
    older.wait_for(state="visible")
    page.get_by_role("button", name="Load older rows").click()
    page.wait_for_function(f"() => Number(document.querySelector('#timeline-rows .row').dataset.seq) < {oldest}",
                           timeout=60000)
    seqs = [int(s) for s in page.locator("#timeline-rows .row").evaluate_all("rs => rs.map(r => r.dataset.seq)")]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))


def test_stop_and_start_buttons(page, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    open_page(page, inspector)
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("button", name="Start", exact=True).wait_for(timeout=10000)
    assert "stopped" in page.locator("#server-panel").inner_text()
    page.get_by_role("button", name="Start", exact=True).click()
    page.get_by_role("button", name="Stop", exact=True).wait_for(timeout=10000)
    wait_for(lambda: "running" in page.locator("#server-panel").inner_text(), 10, message="running again")
    events = [r.get("event") for r in read_records(inspector.record)]
    assert events.count("spawn") == 2 and "exit" in events


def test_clear_view_and_pause(page, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    open_page(page, inspector)
    page.get_by_role("button", name="Clear view").click()
    assert page.locator("#timeline-rows .row").count() == 0
    assert len(read_records(inspector.record)) > 3, "the recording keeps everything"
    pause = page.get_by_role("button", name=re.compile("scroll", re.I))
    pause.click()
    assert pause.get_attribute("aria-pressed") == "true"


def test_progress_bar_and_cancel_in_the_page(page, inspector_factory):
    inspector = inspector_factory([], "--demo")
    open_page(page, inspector)
    page.get_by_role("button", name=re.compile("^Slow task")).click()
    page.locator('.tool-detail[data-tool="slow_task"]').wait_for()
    page.get_by_label("seconds").fill("3")
    page.get_by_role("button", name="Call", exact=True).click()
    page.locator(".call.state-pending progress").wait_for(timeout=10000)
    page.get_by_role("button", name="Cancel", exact=True).click()
    page.locator(".call.state-failed").wait_for(timeout=10000)
    assert "cancelled" in page.locator(".call").inner_text()
    wait_for(lambda: any(r.get("kind") == "message" and r["msg"].get("method") == "notifications/cancelled"
                         for r in records_in(inspector.record)), 5, message="the cancellation was sent")


def test_an_open_roots_editor_survives_pushes_of_the_server_panel(page, inspector_factory):
    """The server panel is re-rendered whenever the server's state changes; the roots editor the user has open,
    and what they typed into it, stay as they are."""
    inspector = inspector_factory([], "--demo")
    open_page(page, inspector)
    page.locator("#server-panel .roots-edit > summary").click()
    page.locator("#roots-text").fill("file:///srv/typed-but-not-saved")
    spawns = len([r for r in records_in(inspector.record) if r.get("event") == "spawn"])
    inspector.post("/server/restart")  # pushes the panel several times: stopping, starting, running
    wait_for(lambda: len([r for r in records_in(inspector.record) if r.get("event") == "spawn"]) > spawns, 20,
             message="the restart")
    page.locator("#server-panel.state-running, #server-panel .state-running").first.wait_for()
    assert page.locator("#server-panel .roots-edit").get_attribute("open") is not None
    assert page.locator("#roots-text").input_value() == "file:///srv/typed-but-not-saved"
