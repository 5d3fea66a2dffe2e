"""Enrolling a passkey (``preflight-fsm people enroll NAME``, or ``mcp --transport http
--enroll NAME`` on the server's public origin): a one-time page that runs the WebAuthn
registration and writes the credential to the people file (docs/web.md).

The link is a capability like the answer page's (``links.py``): 256 random bits, good once,
expiring, never logged. The page's script (``script.py``, same origin) asks the browser for a
passkey with user verification required; the server verifies the registration
(``passkeys.verify_registration``) and adds the person to the people file, keeping its other
entries; the page then shows the entry as written, to commit to the repository's people file
(D274). A refused registration writes nothing and leaves the link good for another try.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from preflight_fsm.errors import InvalidPeopleFile, PasskeyRefused
from preflight_fsm.passkeys import registration_options, verify_registration
from preflight_fsm.people import DEFAULT_PEOPLE_FILE, People, Person, add_person
from preflight_fsm.web.app import SECURITY_HEADERS, asset_routes, read_json
from preflight_fsm.web.html import document, notice_page
from preflight_fsm.web.links import DEFAULT_LINK_TTL, ENROLL_PATH, TOKEN_BYTES
from preflight_fsm.web.script import SCRIPT_PATH

__all__ = ["ENROLL_PATH", "RP_NAME", "Enrollment", "enroll_app", "enroll_routes"]

RP_NAME: Final = "preflight-fsm"
"""The relying party's name the authenticator shows beside the passkey."""


class Enrollment:
    """One person's enrollment: the link's token, the registration's challenge, and the
    person written once it verified. ``base_url`` is set by whoever serves it (the passkey's
    origin); ``on_enrolled`` is told the person once they are written."""

    def __init__(
        self,
        name: str,
        people_file: Path,
        ttl: float = DEFAULT_LINK_TTL,
        *,
        rp_id: str = "localhost",
        clock: Callable[[], float] = time.monotonic,
        on_enrolled: Callable[[Person], object] = lambda person: None,
    ) -> None:
        self.name = name
        self.on_enrolled = on_enrolled
        self.people_file = people_file
        self.rp_id = rp_id
        self.clock = clock
        self.expires = clock() + ttl
        self.base_url: str | None = None
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.csrf = secrets.token_urlsafe(TOKEN_BYTES)
        self.challenge = secrets.token_bytes(32)
        self.enrolled: Person | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()

    @property
    def link(self) -> str:
        return f"{(self.base_url or '').rstrip('/')}{ENROLL_PATH}{self.token}"

    def wait(self) -> Person | None:
        """Wait until the person enrolled (their entry) or the link expired (None)."""
        self._done.wait(max(0.0, self.expires - self.clock()))
        return self.enrolled

    def problem(self, token: str) -> str | None:
        """Why ``token`` grants nothing now, or None while it is this enrollment's live link."""
        if not secrets.compare_digest(token.encode(), self.token.encode()):
            return "This link is not valid: this server never issued it. Nothing was written."
        if self.enrolled is not None:
            return "This link was already used: the passkey is enrolled. Nothing was changed."
        if self.clock() >= self.expires:
            return (
                "This link has expired. Nothing was written; ask for a new one (people enroll "
                "NAME, or the server restarted with --enroll NAME)."
            )
        return None

    def page(self) -> str:
        options = registration_options(
            rp_id=self.rp_id,
            rp_name=RP_NAME,
            name=self.name,
            challenge=self.challenge,
            people=self._people(),
        )
        body = (
            f"<h1>Enroll a passkey for {escape(self.name)}</h1>\n"
            "<p>Decisions you confirm with this passkey are signed in your name. Your "
            "authenticator will ask for your PIN or biometric.</p>\n"
            f'<div id="passkey" data-ceremony="create" data-options="{escape(options)}" '
            f'data-csrf="{escape(self.csrf)}" data-action="{escape(ENROLL_PATH + self.token)}">\n'
            '<button type="button" id="passkey-button">Create the passkey</button>\n'
            '<p id="passkey-status" role="status" aria-live="polite"></p>\n</div>\n'
            "<noscript><p>Creating a passkey needs JavaScript (WebAuthn has no HTML form)."
            "</p></noscript>\n"
        )
        return document("Enroll a passkey", body, script=SCRIPT_PATH)

    def register(self, token: str, posted: Any) -> tuple[int, dict[str, str]]:
        """Verify the posted registration and write the person; (status, the JSON the page
        shows: its ``message``, and once enrolled the ``entry`` to commit)."""
        status, message = self._register(token, posted)
        if self.enrolled is None or status != 200:
            return status, {"message": message}
        return status, {"message": message, "entry": self.enrolled.as_toml()}

    def _register(self, token: str, posted: Any) -> tuple[int, str]:
        with self._lock:
            problem = self.problem(token)
            if problem is not None:
                return 410, problem
            if not isinstance(posted, dict) or not isinstance(posted.get("csrf_token"), str):
                return 400, "Send the page's own request. Nothing was written."
            credential = posted.get("credential")
            if not isinstance(credential, dict):
                return 400, "Send the page's own request. Nothing was written."
            if not secrets.compare_digest(posted["csrf_token"].encode(), self.csrf.encode()):
                return 403, "The request did not carry this page's token. Nothing was written."
            try:
                person = verify_registration(
                    credential,
                    name=self.name,
                    expected_challenge=self.challenge,
                    rp_id=self.rp_id,
                    origin=(self.base_url or "").rstrip("/"),
                )
                add_person(self.people_file, person)
            except (PasskeyRefused, InvalidPeopleFile) as error:
                return 422, f"Nothing was written: {error}"
            self.enrolled = person
            self._done.set()
            self.on_enrolled(person)
        if self.people_file == DEFAULT_PEOPLE_FILE:  # the repository's own: commit it
            then = f"Commit {self.people_file} for review: the commit is the review."
        else:
            then = (
                "For preflight-fsm verify to accept decisions signed with it, the repository's "
                f"people file ({DEFAULT_PEOPLE_FILE}) must list this entry: commit it there for "
                f'review (or run: preflight-fsm people add "{self.name}" --from '
                f"{self.people_file.name}, naming this server's people file)."
            )
        enrolled = f"Enrolled {self.name}'s passkey in {self.people_file}."
        return 200, f"{enrolled} {then} You can close this page."

    def _people(self) -> People | None:
        try:
            return People.load(self.people_file) if self.people_file.exists() else None
        except InvalidPeopleFile:
            return None  # register() refuses to add to a broken file and says why


def _origin_ok(enrollment: Enrollment, request: Request) -> bool:
    return request.headers.get("origin", "").lower() == (enrollment.base_url or "").lower()


def _of(enrollments: Sequence[Enrollment], token: str) -> Enrollment:
    """The enrollment whose link ``token`` is (else the first, whose ``problem`` says the link
    was never issued)."""
    for enrollment in enrollments:
        if secrets.compare_digest(token.encode(), enrollment.token.encode()):
            return enrollment
    return enrollments[0]


def enroll_routes(enrollments: Sequence[Enrollment]) -> list[Route]:
    """The enrollment pages of ``enrollments`` (at least one), each at its own link, to mount
    on any Starlette application (the HTTP server's too)."""

    async def show(request: Request) -> Response:
        enrollment = _of(enrollments, request.path_params["token"])
        problem = enrollment.problem(request.path_params["token"])
        if problem is not None:
            html = notice_page("This link grants nothing", problem)
            return HTMLResponse(html, status_code=410, headers=SECURITY_HEADERS)
        html = await anyio.to_thread.run_sync(enrollment.page)
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    async def register(request: Request) -> Response:
        enrollment = _of(enrollments, request.path_params["token"])
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if not _origin_ok(enrollment, request) or kind != "application/json":
            message = "Only this server's own page may enroll. Nothing was written."
            return JSONResponse({"message": message}, 403, headers=SECURITY_HEADERS)
        posted = await read_json(request)
        if isinstance(posted, Response):
            return posted
        token = request.path_params["token"]
        status, body = await anyio.to_thread.run_sync(enrollment.register, token, posted)
        return JSONResponse(body, status, headers=SECURITY_HEADERS)

    return [
        Route(ENROLL_PATH + "{token}", show, methods=["GET"]),
        Route(ENROLL_PATH + "{token}", register, methods=["POST"]),
    ]


def enroll_app(enrollment: Enrollment) -> Starlette:
    """The enrollment page, its script and stylesheet, as an application."""
    return Starlette(routes=[*enroll_routes([enrollment]), *asset_routes()])
