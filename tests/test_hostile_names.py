"""Server-given names in URLs (security.md rows 7 and 10): a tool named `../export`, `a/b`, `x?y#z`, `%2f`, `..`
or htmx markup addresses that tool and nothing else, and nothing but our own text/html partials is ever swapped
into the page, live or from a recording opened with `view`."""

from __future__ import annotations

import json
import sys
from urllib.parse import quote, urlsplit

import pytest
from markupsafe import escape

from conftest import FIXTURES, fixture_command, records_in, wait_for

sys.path.insert(0, str(FIXTURES))
from hostile_names_server import NAMES  # noqa: E402  (the fixture's own list: the test clicks each of them)

def encoded(name: str) -> str:
    """What the page's url_part filter must make of a name: every reserved character percent-encoded."""
    return quote(name, safe="")


FORBIDDEN = ("/export", "/server/stop", "/server/restart", "/raw", "/pwned")


def tools_listed(inspector) -> bool:
    return any(r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {})
               for r in records_in(inspector.record))


def watch_requests(page, inspector) -> list[str]:
    """Every request the page makes, as 'METHOD path' (other hosts keep their whole URL)."""
    seen: list[str] = []
    ours = f"127.0.0.1:{inspector.port}"

    def note(request):
        url = urlsplit(request.url)
        seen.append(f"{request.method} {url.path if url.netloc == ours else request.url}")
    page.on("request", note)
    return seen


def forbidden_requests(seen: list[str]) -> list[str]:
    paths = [r.split(" ", 1)[1] for r in seen]
    return [p for p in paths if p.startswith(FORBIDDEN) or p.endswith(".json") or not p.startswith(("/", "data:"))]


def open_each_tool(page, inspector, *, call: bool) -> None:
    """Click every tool in the list; its own detail must show (and, live, its call must reach the server as it)."""
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    buttons = page.locator("#tools-list .tool-item")
    assert buttons.count() == len(NAMES)
    for index in range(len(NAMES)):
        button = buttons.nth(index)
        name = button.locator(".tool-name").inner_text()
        assert name in NAMES
        button.click()
        wait_for(lambda: page.locator("#tool-detail .tool-detail").get_attribute("data-tool") == name, 10,
                 message=f"the detail of {name!r}")
        assert page.locator("#tool-detail .tool-detail h3 code").inner_text() == name
        if call:
            page.get_by_role("button", name="Call", exact=True).click()
            page.locator("#tool-detail .call.state-result").wait_for()
            assert f"called {name}" in page.locator("#tool-detail .call").inner_text()


@pytest.mark.browser
def test_each_hostile_name_opens_and_calls_that_tool_and_nothing_else(page, inspector_factory):
    inspector = inspector_factory(fixture_command("hostile_names_server"), "--no-watch")
    seen = watch_requests(page, inspector)
    open_each_tool(page, inspector, call=True)
    called = [r["msg"]["params"]["name"] for r in records_in(inspector.record)
              if r.get("kind") == "message" and r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"]
    assert sorted(called) == sorted(NAMES)
    # The JSON toggle and the draft saver post to the tool they belong to, too.
    page.get_by_role("button", name="JSON", exact=True).click()
    last = NAMES[-1]
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(f"/tool/draft?name={encoded(last)}")):
        page.get_by_label("Arguments (JSON)").fill('{"kept": 1}')
    assert forbidden_requests(seen) == [], "a server-given name reached another endpoint"
    assert page.url.startswith(f"http://127.0.0.1:{inspector.port}/")
    kinds = [r.get("kind") for r in records_in(inspector.record)]
    assert "stop" not in kinds
    assert not any(r.get("dir") == "to_server" and "INJECTED-RAW-LINE" in json.dumps(r)
                   for r in records_in(inspector.record))
    assert "running" in page.locator("#server-panel .state").inner_text()
    assert inspector.proc.poll() is None


@pytest.mark.browser
def test_a_recording_with_hostile_names_opens_read_only_and_fetches_nothing_else(page, inspector_factory):
    live = inspector_factory(fixture_command("hostile_names_server"), "--no-watch")
    wait_for(lambda: tools_listed(live), 15, message="tools listed")
    live.stop()
    view = inspector_factory([], view=live.record)
    seen = watch_requests(page, view)
    open_each_tool(page, view, call=False)
    assert forbidden_requests(seen) == []
    assert page.url.startswith(f"http://127.0.0.1:{view.port}/")


@pytest.mark.browser
def test_htmx_swaps_only_our_own_partials(page, inspector_factory):
    """Even if a request reaches a raw endpoint, its answer is not swapped: JSON, NDJSON, plain text and
    attachments are refused by static/app.js, before and after the body is read."""
    inspector = inspector_factory(fixture_command("hostile_names_server"), "--no-watch")
    wait_for(lambda: tools_listed(inspector), 15, message="tools listed")
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    listing = next(r["seq"] for r in records_in(inspector.record)
                   if r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {}))
    asked = next(r["seq"] for r in records_in(inspector.record)
                 if r.get("kind") == "message" and r["msg"].get("method") == "tools/list")
    for url in ("/export", f"/records/{listing}.json", f"/records/{asked}/command"):
        # A button our page never has, made here to stand for a request that went astray.
        page.evaluate("""url => {
            const b = document.createElement('button');
            b.id = 'astray'; b.setAttribute('hx-get', url); b.setAttribute('hx-target', '#tool-detail');
            document.body.append(b); htmx.process(b);
        }""", url)
        with page.expect_response(lambda r, url=url: urlsplit(r.url).path == url):
            page.locator("#astray").click()
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
        # Read at once (not a locator that waits): a swapped answer may have replaced #tool-detail itself.
        detail = page.evaluate("() => document.getElementById('tool-detail')?.innerHTML ?? 'GONE'")
        assert "server/stop" not in detail and "jsonrpc" not in detail and detail != "GONE", (url, detail[:300])
        page.evaluate("() => document.getElementById('astray').remove()")
    assert page.locator("form[hx-post='/server/stop']").count() == 0
    assert "stop" not in [r.get("kind") for r in records_in(inspector.record)]


def test_the_page_addresses_tools_by_a_query_value_and_the_path_form_still_works(page_factory):
    demo = page_factory(fixture_command("hostile_names_server"), "--no-watch")
    wait_for(lambda: demo.session.tool("../export") is not None, 15, message="tools listed")
    status, _, body = demo.request("GET", "/")
    page_html = body.decode()
    assert 'hx-get="/tool?name=..%2Fexport"' in page_html and 'hx-get="/tool?name=%252f"' in page_html
    assert 'hx-get="/tool?name=x%3Fy%23z"' in page_html and 'hx-get="/tools/' not in page_html
    for name in NAMES:
        status, _, body = demo.request("GET", f"/tool?name={encoded(name)}")
        assert status == 200 and f'data-tool="{escape(name)}"' in body.decode(), name
        assert f"/tool/call?name={encoded(name)}" in body.decode()
    # Werkzeug decodes %2F before routing, so the API's path form takes a slash either way.
    assert demo.request("GET", "/tools/a%2Fb")[0] == 200
    assert demo.request("GET", "/tools/a/b")[0] == 200
    status, _, _ = demo.post(f"/tool/draft?name={encoded('x/call')}", {"mode": "json", "arguments": '{"a": 1}'})
    assert status == 204 and demo.services.calls.last_arguments["x/call"] == '{"a": 1}'
    assert demo.request("GET", "/tool?name=nope")[0] == 404
    # The raw endpoints are downloads, never partials.
    asked = next(r["seq"] for r in records_in(demo.record)
                 if r.get("kind") == "message" and r["msg"].get("method") == "tools/list")
    for path in ("/export", f"/records/{asked}.json", f"/records/{asked}/command"):
        status, headers, _ = demo.request("GET", path)
        assert status == 200, path
        assert headers["content-disposition"].startswith("attachment"), path
        assert not headers["content-type"].startswith("text/html"), path
