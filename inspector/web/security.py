"""The gate in front of every route: Host (400) → Origin / Sec-Fetch-Site (403) → token (401) → body type (415).

The page can start processes, so it is treated like a root shell on a web page (security.md). The checks run in
before_request because the websocket handshake completes inside the route (web/live.py), too late to refuse.
"""

from __future__ import annotations

import hmac

from flask import Flask, Response, current_app, redirect, request

from inspector.web import get_inspector

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
SAFE_METHODS = ("GET", "HEAD")


def cookie_name(port: int | None) -> str:
    """Cookies ignore ports, so two inspectors on one machine need one cookie name each."""
    return f"mcp_inspect_{port}"


def page_port() -> int | None:
    """The page's own port (the Inspector learns it once the listener is bound)."""
    return get_inspector().port


def allowed_hosts(app: Flask) -> set[str]:
    """The Host header values this listener answers to (DNS rebinding defence)."""
    port = page_port()
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if app.config.get("INSPECTOR_HOST") == "::1":
        hosts = {f"[::1]:{port}", f"localhost:{port}"}
    return hosts


def _deny(status: int, message: str) -> Response:
    return Response(message + "\n", status=status, mimetype="text/plain")


def token_matches(candidate: str | None, token: str) -> bool:
    """Constant-time comparison; a missing or non-ASCII candidate never matches."""
    if not candidate:
        return False
    try:
        return hmac.compare_digest(candidate.encode("ascii"), token.encode("ascii"))
    except UnicodeEncodeError:
        return False


def check_request(token: str) -> Response | None:
    """Refuse the request, or return None to let it through."""
    app = current_app
    hosts = request.headers.getlist("Host")
    if len(hosts) != 1 or hosts[0] not in allowed_hosts(app):
        return _deny(400, "bad Host header: mcp-inspect answers only on its own loopback address")
    host = hosts[0]
    origins = request.headers.getlist("Origin")
    is_websocket = request.headers.get("Upgrade", "").lower() == "websocket"
    if len(origins) > 1 or (origins and origins[0] != f"http://{host}"):
        return _deny(403, "cross-origin request refused")
    if is_websocket and not origins:
        return _deny(403, "websocket without an Origin refused")
    fetch_site = request.headers.get("Sec-Fetch-Site")
    state_changing = request.method not in SAFE_METHODS or is_websocket
    # A top-level GET navigation from another page (the inspector's own "Open recording" link to a viewer on
    # another port, and the redirect after it) changes nothing and cannot be read by that page (no CORS, no
    # framing): let it through to the token check. Everything else must come from our own origin.
    navigation = (request.method == "GET" and not is_websocket and request.headers.get("Sec-Fetch-Mode") == "navigate"
                  and request.headers.get("Sec-Fetch-Dest") == "document")
    if fetch_site is not None and not navigation:
        allowed = ("same-origin",) if state_changing else ("same-origin", "none")
        if fetch_site not in allowed:
            return _deny(403, f"request from another site refused (Sec-Fetch-Site: {fetch_site})")
    if request.path == "/" and request.method == "GET" and "token" in request.args:
        return _trade_token(request.args.get("token"), token)
    if not token_matches(request.cookies.get(cookie_name(page_port())), token):
        return _deny(401, "missing or wrong token: open the URL that mcp-inspect printed")
    if state_changing and not is_websocket:
        content_type = request.mimetype
        if content_type == "text/plain":
            return _deny(415, "text/plain bodies are not accepted")
        if request.headers.get("HX-Request") != "true" and content_type != "application/json":
            return _deny(403, "actions need an htmx request or a JSON body")
    return None


def _trade_token(candidate: str | None, token: str) -> Response:
    """GET /?token=T: set the per-port HttpOnly SameSite=Strict cookie and redirect to a clean URL."""
    if not token_matches(candidate, token):
        return _deny(401, "wrong token: open the URL that mcp-inspect printed")
    response = redirect("/", code=302)
    response.set_cookie(cookie_name(page_port()), token, httponly=True, samesite="Strict",
                        path="/")
    return response


def add_headers(response: Response) -> Response:
    """Security headers on every response."""
    headers = response.headers
    headers["Content-Security-Policy"] = CSP
    headers["X-Content-Type-Options"] = "nosniff"
    headers["X-Frame-Options"] = "DENY"
    headers["Referrer-Policy"] = "no-referrer"
    headers["Cache-Control"] = "no-store"
    headers["Cross-Origin-Opener-Policy"] = "same-origin"
    headers["Cross-Origin-Resource-Policy"] = "same-origin"
    return response


def install(app: Flask, token: str) -> None:
    """Put the gate and the headers on the app."""
    app.before_request(lambda: check_request(token))
    app.after_request(add_headers)
