"""Rich results, the Resources and Prompts panels and completions: content.py units, HTTP through a real
inspector (the stdlib rich_server fixture and the SDK-built sdk_server), and the page in Chromium."""

from __future__ import annotations

import base64
import re
from urllib.parse import quote

import pytest

from conftest import build_in_process, fixture_command, records_in, start_inspector, wait_for
from inspector.protocol import content
from inspector.session.panels import MAX_RESULTS, MAX_UPDATES, PanelState

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8).decode()


# -- content.py ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("block, kind", [
    ({"type": "text", "text": "  a\n\tb  "}, "text"),
    ({"type": "image", "data": PNG, "mimeType": "image/png"}, "image"),
    ({"type": "image", "data": PNG, "mimeType": "IMAGE/JPEG; q=1"}, "image"),
    ({"type": "image", "data": base64.b64encode(b"<svg/>").decode(), "mimeType": "image/svg+xml"}, "image-refused"),
    ({"type": "image", "data": PNG, "mimeType": "text/html"}, "image-refused"),
    ({"type": "image", "data": "not base64!", "mimeType": "image/png"}, "bad"),
    ({"type": "audio", "data": PNG, "mimeType": "audio/wav"}, "audio"),
    ({"type": "audio", "data": PNG, "mimeType": "text/html"}, "download"),
    ({"type": "resource_link", "uri": "mem://x", "name": "x"}, "resource_link"),
    ({"type": "resource", "resource": {"uri": "mem://t", "text": "hi"}}, "resource"),
    ({"type": "resource", "resource": {"uri": "mem://b", "blob": PNG, "mimeType": "application/pdf"}}, "resource"),
    ({"type": "hologram", "data": 1}, "unknown"),
    ({"type": "text"}, "unknown"),
    ("just a string", "unknown"),
])
def test_block_kinds(block, kind):
    assert content.block_view(block, "/content/call/1/0")["kind"] == kind


def test_text_keeps_whitespace_and_pretty_prints_json():
    assert content.block_view({"type": "text", "text": "  a\n\tb  "}, "u")["text"] == "  a\n\tb  "
    view = content.block_view({"type": "text", "text": '{"a":[1,2]}'}, "u")
    assert view["is_json"] and view["text"] == '{\n  "a": [\n    1,\n    2\n  ]\n}'


def test_only_raster_images_become_data_uris_and_the_rest_never_do():
    png = content.block_view({"type": "image", "data": PNG, "mimeType": "image/png"}, "/c/1")
    assert png["src"] == f"data:image/png;base64,{PNG}"
    svg = content.block_view({"type": "image", "data": base64.b64encode(b"<svg onload=x>").decode(),
                              "mimeType": "image/svg+xml"}, "/c/2")
    assert "src" not in svg and svg["source"] == "<svg onload=x>" and svg["url"] == "/c/2"
    audio = content.block_view({"type": "audio", "data": PNG, "mimeType": "audio/wav"}, "/c/3")
    assert audio["url"] == "/c/3" and "src" not in audio
    blob = content.block_view({"type": "resource", "resource": {"uri": "f:///a/r.pdf", "blob": PNG,
                                                                "mimeType": "application/pdf"}}, "/c/4")
    assert blob["contents"] == {**blob["contents"], "kind": "download", "url": "/c/4", "download": "r.pdf"}


def test_links_are_http_only():
    for bad in ("javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "JAVASCRIPT:x", " http://x"):
        assert content.link(bad) is None
        assert content.block_view({"type": "resource_link", "uri": bad, "name": "n"}, "u")["href"] is None
    assert content.link("https://example.com/a") == "https://example.com/a"


def test_checks():
    assert content.mime_type("Audio/WAV; codecs=1") == "audio/wav"
    assert content.mime_type("text/html\r\nSet-Cookie: x") is None
    assert content.mime_type("nonsense") is None
    assert content.is_base64(PNG) and not content.is_base64("a b") and not content.is_base64(None)
    assert content.base64_size(PNG) == 16
    assert content.download_name("mem://x/../../etc/passwd") == "passwd"
    assert content.download_name('mem://"a;b".bin') == "a_b_.bin"
    assert content.download_name(None, "application/pdf") == "content.pdf"
    assert content.download_name("mem://", None, "blob") == "blob"


def test_structured_content_validation():
    schema = {"type": "object", "properties": {"count": {"type": "integer"},
                                               "names": {"type": "array", "items": {"$ref": "#/$defs/name"}}},
              "required": ["count"], "$defs": {"name": {"type": "string"}}}
    assert content.validate({"count": 1, "names": ["a"]}, schema) == {"state": "valid", "errors": []}
    assert content.validate({"count": "x", "names": [1]}, schema) == {"state": "invalid", "errors": [
        ("/count", "'x' is not of type 'integer'"), ("/names/0", "1 is not of type 'string'")]}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "required": ["a"]}
    assert content.validate({}, draft7)["errors"] == [("/", "'a' is a required property")]
    assert content.validate({}, {"type": "nope"})["state"] == "bad-schema"


def test_a_network_ref_is_reported_not_fetched(monkeypatch):
    import urllib.request

    def no_network(*args, **kwargs):
        raise AssertionError("tried to fetch a $ref")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    check = content.validate({"a": 1}, {"$ref": "https://example.com/schema.json"})
    assert check["state"] == "bad-schema" and "example.com" in check["errors"][0][1]


def test_result_view():
    tool = {"name": "t", "outputSchema": {"type": "object", "required": ["n"]}}
    ok = content.result_view({"content": [], "structuredContent": {"n": 1}}, tool, "/content/call/1")
    assert ok["validation"]["state"] == "valid" and not ok["is_error"]
    missing = content.result_view({"content": [{"type": "text", "text": "x"}]}, tool, "/b")
    assert missing["validation"]["state"] == "missing"
    failed = content.result_view({"content": [{"type": "text", "text": "x"}], "isError": True}, tool, "/b")
    assert failed["is_error"] and failed["validation"] is None  # an error result need not match the schema
    assert content.result_view({"isError": "yes"}, None, "/b")["content_missing"]
    assert not content.result_view(["not", "a", "result"], None, "/b")["valid_shape"]


def test_item_at_and_blob_of():
    result = {"content": [{"type": "text", "text": "t"}, {"type": "audio", "data": PNG, "mimeType": "audio/ogg"}]}
    assert content.blob_of(content.item_at("call", result, 0)) is None
    data, mime, name = content.blob_of(content.item_at("call", result, 1))
    assert data == base64.b64decode(PNG) and mime == "audio/ogg" and name == "audio"
    assert content.item_at("call", result, 2) is None and content.item_at("call", result, -1) is None
    read = {"contents": [{"uri": "mem://a/b.bin", "blob": PNG}]}
    assert content.blob_of(content.item_at("read", read, 0))[2] == "b.bin"
    prompt = {"messages": [{"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}]}
    assert content.blob_of(content.item_at("prompt", prompt, 0))[1] == "image/png"
    views = content.prompt_view({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}},
                                              {"role": "system", "content": {"type": "text", "text": "x"}}]}, "/p/1")
    assert [m["role"] for m in views["messages"]] == ["user", "other"]


def test_panel_state_is_bounded():
    state = PanelState()
    ids = [state.keep("read", {"contents": []}) for _ in range(MAX_RESULTS + 5)]
    assert state.result("read", ids[0]) is None and state.result("read", ids[-1]) == {"contents": []}
    assert state.result("prompt", ids[-1]) is None
    big = state.keep("read", {"contents": [{"blob": "A" * (40 * 1024 * 1024)}]})
    state.keep("read", {"contents": [{"blob": "A" * (40 * 1024 * 1024)}]})
    assert state.result("read", big) is None, "the byte bound drops the oldest big result"
    state.updated("mem://kept")
    for n in range(MAX_UPDATES - 1):
        state.updated(f"mem://{n}")
    state.updated("mem://kept")  # updated again: now the newest
    state.updated("mem://new")
    assert len(state.updates) == MAX_UPDATES and "mem://0" not in state.updates
    assert state.updates["mem://kept"]["count"] == 2


# -- HTTP through the page: the rich stdlib fixture ---------------------------------------------------------------
# The HTTP tests build the page in-process (`rich_app`, `sdk_app`); the browser tests need a real port (`rich`, `sdk`).

RICH_OPTIONS = ("--timeout", "3", "--no-watch")


def _serve(start, folder, server: str, options, ready, seconds: float):
    """start(folder, argv, *options), then wait until the page lists what ready() looks for."""
    inspector = start(folder, fixture_command(server), *options)
    wait_for(lambda: ready(inspector.request("GET", "/")[2]), seconds, message=f"{server}'s lists on the page")
    return inspector


def _rich_ready(html: bytes) -> bool:
    return b"mem://slow" in html  # the last resource page


def _sdk_ready(html: bytes) -> bool:
    return b"fixture://notes/{topic}" in html and b"review_code" in html


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    inspector = _serve(start_inspector, tmp_path_factory.mktemp("rich"), "rich_server", RICH_OPTIONS, _rich_ready, 15)
    yield inspector
    inspector.stop()


@pytest.fixture(scope="module")
def rich_app(tmp_path_factory):
    page = _serve(build_in_process, tmp_path_factory.mktemp("rich-app"), "rich_server", RICH_OPTIONS, _rich_ready, 15)
    yield page
    page.stop()


@pytest.fixture(scope="module")
def sdk(tmp_path_factory):
    inspector = _serve(start_inspector, tmp_path_factory.mktemp("sdk"), "sdk_server", ("--no-watch",), _sdk_ready, 30)
    yield inspector
    inspector.stop()


@pytest.fixture(scope="module")
def sdk_app(tmp_path_factory):
    # The test checks the modern era: say so, rather than race the era probe's 3 s against the SDK's import
    # (architecture finding 16).
    page = _serve(build_in_process, tmp_path_factory.mktemp("sdk-app"), "sdk_server", ("--no-watch", "--protocol",
                  "modern"), _sdk_ready, 30)
    yield page
    page.stop()


def page_with(inspector, path: str, text: str, present: bool = True) -> str:
    """GET path until its HTML contains text (or, with present=False, no longer does)."""
    def check():
        html = inspector.request("GET", path)[2].decode()
        return html if (text in html) == present else None
    return wait_for(check, 10, message=f"{path} {'with' if present else 'without'} {text!r}")


def call(inspector, tool: str) -> str:
    """Call a tool through the page's endpoint; the call's HTML once answered."""
    status, _, body = inspector.post(f"/tools/{quote(tool)}/call", {"arguments": "{}"})
    assert status == 200, body
    call_id = int(re.search(rb'id="call-(\d+)"', body).group(1))
    return page_with(inspector, f"/calls/{call_id}", "state-pending", present=False)


def read(inspector, uri: str) -> str:
    status, _, body = inspector.post("/resources/read", {"uri": uri})
    assert status == 200
    return body.decode()


def sent(inspector, method: str) -> list[dict]:
    return [r["msg"].get("params") for r in records_in(inspector.record)
            if r.get("kind") == "message" and r["dir"] == "to_server" and r["msg"].get("method") == method]


def test_resources_panel_lists_every_page_and_the_templates(rich_app):
    html = page_with(rich_app, "/", "window.__xss=1")
    panel = html[html.index('id="resources-panel"'):]
    for uri in ("mem://readme", "mem://config.json", "mem://logo.png", "mem://data.bin", "mem://counter",
                "mem://slow"):
        assert uri in panel
    assert "mem://notes/{topic}{?lang}" in panel
    assert [p for p in sent(rich_app, "resources/list")][1:] == [{"cursor": "2"}, {"cursor": "4"}, {"cursor": "6"}]
    assert 'id="prompts-panel"' in html and "Greeting" in html


def test_read_renders_text_json_images_and_blobs(rich_app):
    assert "Read me.\n  Indented line." in read(rich_app, "mem://readme")
    assert "{\n  &#34;debug&#34;: false," in read(rich_app, "mem://config.json")
    logo = read(rich_app, "mem://logo.png")
    assert '<img class="result-image"' in logo and 'src="data:image/png;base64,' in logo
    data = read(rich_app, "mem://data.bin")
    assert "<img" not in data and "data:" not in data
    href = re.search(r'href="(/content/read/\d+/0)"', data).group(1)
    status, headers, body = rich_app.request("GET", href)
    assert status == 200 and body == bytes(range(256))
    assert headers["content-disposition"] == 'attachment; filename="data.bin"'
    assert headers["x-content-type-options"] == "nosniff"


def test_read_errors_and_timeouts_are_shown(rich_app):
    missing = read(rich_app, "mem://nope")
    assert 'class="rpc-error"' in missing and "-32002" in missing and "Resource not found" in missing
    slow = read(rich_app, "mem://slow")  # the inspector runs with --timeout 3
    assert 'class="call-failed"' in slow and "no answer to resources/read within 3 s" in slow
    assert rich_app.post("/resources/read", {})[0] == 400


def test_template_read_expands_the_variables(rich_app):
    status, _, body = rich_app.post("/resources/templates/read",
                                {"uriTemplate": "mem://notes/{topic}{?lang}", "v:topic": "red apples", "v:lang": ""})
    assert status == 200 and "Notes about red%20apples" in body.decode()
    assert sent(rich_app, "resources/read")[-1] == {"uri": "mem://notes/red%20apples"}
    detail = rich_app.request("GET", "/resources/template?uriTemplate=" + quote("mem://notes/{topic}{?lang}"))[2].decode()
    assert re.search(r'<label for="tv-\w+-0">topic</label>', detail)
    assert re.search(r'<label for="tv-\w+-1">lang</label>', detail)
    assert 'hx-trigger="focus once, input changed delay:300ms"' in detail and "[" not in detail.split("hx-trigger=")[1][:40]


def test_prompt_get_renders_messages_by_role(rich_app):
    status, _, body = rich_app.post("/prompts/get", {"name": "greet", "a:name": "Ada", "a:style": ""})
    html = body.decode()
    assert status == 200 and 'class="message role-user"' in html and 'class="message role-assistant"' in html
    assert "Greet Ada in a friendly way." in html and "Hello, Ada!" in html
    assert sent(rich_app, "prompts/get")[-1] == {"name": "greet", "arguments": {"name": "Ada"}}, "empty optional left out"
    # an empty required argument is flagged first (test_page_asks.py); "Get anyway" sends it to the server
    failed = rich_app.post("/prompts/get", {"name": "greet", "a:name": "", "anyway": "1"})[2].decode()
    assert 'class="rpc-error"' in failed and "Missing required argument" in failed
    assert sent(rich_app, "prompts/get")[-1] == {"name": "greet", "arguments": {"name": ""}}, "empty required is sent"
    media = rich_app.post("/prompts/get", {"name": "show_media"})[2].decode()
    assert 'src="data:image/png;base64,' in media and "Embedded read-me text" in media
    detail = rich_app.request("GET", "/prompts/detail?name=greet")[2].decode()
    assert re.search(r'<label for="pa-\w+-0">name <span class="required">\(required\)</span></label>', detail)
    assert re.search(r'<label for="pa-\w+-1">style</label>', detail)
    assert "Get prompt" in detail


def test_completions_send_ref_argument_and_context(rich_app):
    status, _, body = rich_app.post("/completions", {
        "ref_type": "ref/prompt", "ref": "greet", "argument": "style", "list": "pa-x-1-options",
        "name": "greet", "a:name": "Ada", "a:style": "f"})
    html = body.decode()
    assert status == 200 and html.strip().startswith('<datalist id="pa-x-1-options">')
    assert re.findall(r'<option value="([^"]*)">', html) == ["formal", "friendly", "funny"]
    assert sent(rich_app, "completion/complete")[-1] == {"ref": {"type": "ref/prompt", "name": "greet"},
                                                     "argument": {"name": "style", "value": "f"},
                                                     "context": {"arguments": {"name": "Ada"}}}
    body = rich_app.post("/completions", {"ref_type": "ref/resource", "ref": "mem://notes/{topic}{?lang}",
                                      "argument": "topic", "list": "tv-y-0-options", "v:topic": "ap"})[2].decode()
    assert re.findall(r'<option value="([^"]*)">', body) == ["apples", "apricots"]
    assert rich_app.post("/completions", {"list": '"><img src=x>', "argument": "a"})[0] == 400


def test_audio_is_served_with_its_type_and_nosniff(rich_app):
    html = call(rich_app, "audio")
    src = re.search(r'<audio controls preload="metadata" src="(/content/call/\d+/0)">', html).group(1)
    assert "data:audio" not in html
    status, headers, body = rich_app.request("GET", src)
    assert status == 200 and headers["content-type"] == "audio/wav" and body[:4] == b"RIFF"
    assert headers["x-content-type-options"] == "nosniff" and "content-disposition" not in headers


def test_embedded_blob_is_a_download_and_svg_is_never_an_image(rich_app):
    blob = call(rich_app, "embedded_blob")
    href = re.search(r'href="(/content/call/\d+/0)" download="report.pdf"', blob).group(1)
    status, headers, body = rich_app.request("GET", href)
    assert status == 200 and headers["content-disposition"] == 'attachment; filename="report.pdf"'
    assert body == bytes(range(256))
    svg = call(rich_app, "svg_image")
    assert "<img" not in svg and "data:image/svg" not in svg
    assert "&lt;svg" in svg, "shown as source text"
    href = re.search(r'href="(/content/call/\d+/0)"', svg).group(1)
    status, headers, _ = rich_app.request("GET", href)
    assert headers["content-disposition"].startswith("attachment") and "svg" not in headers["content-type"]
    assert rich_app.request("GET", "/content/call/9999/0")[0] == 404
    assert rich_app.request("GET", "/content/read/9999/0")[0] == 404
    assert rich_app.request("GET", href, auth=False)[0] == 401


def test_rich_tool_results(rich_app):
    text = call(rich_app, "text")
    assert '<pre class="text">  indented\n\ttabbed  \nlast line</pre>' in text
    assert '<pre class="text json">{\n  &#34;b&#34;: [' in call(rich_app, "json_text")
    png = call(rich_app, "png_image")
    assert '<img class="result-image"' in png and 'src="data:image/png;base64,iVBOR' in png
    link = call(rich_app, "resource_link")
    assert "hx-post=\"/resources/read\" hx-vals='{\"uri\": \"mem://readme\"}'" in link
    assert "Read</button>" in link
    embedded = call(rich_app, "embedded_text")
    assert "# Title\n\n  kept  spacing" in embedded and "mem://embedded.md" in embedded
    ok = call(rich_app, "structured_ok")
    assert 'class="schema-check valid"' in ok and 'class="structured"' in ok
    bad = call(rich_app, "structured_bad")
    assert 'class="schema-check invalid"' in bad and "2 errors" in bad
    assert "<code>/count</code> &#39;two&#39; is not of type &#39;integer&#39;" in bad
    assert "<code>/names/1</code> 3 is not of type &#39;string&#39;" in bad
    failed = call(rich_app, "fails")
    assert 'class="result is-error"' in failed and "rpc-error" not in failed
    rpc = call(rich_app, "rpc_error")
    assert 'class="rpc-error"' in rpc and "JSON-RPC error -32602" in rpc and "is-error" not in rpc


def test_subscribe_shows_updates_in_the_panel(rich_app):
    status, _, body = rich_app.post("/resources/subscribe", {"uri": "mem://counter"})
    assert status == 200 and "Unsubscribe</button>" in body.decode()
    assert sent(rich_app, "resources/subscribe")[-1] == {"uri": "mem://counter"}
    call(rich_app, "bump")
    panel = page_with(rich_app, "/", "updated at")
    item = panel[panel.index("mem://counter"):]
    assert re.search(r"updated at \d\d:\d\d:\d\d", item) and "Re-read</button>" in item
    assert "subscribed" in item
    reread = rich_app.post("/resources/read", {"uri": "mem://counter", "detail": "1"})[2].decode()
    assert "counter=1" in reread and 'aria-label="Resource"' in reread
    body = rich_app.post("/resources/unsubscribe", {"uri": "mem://counter"})[2].decode()
    assert "Subscribe</button>" in body and "Unsubscribe" not in body
    assert sent(rich_app, "resources/unsubscribe")[-1] == {"uri": "mem://counter"}


def test_a_viewed_recording_shows_the_panels_read_only(rich_app, tmp_path):
    call(rich_app, "audio")
    viewer = build_in_process(tmp_path, [], view=rich_app.record)
    try:
        html = viewer.request("GET", "/")[2].decode()
        assert "mem://readme" in html and "Notes by topic" in html and "Greeting" in html
        detail = viewer.request("GET", "/resources/detail?uri=" + quote("mem://readme"))[2].decode()
        assert "read-only" in detail and "hx-post" not in detail
        assert viewer.post("/resources/read", {"uri": "mem://readme"})[0] == 403
        assert viewer.request("GET", "/content/call/1/0")[0] == 404
    finally:
        viewer.stop()


# -- HTTP against the SDK-built server -----------------------------------------------------------------------------

def test_sdk_resources_templates_prompts_and_completions(sdk_app):
    assert "Hello from the SDK fixture." in read(sdk_app, "fixture://greeting")
    body = sdk_app.post("/resources/templates/read", {"uriTemplate": "fixture://notes/{topic}", "v:topic": "cats"})[2]
    assert "Notes about cats." in body.decode()
    body = sdk_app.post("/prompts/get", {"name": "review_code", "a:code": "x = 1", "a:language": "rust"})[2].decode()
    assert 'class="message role-user"' in body and "Please review this rust code:\n\nx = 1" in body
    body = sdk_app.post("/completions", {"ref_type": "ref/prompt", "ref": "review_code", "argument": "language",
                                     "list": "l-1", "a:language": "p", "a:code": "x"})[2].decode()
    assert re.findall(r'<option value="([^"]*)">', body) == ["python", "perl", "php"]
    body = sdk_app.post("/completions", {"ref_type": "ref/resource", "ref": "fixture://notes/{topic}",
                                     "argument": "topic", "list": "l-2", "v:topic": "ap"})[2].decode()
    assert re.findall(r'<option value="([^"]*)">', body) == ["apples", "apricots"]
    # In the modern era the SDK declares resources.subscribe; there is no resources/subscribe there, so
    # subscribing re-opens subscriptions/listen with the URI.
    detail = sdk_app.request("GET", "/resources/detail?uri=" + quote("fixture://greeting"))[2].decode()
    assert "Read</button>" in detail and "Subscribe</button>" in detail
    status, _, body = sdk_app.post("/resources/subscribe", {"uri": "fixture://greeting"})
    assert status == 200 and "Unsubscribe" in body.decode()
    listens = wait_for(lambda: [r["msg"]["params"]["notifications"] for r in records_in(sdk_app.record)
                                if r.get("kind") == "message" and r["msg"].get("method") == "subscriptions/listen"
                                and "resourceSubscriptions" in r["msg"]["params"]["notifications"]], 10,
                       message="a listen with the resource")
    assert listens[-1]["resourceSubscriptions"] == ["fixture://greeting"]
    assert not any(r.get("kind") == "message" and r["msg"].get("method") == "resources/subscribe"
                   for r in records_in(sdk_app.record))


# -- the page in Chromium ------------------------------------------------------------------------------------------

BENIGN_CONSOLE = ("WebSocket connection to",)


def open_page(page, inspector):
    page.goto(inspector.url)
    page.wait_for_selector("#resources-list .res-item")


def real_errors(page) -> list[str]:
    return [e for e in page.console_errors if not any(b in e for b in BENIGN_CONSOLE)]


@pytest.mark.browser
def test_browser_read_a_resource_and_subscribe(page, rich):
    open_page(page, rich)
    page.get_by_role("button", name=re.compile("^Read me")).click()
    page.get_by_role("button", name="Read", exact=True).click()
    page.locator("#resource-read-output pre.text").wait_for()
    assert page.locator("#resource-read-output pre.text").inner_text() == "Read me.\n  Indented line."
    page.get_by_role("button", name=re.compile("^counter")).click()
    page.get_by_role("button", name="Subscribe", exact=True).click()
    page.get_by_role("button", name="Unsubscribe", exact=True).wait_for()
    call(rich, "bump")
    marker = page.locator("#resources-list .res-updated")
    marker.wait_for(timeout=10000)
    assert re.match(r"updated at \d\d:\d\d:\d\d", marker.inner_text())
    page.get_by_role("button", name="Re-read").click()
    page.locator("#resource-read-output", has_text="counter=").wait_for()
    page.get_by_role("button", name="Unsubscribe", exact=True).click()
    page.get_by_role("button", name="Subscribe", exact=True).wait_for()
    assert real_errors(page) == []


@pytest.mark.browser
def test_browser_rich_results(page, rich):
    open_page(page, rich)
    ids = {}
    for tool in ("png_image", "svg_image", "audio", "resource_link", "structured_bad", "embedded_blob"):
        html = call(rich, tool)
        ids[tool] = int(re.search(r'id="call-(\d+)"', html).group(1))
    # Load the finished calls into the workbench the way htmx would (independent of the tool form).
    for tool, call_id in ids.items():
        page.evaluate("([id]) => htmx.ajax('GET', '/calls/' + id, {target: '#tool-detail', swap: 'beforeend'})",
                      [call_id])
        page.locator(f"#call-{call_id}").wait_for()
    png = page.locator(f"#call-{ids['png_image']} img.result-image")
    page.wait_for_function("() => [...document.querySelectorAll('#tool-detail img.result-image')]"
                           ".every(i => i.complete && i.naturalWidth === 2)")
    assert png.count() == 1
    assert page.locator(f"#call-{ids['svg_image']} img").count() == 0
    assert page.evaluate("() => window.__svg") is None
    page.wait_for_function("() => { const a = document.querySelector('#tool-detail audio');"
                           " return a && a.readyState >= 1 && a.duration > 0; }")
    link = page.locator(f"#call-{ids['resource_link']}")
    link.get_by_role("button", name="Read", exact=True).click()
    link.locator(".content-slot pre.text", has_text="Read me.").wait_for()
    errors = page.locator(f"#call-{ids['structured_bad']} .schema-check.invalid li")
    assert errors.count() == 2
    assert page.locator(f"#call-{ids['embedded_blob']} a.download").get_attribute("download") == "report.pdf"
    assert real_errors(page) == []


@pytest.mark.browser
def test_browser_template_prompt_and_completions(page, sdk):
    open_page(page, sdk)
    page.get_by_role("button", name=re.compile("^note")).click()
    page.get_by_label("topic").fill("cats")
    page.get_by_role("button", name="Read", exact=True).click()
    page.locator("#template-read-output", has_text="Notes about cats.").wait_for()
    # Completions for a template variable.
    page.get_by_label("topic").fill("")
    page.get_by_label("topic").press_sequentially("ap")
    page.wait_for_function("() => [...document.querySelectorAll('#tool-detail datalist option')]"
                           ".map(o => o.value).join() === 'apples,apricots'")
    # A prompt with arguments: required marked, completions with the other arguments as context.
    page.get_by_role("button", name=re.compile("^review_code")).click()
    assert "(required)" in page.locator("label", has_text="code").inner_text()
    page.get_by_label("code").fill("x = 1")
    page.get_by_label("language").press_sequentially("p")
    page.wait_for_function("() => [...document.querySelectorAll('#tool-detail datalist option')]"
                           ".map(o => o.value).join() === 'python,perl,php'")
    params = wait_for(lambda: [p for p in sent(sdk, "completion/complete") if p["argument"]["name"] == "language"],
                      5, message="completion sent")[-1]
    assert params["context"] == {"arguments": {"code": "x = 1"}} and params["ref"]["name"] == "review_code"
    page.get_by_label("language").fill("rust")
    page.get_by_role("button", name="Get prompt").click()
    message = page.locator("#prompt-output .message.role-user")
    message.wait_for()
    assert message.locator(".role").inner_text().lower() == "user"
    assert "Please review this rust code:\n\nx = 1" in message.locator("pre.text").inner_text()
    assert real_errors(page) == []


@pytest.mark.browser
def test_browser_server_text_in_the_panels_is_never_markup(page, rich):
    open_page(page, rich)
    page.get_by_role("button", name=re.compile("^<img src=x")).click()
    page.get_by_role("button", name="Read", exact=True).click()
    page.locator("#resource-read-output .rpc-error").wait_for()
    assert "onerror=window.__xss=1" in page.locator("#resource-read-output").inner_text()
    page.get_by_role("button", name=re.compile("^hostile")).click()
    field = page.get_by_label("onerror=window.__xss=5")
    with page.expect_response("**/completions"):  # answered once the server answered completion/complete
        field.press_sequentially("x")
    assert any(p["argument"]["name"].startswith("a'") for p in sent(rich, "completion/complete"))
    page.get_by_role("button", name="Get prompt").click()
    page.locator("#prompt-output .rpc-error").wait_for()
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("#resources-panel img, #prompts-panel img, #tool-detail img").count() == 0
    assert real_errors(page) == []


def test_templates_alone(tmp_path):
    """The partials with a stub session: no completions capability means no datalist, no hx-post on typing."""
    from flask import Flask, render_template

    from types import SimpleNamespace

    from conftest import ROOT
    from inspector.web.views import panels
    from inspector.web.present import register_filters
    from inspector.client.offer import ServerState

    class Stub:
        def __init__(self):
            self.server = ServerState(state="running", capabilities={"prompts": {}, "resources": {}})
            self.on_notification_hooks = []
            self.timeout = 5.0
            self.calls = {}

        def tool(self, name):
            return None

    app = Flask("t", template_folder=str(ROOT / "templates"))
    app.jinja_env.autoescape = True
    stub = Stub()
    state = PanelState()
    state.follow(stub)
    app.extensions["inspector"] = SimpleNamespace(session=stub, panels=state)
    register_filters(app)
    app.register_blueprint(panels.bp)
    assert len(stub.on_notification_hooks) == 1
    prompt = {"name": "p", "arguments": [{"name": "who", "required": True}, {"name": "how"}]}
    with app.test_request_context():
        html = render_template("partials/_prompt_detail.html", prompt=prompt, server=stub.server)
        assert "<datalist" not in html and "hx-trigger" not in html and 'list="' not in html
        assert 'aria-required="true"' in html and "Get prompt" in html
        stub.server.capabilities["completions"] = {}
        html = render_template("partials/_prompt_detail.html", prompt=prompt, server=stub.server)
        assert html.count("<datalist") == 2 and html.count('hx-trigger="focus once, input changed delay:300ms"') == 2
        html = render_template("partials/_resource_detail.html", resource={"uri": "mem://a"}, server=stub.server,
                               read=None)
        assert "Subscribe" not in html, "no resources.subscribe declared"
        stub.server.capabilities["resources"] = {"subscribe": True}
        html = render_template("partials/_resource_detail.html", resource={"uri": "mem://a"}, server=stub.server,
                               read=None)
        assert "Subscribe</button>" in html
        stub.server.capabilities = {}
        html = render_template("partials/_resources.html", server=stub.server)
        assert "The server offers no resources." in html
        html = render_template("partials/_prompts.html", server=stub.server)
        assert "The server offers no prompts." in html
        # Recording view: read-only, nothing to send.
        html = render_template("partials/_prompt_detail.html", prompt=prompt, server=stub.server, readonly=True)
        assert "<form" not in html and "read-only" in html
