"""Forms, the last rough edges (issue 16 item 4; findings 5, 6, 7, 12, 20, 21, 22, 32): the pure form logic in
protocol/forms, then the page (a real mcp-inspect process, its HTTP routes, and a real browser)."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed
from inspector.protocol import forms
from inspector.protocol.forms.schema import classify, takes_no_arguments

SERVER = "asks_forms_server"
SDK_NO_ARGUMENTS = {"type": "object", "properties": {}, "title": "whoamiArguments"}


# -- pure ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("schema,none", [
    (SDK_NO_ARGUMENTS, True),
    ({"type": "object"}, True),
    ({}, True),
    ({"type": "object", "additionalProperties": {"type": "string"}}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
    ({"type": "object", "oneOf": [{"properties": {"a": {}}}]}, False),
    ({"type": "string"}, False),
])
def test_takes_no_arguments(schema, none):
    assert takes_no_arguments(schema) is none


def test_a_tool_without_parameters_has_no_field():
    form = forms.build_form(SDK_NO_ARGUMENTS)
    assert form.widget == "object" and form.children == [] and form.extra is None
    assert forms.arguments_from_form(SDK_NO_ARGUMENTS, forms.default_pairs(form)).arguments == {}
    # arguments typed in the JSON editor are not thrown away when going back to the form
    kept = forms.form_from_arguments(SDK_NO_ARGUMENTS, {"x": 1})
    assert kept.widget == "keyvalue" and [row.kv_key for row in kept.children] == ["x"]


def test_send_anyway_keeps_a_json_number():
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    result = forms.arguments_from_form(schema, [("f:/count", "3.5")])
    assert result.errors == {"/count": ["'3.5' is not an integer"]}
    assert result.arguments == {"count": 3.5} and isinstance(result.arguments["count"], float)
    assert forms.arguments_from_form(schema, [("f:/count", "3x")]).arguments == {"count": "3x"}
    assert forms.arguments_from_form(schema, [("f:/count", "1e999")]).arguments == {"count": "1e999"}


def test_a_required_empty_string_is_a_problem_but_an_optional_one_is_not():
    schema = {"type": "object", "required": ["name", "inner"], "properties": {
        "name": {"type": "string"}, "note": {"type": "string"},
        "inner": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}}}}
    assert forms.validate(schema, {"name": "", "inner": {"x": ""}}) == {}, "jsonschema alone accepts them"
    assert forms.problems(schema, {"name": "", "note": "", "inner": {"x": ""}}) == {
        "/name": ["'name' is required: it is empty"], "/inner/x": ["'x' is required: it is empty"]}
    assert forms.problems(schema, {"name": "a", "inner": {"x": "b"}}) == {}


def test_enum_names_and_const_titles_are_the_choices_titles():
    legacy = classify({"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]}, {})
    assert legacy.options == [("pet-1", "Cats"), ("pet-2", "Dogs")]
    wrong_length = classify({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, {})
    assert wrong_length.options == [("a", "a"), ("b", "b")]
    titled = classify({"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#00f"}]}, {})
    assert titled.options == [("#f00", "Red"), ("#00f", "#00f")]
    multi = forms.build_form({"type": "object", "properties": {"fish": {
        "type": "array", "items": {"anyOf": [{"const": "f-1", "title": "Salmon"}, {"const": "f-2", "title": "Cod"}]},
        "default": ["f-1"]}}})
    fish = multi.children[0]
    assert fish.widget == "multiselect" and fish.options == [('"f-1"', "Salmon"), ('"f-2"', "Cod")]


def test_a_prefilled_default_counts_as_included():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"},
                                                        "default": ["a"]},
                                               "none": {"type": "array", "items": {"type": "string"}, "default": []},
                                               "picks": {"type": "array", "items": {"enum": ["x", "y"]},
                                                         "default": ["x"]}}}
    tags, none, picks = forms.build_form(schema).children
    assert tags.include_control and tags.present, "the default row will be sent: include is ticked"
    assert picks.widget == "multiselect" and picks.present
    assert none.include_control and not none.present, "an empty default sends nothing"
    sent = forms.arguments_from_form(schema, forms.default_pairs(forms.build_form(schema))).arguments
    assert sent == {"tags": ["a"], "picks": ["x"]}


def test_array_and_key_value_rows_are_marked_as_rows():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}},
                                               "env": {"type": "object", "additionalProperties": {"type": "string"}}}}
    tags, env = forms.form_from_arguments(schema, {"tags": ["a"], "env": {"HOME": "/h"}}).children
    assert [r.is_row for r in tags.children] == [True] and tags.template.is_row
    assert [(r.is_row, r.kv_key) for r in env.children] == [(True, "HOME")] and env.template.is_row
    assert not tags.is_row and not env.is_row


# -- the page --------------------------------------------------------------------------------------------------

@pytest.fixture
def inspector(inspector_factory):
    started = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(started)
    return started


def tool_calls(inspector) -> list[dict]:
    return [r["msg"]["params"] for r in records_in(inspector.record) if r.get("kind") == "message"
            and r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"]


def test_the_page_shows_no_field_for_a_tool_without_parameters(inspector):
    for name in ("whoami", "sample"):  # the SDK's empty properties, and a bare {"type": "object"}
        status, _, body = inspector.request("GET", f"/tool?name={name}")
        html = body.decode()
        assert status == 200 and "This tool takes no arguments." in html, name
        assert "key/value" not in html and "Add item" not in html and "arguments</span>" not in html, name


def test_send_anyway_sends_the_number_typed_into_an_integer_field(inspector):
    form = {"mode": "form", "f:/count": "3.5", "f:/name": "x", "action": "call"}
    status, _, body = inspector.post("/tool/call?name=echo", form)
    assert status == 422 and "not an integer" in body.decode() and "Send anyway" in body.decode()
    status, _, _ = inspector.post("/tool/call?name=echo", {**form, "action": "send-anyway"})
    assert status == 200
    sent = wait_for(lambda: tool_calls(inspector), 20, message="the call recorded")
    assert sent[-1]["arguments"] == {"count": 3.5, "name": "x"}


def test_a_required_empty_string_is_flagged_before_sending(inspector):
    status, _, body = inspector.post("/tool/call?name=echo", {"mode": "form", "f:/name": "", "action": "call"})
    assert status == 422 and "&#39;name&#39; is required: it is empty" in body.decode()
    assert tool_calls(inspector) == []


def test_history_shows_arguments_as_text(inspector):
    inspector.post("/tool/call?name=echo", {"mode": "form", "f:/name": 'x" onmouseover="alert(1)',
                                              "f:/city": "Zürich", "action": "call"})

    def history():
        html = inspector.request("GET", "/tool?name=echo")[2].decode()
        return html if 'class="h-args"' in html else None

    html = wait_for(history, 20, message="the call in the history")
    args = html[html.index('class="h-args"'):]
    assert "Zürich" in args[:400] and "\\u00fc" not in args[:400]
    # Text in the title attribute: its quotes are escaped, so a value cannot end the attribute.
    title = html_lib.unescape(re.search(r'class="h-args" title="([^"]*)"', html).group(1))
    assert json.loads(title) == {"name": 'x" onmouseover="alert(1)', "city": "Zürich"}, title


def test_the_client_capabilities_section_stays_open_after_a_change(inspector):
    status, _, body = inspector.post("/server/advertise", {"roots": "on", "sampling": "on"})
    assert status == 200 and '<details class="advertise" open>' in body.decode()


@pytest.mark.browser
def test_rows_controls_and_key_value_rows_in_the_browser(browser, inspector):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = context.new_page()
        page.goto(inspector.url)
        page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text="echo")).first.click()
        pane = page.locator('.tool-detail[data-tool="echo"]')
        pane.wait_for()
        tags = pane.locator('fieldset.f-array[data-key="/tags"]')
        include = tags.locator(":scope > legend .include-choice input")
        assert not include.is_checked()
        tags.get_by_role("button", name="Add item").click()
        row = tags.locator(".f-row").first
        row.locator("input[type=text]").fill("red")
        assert include.is_checked(), "adding an item includes the array"
        assert row.locator(".f-name").count() == 0 and row.locator(".req").count() == 0, \
            "the row does not repeat 'tags *'"
        assert row.locator("label").first.inner_text().strip() == "tags item", "(said to screen readers only)"
        row.get_by_role("button", name="Remove").click()
        assert not include.is_checked(), "removing the last item leaves the array out"
        # "include" of an optional text sits on its input's line
        city = pane.locator(".f-field").filter(has=page.locator('input[name="f:/city"]'))
        assert city.count() == 1
        # JSON → form with a key the schema does not list: a key/value row with a usable value box
        pane.get_by_role("button", name="JSON").click()
        pane.locator("textarea[name=arguments]").fill('{"name": "a", "home": "123"}')
        pane.get_by_role("button", name="JSON").click()
        kv = pane.locator("fieldset.f-keyvalue .f-row").first
        kv.wait_for()
        assert kv.locator(".kv-key input").input_value() == "home"
        assert "value" in kv.locator(".f-row-body label").first.inner_text()
        value_box = kv.locator(".f-row-body textarea, .f-row-body input").first.bounding_box()
        assert value_box["width"] >= 120, value_box
    finally:
        context.close()


@pytest.mark.browser
def test_null_and_include_sit_beside_their_input(browser, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    wait_tools_listed(inspector)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(inspector.url)
        page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text="order")).first.click()
        checks = page.locator('.tool-detail[data-tool="order"] .null-choice')
        choice = checks.first
        field = choice.locator("xpath=ancestor::div[contains(@class,'f-field')][1]")
        box = field.locator("input:not([type=checkbox]), select, textarea").first.bounding_box()
        mine = choice.bounding_box()
        assert mine["y"] < box["y"] + box["height"] and mine["y"] + mine["height"] > box["y"], (mine, box)
    finally:
        context.close()
