"""The Asks panel: the server's sampling and elicitation requests, answered by the person at the page."""

from __future__ import annotations

from urllib.parse import parse_qsl

from flask import Blueprint, render_template, request

from inspector.session.asks import USER_REJECTED
from inspector.protocol import forms
from inspector.web import get_inspector
from inspector.web.views.page import error_partial

bp = Blueprint("asks", __name__)


@bp.app_template_global()
def ask_form(ask):
    """The elicitation's requestedSchema as a form (the same form code as the tools)."""
    schema = ask.params.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else {"type": "object"}
    if isinstance(ask.draft, dict):
        return forms.form_from_arguments(schema, ask.draft)
    return forms.build_form(schema)


@bp.app_template_global()
def call_asks(call) -> list:
    """The asks still waiting that this call caused: its card shows them, with a way to the form."""
    asks = get_inspector().asks
    return asks.for_call(call) if asks and call is not None else []


@bp.app_template_global()
def ask_summary(ask) -> str:
    """One line that says what the server asks (the question, or the last message it wants a reply to)."""
    if ask.mode != "sampling":
        message = ask.params.get("message")
        return message if isinstance(message, str) else ""
    messages = ask.params.get("messages") if isinstance(ask.params.get("messages"), list) else []
    for message in reversed(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            return content["text"]
    return ""


@bp.post("/asks/<int:key>")
def ask_answer(key: int):
    asks = get_inspector().asks
    ask = asks.items.get(key) if asks else None
    if ask is None:
        return error_partial(f"no request #{key} from the server", 404)
    # Parsed from the raw body, in order (array rows are taken in the order they appear): never through
    # request.form, which would consume the body first.
    pairs = parse_qsl(request.get_data(as_text=True), keep_blank_values=True)
    form = dict(pairs)
    action = form.get("action", "")
    errors: dict = {}
    if ask.mode == "sampling":
        if action == "reject":
            asks.answer(key, error=(USER_REJECTED, "The user rejected the sampling request"), summary="rejected")
        else:
            result = {"role": "assistant", "content": {"type": "text", "text": form.get("reply", "")},
                      "model": form.get("model") or "mcp-inspect (a person)",
                      "stopReason": form.get("stopReason") or "endTurn"}
            asks.answer(key, result=result, summary="replied")
    elif action in ("decline", "cancel") or ask.mode == "url":
        asks.answer(key, result={"action": action if action in ("accept", "decline", "cancel") else "decline"},
                    summary=action)
    else:
        schema = ask.params.get("requestedSchema") if isinstance(ask.params.get("requestedSchema"), dict) else {}
        parsed = forms.arguments_from_form(schema, pairs)
        errors = {**forms.problems(schema, parsed.arguments), **parsed.errors}
        ask.draft = parsed.arguments
        if not errors:
            asks.answer(key, result={"action": "accept", "content": parsed.arguments}, summary="accepted")
    return render_template("partials/_asks.html", asks=asks, ask_errors={key: errors} if errors else {}), \
        422 if errors else 200
