"""The answer page over HTTP: routes, security headers, bounds and the cross-site checks.

The page is reached by the person's browser with its link (a capability, ``links.py``), never
with an MCP token. Every response carries a strict Content-Security-Policy (nothing but this
server's own stylesheet and passkey script), ``Referrer-Policy: same-origin`` (so Chromium sends
the page's real Origin on the form's POST, and the link never leaves in a Referer) and
``no-store``. A POST must come from the page's own origin, as a small urlencoded form (or, for a
passkey, JSON) read within a time bound, and carry the link's cross-site token (``page.py``
checks it).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Final
from urllib.parse import parse_qs

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from preflight_fsm.web.html import STYLESHEET, STYLESHEET_PATH, notice_page
from preflight_fsm.web.links import ENROLL_PATH
from preflight_fsm.web.page import PAGE_PATH, AnswerPage, PageReply
from preflight_fsm.web.script import SCRIPT, SCRIPT_PATH

__all__ = [
    "MAX_FORM_BYTES",
    "READ_TIMEOUT",
    "SECURITY_HEADERS",
    "LinkRedaction",
    "asset_routes",
    "page_app",
    "page_routes",
    "read_body",
    "read_json",
]

MAX_FORM_BYTES: Final = 64 * 1024
"""The largest form body the page reads (413 beyond): a turn's answers are a few hundred bytes."""
READ_TIMEOUT: Final = 10.0
"""Seconds a client has to send a form's body (408 after)."""
MAX_FIELDS: Final = 64

SECURITY_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

_TOKEN: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")


class LinkRedaction(logging.Filter):
    """Keeps links out of access logs: a path under the answer page's or the enrollment's
    prefix loses its token."""

    _PATH: Final = re.compile(f"({re.escape(PAGE_PATH)}|{re.escape(ENROLL_PATH)})" + r"[^\s\"?]*")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                self._PATH.sub(r"\1[link]", a) if isinstance(a, str) else a for a in record.args
            )
        if isinstance(record.msg, str):
            record.msg = self._PATH.sub(r"\1[link]", record.msg)
        return True


def _reply(reply: PageReply) -> Response:
    if reply.location is not None:
        return RedirectResponse(reply.location, status_code=303, headers=SECURITY_HEADERS)
    return HTMLResponse(reply.html, status_code=reply.status, headers=SECURITY_HEADERS)


def _refused(status: int, title: str, message: str) -> Response:
    return HTMLResponse(notice_page(title, message), status_code=status, headers=SECURITY_HEADERS)


def _unknown(page: AnswerPage) -> Response:
    return _reply(page.gone("unknown"))


def _expected_origin(page: AnswerPage, request: Request) -> str:
    if page.base_url:  # an origin: scheme://host[:port]
        return page.base_url.rstrip("/").lower()
    return f"{request.url.scheme}://{request.headers.get('host', '')}".lower()


async def read_body(request: Request) -> bytes | Response:
    """The request's body, at most :data:`MAX_FORM_BYTES` read within :data:`READ_TIMEOUT`,
    or the page saying why not."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_FORM_BYTES):
        return _refused(413, "The form is too large", "Nothing was changed.")
    body = bytearray()
    try:
        with anyio.fail_after(READ_TIMEOUT):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_FORM_BYTES:
                    return _refused(413, "The form is too large", "Nothing was changed.")
    except TimeoutError:
        return _refused(408, "The form took too long to arrive", "Nothing was changed.")
    return bytes(body)


async def _read_form(request: Request) -> dict[str, list[str]] | Response:
    body = await read_body(request)
    if isinstance(body, Response):
        return body
    try:
        text = body.decode("utf-8")
        return parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        return _refused(400, "The form could not be read", "Nothing was changed.")


async def read_json(request: Request) -> Any | Response:
    """The request's JSON body (None when it is not JSON), read as :func:`read_body` reads."""
    try:
        body = await read_body(request)
    except ClientDisconnect:
        return Response(status_code=400)
    if isinstance(body, Response):
        return body
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None


def asset_routes() -> list[Route]:
    """The stylesheet and the passkey script, the pages' only assets, from this server."""

    async def asset(request: Request) -> Response:
        script = request.url.path == SCRIPT_PATH
        return Response(
            SCRIPT if script else STYLESHEET,
            media_type="text/javascript" if script else "text/css",
            headers=SECURITY_HEADERS | {"cache-control": "max-age=3600"},
        )

    return [
        Route(STYLESHEET_PATH, asset, methods=["GET"]),
        Route(SCRIPT_PATH, asset, methods=["GET"]),
    ]


def page_routes(page: AnswerPage) -> list[Route]:
    """The page's routes, to mount on any Starlette application (the HTTP server's too)."""

    async def show(request: Request) -> Response:
        token = request.path_params["token"]
        if not _TOKEN.fullmatch(token):
            return _unknown(page)
        return _reply(await anyio.to_thread.run_sync(page.show, token))

    async def answer(request: Request) -> Response:
        token = request.path_params["token"]
        if not _TOKEN.fullmatch(token):
            return _unknown(page)
        origin = request.headers.get("origin", "").lower()
        if origin != _expected_origin(page, request):
            return _refused(
                403,
                "This form was refused",
                "Answers are taken only from this server's own page (the request came from "
                "another origin, or from none). Nothing was changed.",
            )
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            return _refused(415, "This form was refused", "Send the page's own form.")
        try:
            form = await _read_form(request)
        except ClientDisconnect:
            return Response(status_code=400)
        if isinstance(form, Response):
            return form
        return _reply(await anyio.to_thread.run_sync(page.answer, token, form))

    async def sign(request: Request) -> Response:
        from preflight_fsm.web.signing import SignedAnswerPage

        token = request.path_params["token"]
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if not isinstance(page, SignedAnswerPage) or not _TOKEN.fullmatch(token):
            return JSONResponse({"message": "Nothing is signed here."}, 404)
        if request.headers.get("origin", "").lower() != _expected_origin(page, request) or (
            kind != "application/json"
        ):
            message = "Only this server's own page may sign. Nothing was recorded."
            return JSONResponse({"message": message}, 403, headers=SECURITY_HEADERS)
        posted = await read_json(request)
        if isinstance(posted, Response):
            return posted
        status, message, following = await anyio.to_thread.run_sync(page.sign, token, posted)
        reply = {"message": message, "next": following}
        return JSONResponse(reply, status, headers=SECURITY_HEADERS)

    return [
        Route(PAGE_PATH + "{token}", show, methods=["GET"]),
        Route(PAGE_PATH + "{token}", answer, methods=["POST"]),
        Route(PAGE_PATH + "{token}/sign", sign, methods=["POST"]),
        *asset_routes(),
    ]


def page_app(page: AnswerPage) -> Starlette:
    """The page alone, as an application (what the loopback listener serves)."""
    return Starlette(routes=page_routes(page))
