"""Generated tool forms in a real browser: what the server receives is exactly the typed JSON expected."""

from __future__ import annotations

import json

import pytest

from conftest import fixture_command, live_synced, records_in, wait_for

pytestmark = pytest.mark.browser


def calls_received(inspector) -> list[dict]:
    """The arguments of every tools/call the server got, from the recording."""
    return [r["msg"]["params"].get("arguments") for r in records_in(inspector.record)
            if r.get("kind") == "message" and r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"]


def field(page, key: str):
    return page.locator(f'[name="f:{key}"]')


def open_tool(page, inspector, name: str):
    page.goto(inspector.url)
    live_synced(page)
    page.locator("#tools-list .tool-item", has_text=name).first.click()
    page.locator(".tool-detail", has=page.locator("h3", has_text=name)).wait_for()


def call_and_wait(page, inspector, count_before: int) -> dict:
    page.get_by_role("button", name="Call", exact=True).click()
    return wait_for(lambda: calls_received(inspector)[count_before:] and calls_received(inspector)[count_before], 10,
                    message="the call reached the server")


def test_nested_objects_arrays_enums_nullable_optional_and_a_branch(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "order")
    # Every field's label contains its property name.
    for name in ("name", "email", "priority", "size", "note", "gift_message", "express"):
        assert page.locator("label", has_text=name).count() >= 1, name
    field(page, "/customer/name").fill("Ada")
    field(page, "/customer/email").fill("ada@example.com")
    items = page.locator('fieldset[data-key="/items"]')
    for sku, qty in (("A", "1"), ("B", "2"), ("C", "3")):
        items.get_by_role("button", name="Add item").click()
        row = items.locator(":scope > .f-rows > .f-row").last
        row.locator('input[name$="/sku"]').fill(sku)
        row.locator('input[name$="/qty"]').fill(qty)
    rows = items.locator(":scope > .f-rows > .f-row")
    rows.nth(1).get_by_role("button", name="Remove").click()           # drop B
    rows.nth(1).get_by_role("button", name="Move up").click()          # C before A
    field(page, "/priority").select_option(label="high")
    field(page, "/size").select_option(label="Large")
    page.locator('input[name="null:/gift_message"]').check()
    page.locator('select[name="set:/express"]').select_option("true")
    page.locator('select[name="branch:/delivery"]').select_option(label="Ship")
    page.locator('[name="f:/delivery/@1/street"]').fill("Main St 1")
    page.locator('[name="f:/delivery/@1/floor"]').fill("3")
    tags = page.locator('fieldset[data-key="/tags"]')
    tags.get_by_role("button", name="Add item").click()
    tags.locator('input[name^="f:/tags/"]').last.fill("x")
    received = call_and_wait(page, inspector, 0)
    assert received == {
        "customer": {"name": "Ada", "email": "ada@example.com"},
        "items": [{"sku": "C", "qty": 3}, {"sku": "A", "qty": 1}],
        "priority": "high",
        "size": "l",
        "gift_message": None,
        "express": True,
        "delivery": {"street": "Main St 1", "floor": 3},
        "tags": ["x"],
    }
    # The echo result shows the same typed JSON.
    result = page.locator(".call.state-result")
    result.wait_for()
    assert json.loads(result.locator("pre").first.inner_text())["received"] == received


def test_invalid_input_is_shown_beside_its_field_and_send_anyway_sends_it(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "count")
    field(page, "/n").fill("20")
    page.get_by_role("button", name="Call", exact=True).click()
    error = page.locator(".f-field", has=page.locator('[name="f:/n"]')).locator(".field-error")
    error.wait_for()
    assert "10" in error.inner_text()
    assert calls_received(inspector) == []
    page.get_by_role("button", name="Send anyway").click()
    assert wait_for(lambda: calls_received(inspector), 10, message="sent anyway") == [{"n": 20}]


def test_json_toggle_goes_both_ways_without_losing_input(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "count")
    field(page, "/n").fill("5")
    page.get_by_role("button", name="JSON", exact=True).click()
    editor = page.get_by_label("Arguments (JSON)")
    editor.wait_for()
    assert json.loads(editor.input_value()) == {"n": 5}
    editor.fill('{"n": 7}')
    page.get_by_role("button", name="JSON", exact=True).click()
    field(page, "/n").wait_for()
    assert field(page, "/n").input_value() == "7"
    assert call_and_wait(page, inspector, 0) == {"n": 7}


def test_inputs_survive_switching_tools_and_reloading_and_history_reruns(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "count")
    field(page, "/n").fill("4")
    with page.expect_response(lambda r: r.url.endswith("/tool/draft?name=count")):  # saved before the swap
        field(page, "/n").dispatch_event("change")
    page.locator("#tools-list .tool-item", has_text="order").click()
    page.locator('.tool-detail[data-tool="order"]').wait_for()
    page.locator("#tools-list .tool-item", has_text="count").click()
    page.locator('.tool-detail[data-tool="count"]').wait_for()
    assert field(page, "/n").input_value() == "4"
    page.reload()
    page.locator("#tools-list .tool-item", has_text="count").click()
    page.locator('.tool-detail[data-tool="count"]').wait_for()
    assert field(page, "/n").input_value() == "4"
    call_and_wait(page, inspector, 0)
    history = page.locator(".history li")
    history.first.wait_for()
    history.first.get_by_role("button", name="Re-run").click()
    assert wait_for(lambda: len(calls_received(inspector)) == 2 and calls_received(inspector), 10,
                    message="re-run") == [{"n": 4}, {"n": 4}]


def test_demo_tools_use_forms(page, inspector_factory):
    inspector = inspector_factory([], "--demo")
    open_tool(page, inspector, "Format address")
    assert page.locator('fieldset[data-key="/address"]').count() == 1
    assert page.get_by_label("Arguments (JSON)").count() == 0


def test_key_value_rows_multiselect_date_ref_and_a_json_subtree(page, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    open_tool(page, inspector, "misc")
    labels = page.locator('fieldset[data-key="/labels"]')
    labels.get_by_role("button", name="Add item").click()
    row = labels.locator(":scope > .f-rows > .f-row").last
    row.locator('input[name^="kv-key:"]').fill("env")
    row.locator('input[name^="f:/labels/~kv/"]').fill("prod")
    page.locator('[name="f:/colors"]').select_option(['"red"', '"blue"'])
    field(page, "/when").fill("2026-11-30")
    field(page, "/origin/x").fill("1")
    field(page, "/origin/y").fill("2")
    raw = page.locator('textarea[name="json:/raw"]')
    assert raw.count() == 1, "only the subtree the form cannot express is a JSON box"
    raw.fill('{"any": ["thing", 1]}')
    received = call_and_wait(page, inspector, 0)
    assert received == {"labels": {"env": "prod"}, "colors": ["red", "blue"], "when": "2026-11-30",
                        "origin": {"x": 1, "y": 2}, "raw": {"any": ["thing", 1]}}
