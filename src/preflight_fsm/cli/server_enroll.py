"""``mcp --transport http --enroll NAME``: the team server enrolls passkeys on its own public
origin, the one its answer page asks for them on (docs/web.md, docs/deploy.md).

Each name gets a one-time enrollment link at the public URL's origin, printed once on standard
error and never logged; the page is a route of the server, with the answer page's protections
(``web/enroll.py``). The credential is written to the server's people file, its entry recording
that origin; under ``--answers-from person`` the answer page signs with it from then on, and
until someone has enrolled it refuses every answer (no passkey it lists can sign).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from preflight_fsm.cli.report import usage_error

if TYPE_CHECKING:
    from preflight_fsm.web import AnswerPage
    from preflight_fsm.web.enroll import Enrollment

__all__ = ["EnrollOption", "enrolling_rp_id", "serve_enrollments"]

EnrollOption = Annotated[
    list[str] | None,
    typer.Option(
        "--enroll",
        metavar="NAME",
        help="HTTP: print a one-time link that enrolls NAME's passkey on the public URL's "
        "origin, served by this server, written to the --people file; repeatable. Under "
        "--answers-from person the server may then start before anyone is enrolled.",
        show_default=False,
    ),
]


def enrolling_rp_id(public_url: str | None) -> str:
    """The relying party of passkeys enrolled on ``public_url``: its host, which must be a
    domain name (WebAuthn refuses an IP address); a usage error otherwise."""
    from urllib.parse import urlsplit

    host = urlsplit(public_url or "").hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if host:
            return host
    raise usage_error(
        "--enroll needs --public-url with a domain name as host (a passkey's relying party "
        "cannot be an IP address), such as https://pf.example/mcp or http://localhost:8000/mcp"
    )


def serve_enrollments(
    server: Any, names: list[str], people_file: Path, public_url: str, page: AnswerPage | None
) -> list[Enrollment]:
    """One enrollment per name, mounted on ``server`` at ``public_url``'s origin; a person
    enrolled is signed with at once when ``page`` (None: the server has none) asks for
    passkeys."""
    from preflight_fsm.mcp.origins import origin_of
    from preflight_fsm.people import People, Person
    from preflight_fsm.principal import principal_problem
    from preflight_fsm.web.enroll import Enrollment, enroll_routes
    from preflight_fsm.web.signing import SignedAnswerPage

    for name in names:
        problem = principal_problem(name)
        if problem is not None:
            raise usage_error(f"--enroll NAME {problem}")
    rp_id = enrolling_rp_id(public_url)

    def enrolled(person: Person) -> None:
        if isinstance(page, SignedAnswerPage):
            page.people = People.load(people_file)  # the file as written, with everyone in it
            page.rp_id = person.rp_id

    enrollments = [
        Enrollment(name, people_file, rp_id=rp_id, on_enrolled=enrolled) for name in names
    ]
    for enrollment in enrollments:
        enrollment.base_url = origin_of(public_url)
    for route in enroll_routes(enrollments):
        methods = sorted((route.methods or {"GET"}) - {"HEAD"})
        server.custom_route(route.path, methods, include_in_schema=False)(route.endpoint)
    return enrollments
