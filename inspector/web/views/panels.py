"""Resources, resource templates, prompts, completions and content downloads (their state is session/panels.py).

Reads, prompt gets and completions wait for the server's answer inside the request, bounded by a timeout, so the
answer is the rendered partial; a slow server gets a clear "no answer within N s" instead of a hung page. The
websocket only pushes the sidebar lists (web/regions.py). Audio and binary contents are served here from memory,
with their real type (audio) or as attachments, never as data: URIs (security.md point 7).
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import uritemplate
from flask import Blueprint, Response, render_template, request

from inspector.protocol import content
from inspector.client.rpc import RequestFailed
from inspector.web import get_inspector
from inspector.session import changes

bp = Blueprint("panels", __name__)

WAIT_SECONDS = 30.0
"""Longest a read or a prompt get keeps the request open (less when the session's own timeout is shorter)."""
COMPLETION_SECONDS = 5.0
MAX_VALUES = 100
"""Completion values shown (the protocol caps a response at 100)."""
LIST_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
ARG_PREFIX = "a:"
VAR_PREFIX = "v:"


# -- template globals --------------------------------------------------------------------------------------------

@bp.app_template_global()
def call_view(call) -> dict:
    """A tool call's result as content.result_view sees it, with the tool's outputSchema."""
    tool = get_inspector().session.tool(call.tool)
    return content.result_view(call.result, tool, f"/content/call/{call.id}")


@bp.app_template_global()
def uri_variables(template: Any) -> list[str]:
    """The variable names of an RFC 6570 URI template (none when it does not parse)."""
    if not isinstance(template, str):
        return []
    try:
        return [name for name in uritemplate.URITemplate(template).variable_names if name]
    except Exception:  # a malformed template from a server: show it, offer no fields
        return []


@bp.app_template_global()
def res_key(value: Any) -> str:
    """A short id-safe key for a URI or a name."""
    return hashlib.sha1(str(value).encode("utf-8", "replace")).hexdigest()[:12]


@bp.app_template_global()
def resource_update(uri: Any) -> dict | None:
    """The last notifications/resources/updated for uri: {"t", "count"}, or None."""
    return get_inspector().panels.updates.get(uri) if isinstance(uri, str) else None


@bp.app_template_global()
def is_subscribed(uri: Any) -> bool:
    return isinstance(uri, str) and get_inspector().panels.subscribed(uri, get_inspector().session.server.starts)


@bp.app_template_global()
def can_subscribe(server) -> bool:
    caps = server.capabilities.get("resources")
    return isinstance(caps, dict) and caps.get("subscribe") is True


@bp.app_template_global()
def can_complete(server) -> bool:
    return "completions" in server.capabilities


# -- asking the server ---------------------------------------------------------------------------------------------

def ask(method: str, params: dict, seconds: float) -> tuple[Any, str | None, dict | None]:
    """Send a request and wait at most `seconds`: (result, failure message, JSON-RPC error object)."""
    session = get_inspector().live
    timeout = min(seconds, session.timeout)
    pending = session.request(method, params, timeout=timeout)
    try:
        # The session's timeout watcher fails the request (and cancels it) at its deadline; the margin covers it.
        return pending.wait(timeout + 2.0), None, None
    except RequestFailed as exc:
        if exc.error is not None:
            return None, None, exc.error
        if exc.reason == "timeout":
            return None, f"no answer to {method} within {timeout:g} s (a late answer still shows in the timeline)", None
        return None, str(exc), None


def _form_values(prefix: str) -> dict[str, str]:
    return {key[len(prefix):]: value for key, value in request.form.items() if key.startswith(prefix)}


def _listed(items: list, key: str, value: str) -> dict | None:
    for item in items:
        if isinstance(item, dict) and item.get(key) == value:
            return item
    return None


def _error(message: str, status: int) -> Response:
    return Response(render_template("partials/_error.html", message=message), status=status)


# -- resources -----------------------------------------------------------------------------------------------------

@bp.get("/resources/detail")
def resource_detail():
    uri = request.args.get("uri", "")
    server = get_inspector().session.server
    resource = _listed(server.resources, "uri", uri) or {"uri": uri}
    return render_template("partials/_resource_detail.html", resource=resource, server=server, read=None)


@bp.post("/resources/read")
def resource_read():
    uri = request.form.get("uri", "")
    if not uri:
        return _error("no resource URI given", 400)
    read = do_read(uri)
    if request.form.get("detail"):
        server = get_inspector().session.server
        resource = _listed(server.resources, "uri", uri) or {"uri": uri}
        return render_template("partials/_resource_detail.html", resource=resource, server=server, read=read)
    return render_template("partials/_resource_read.html", read=read)


def do_read(uri: str) -> dict:
    """resources/read for uri, as the _resource_read.html partial takes it."""
    result, failure, error = ask("resources/read", {"uri": uri}, WAIT_SECONDS)
    read = {"uri": uri, "t": time.time(), "failure": failure, "error": error, "view": None}
    if failure is None and error is None:
        read_id = get_inspector().panels.keep("read", result)
        read["id"] = read_id
        read["view"] = content.read_view(result, f"/content/read/{read_id}")
    return read


@bp.post("/resources/subscribe")
@bp.post("/resources/unsubscribe")
def resource_subscription():
    uri = request.form.get("uri", "")
    subscribe = request.path.endswith("/subscribe")
    session = get_inspector().live
    if session.server.era == "modern":
        # 2026-07-28 has no resources/subscribe: the URI joins the subscriptions/listen stream, which is re-opened.
        session.set_resource_subscription(uri, subscribe)
        failure, error = None, None
    else:
        _, failure, error = ask("resources/subscribe" if subscribe else "resources/unsubscribe", {"uri": uri},
                                WAIT_SECONDS)
    state = get_inspector().panels
    if failure is None and error is None:
        if subscribe:
            state.subscriptions[uri] = session.server.starts
        else:
            state.subscriptions.pop(uri, None)
        session.store.signal(changes.RESOURCES)
    problem = failure or (f"JSON-RPC error {error.get('code')}: {error.get('message', '')}" if error else None)
    return render_template("partials/_resource_subscription.html", uri=uri, server=session.server, problem=problem)


@bp.get("/resources/template")
def template_detail():
    uri_template = request.args.get("uriTemplate", "")
    server = get_inspector().session.server
    template = _listed(server.resource_templates, "uriTemplate", uri_template) or {"uriTemplate": uri_template}
    return render_template("partials/_resource_template_detail.html", template=template, server=server)


@bp.post("/resources/templates/read")
def template_read():
    uri_template = request.form.get("uriTemplate", "")
    values = {name: value for name, value in _form_values(VAR_PREFIX).items() if value != ""}
    try:
        uri = uritemplate.URITemplate(uri_template).expand(values)
    except Exception as exc:  # a template the library cannot expand: say so, do not 500
        return render_template("partials/_resource_read.html",
                               read={"uri": uri_template, "failure": f"cannot expand the URI template: {exc}",
                                     "error": None, "view": None, "t": time.time()})
    return render_template("partials/_resource_read.html", read=do_read(uri))


# -- prompts -------------------------------------------------------------------------------------------------------

@bp.get("/prompts/detail")
def prompt_detail():
    name = request.args.get("name", "")
    server = get_inspector().session.server
    prompt = _listed(server.prompts, "name", name)
    if prompt is None:
        return _error(f"the server lists no prompt named {name!r}", 404)
    return render_template("partials/_prompt_detail.html", prompt=prompt, server=server)


@bp.post("/prompts/get")
def prompt_get():
    name = request.form.get("name", "")
    prompt = _listed(get_inspector().session.server.prompts, "name", name) or {"name": name}
    declared = prompt.get("arguments") if isinstance(prompt.get("arguments"), list) else []
    required = {a.get("name") for a in declared if isinstance(a, dict) and a.get("required") is True}
    # Empty optional arguments are left out; empty required ones are flagged first (like a tool form's), and sent
    # with "Get anyway", so the server's own check can be seen.
    arguments = {key: value for key, value in _form_values(ARG_PREFIX).items() if value != "" or key in required}
    empty = sorted(key for key in required if arguments.get(key, "") == "")
    if empty and request.form.get("anyway") != "1":
        return render_template("partials/_prompt_missing.html", name=name, empty=empty), 422
    params: dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = arguments
    result, failure, error = ask("prompts/get", params, WAIT_SECONDS)
    got = {"name": name, "arguments": arguments, "t": time.time(), "failure": failure, "error": error, "view": None}
    if failure is None and error is None:
        prompt_id = get_inspector().panels.keep("prompt", result)
        got["view"] = content.prompt_view(result, f"/content/prompt/{prompt_id}")
    return render_template("partials/_prompt_result.html", got=got)


# -- completions ---------------------------------------------------------------------------------------------------

@bp.post("/completions")
def completions():
    target = request.form.get("list", "")
    if not LIST_ID.match(target):
        return _error("completions need the id of the field's datalist", 400)
    argument = request.form.get("argument", "")
    if request.form.get("ref_type") == "ref/prompt":
        ref, prefix = {"type": "ref/prompt", "name": request.form.get("ref", "")}, ARG_PREFIX
    else:
        ref, prefix = {"type": "ref/resource", "uri": request.form.get("ref", "")}, VAR_PREFIX
    values = _form_values(prefix)
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": values.get(argument, "")}}
    others = {key: value for key, value in values.items() if key != argument and value != ""}
    if others:
        params["context"] = {"arguments": others}
    result, failure, error = ask("completion/complete", params, COMPLETION_SECONDS)
    completion = result.get("completion") if isinstance(result, dict) else None
    suggestions = completion.get("values") if isinstance(completion, dict) else None
    suggestions = [v for v in suggestions if isinstance(v, str)][:MAX_VALUES] if isinstance(suggestions, list) else []
    problem = failure or (f"completion/complete failed: {error.get('message', '')}" if error else None)
    return render_template("partials/_content_completions.html", list_id=target, values=suggestions,
                           has_more=isinstance(completion, dict) and completion.get("hasMore") is True,
                           problem=problem)


# -- content bytes -------------------------------------------------------------------------------------------------

@bp.get("/content/<any(call, read, prompt):kind>/<int:source>/<int:index>")
def content_bytes(kind: str, source: int, index: int):
    if kind == "call":
        call = get_inspector().calls.calls.get(source)
        result = call.result if call is not None else None
    else:
        result = get_inspector().panels.result(kind, source)
    item = content.item_at(kind, result, index)
    blob = content.blob_of(item)
    if blob is None:
        return _error("this content is no longer held by mcp-inspect (read it again)", 404)
    data, mime, name = blob
    response = Response(data, mimetype="application/octet-stream")
    if content.is_audio(mime):
        response.headers["Content-Type"] = mime  # played in the page's <audio>, so it needs its real type
    else:
        response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
