"""The answer page put in charge of a Preflights server's rounds: the plain page
(``--answers-from web``/``user``) or the signed one (``person``), served as a route of the HTTP
server or by a loopback listener of its own (docs/web.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from preflight_fsm.integrations.preflights.forms import PreflightsForms
from preflight_fsm.integrations.preflights.page import PreflightsPage
from preflight_fsm.integrations.preflights.signed_page import Challenge, SignedPreflightsPage
from preflight_fsm.mcp.origins import origin_of
from preflight_fsm.mcp.page_rounds import PageRounds
from preflight_fsm.web import LinkBook, PageListener

if TYPE_CHECKING:
    from preflight_fsm.people import People

__all__ = ["preflights_page"]


def preflights_page(
    forms: PreflightsForms,
    transport: str,
    public_url: str | None,
    link_ttl: float | None = None,
    signed: tuple[People, Challenge] | None = None,
    *,
    enrolling: bool = False,
) -> tuple[PageRounds, PreflightsPage, PageListener | None]:
    """The answer page for ``forms``' rounds, put in charge of them: over HTTP served as a route
    of the server at the public URL's origin (the caller mounts ``page_routes``); otherwise by
    a loopback listener that starts with the first link and that the caller stops. With
    ``signed`` (``--answers-from person``: the people file and the rounds' challenges) every
    engine step is signed with a passkey it lists, so the page is served on the origin they
    enrolled on (over stdio the loopback port of their enrollment); InvalidPeopleFile when
    nobody enrolled there, unless the server is ``enrolling`` people there (``mcp --enroll``)."""
    from preflight_fsm.cli.serving import http_rp_id
    from preflight_fsm.cli.web import enrolled_port

    links = LinkBook(link_ttl) if link_ttl else None
    if signed is None:
        page = PreflightsPage(forms, links)
    else:
        page = SignedPreflightsPage(forms, *signed, links)
    listener = None
    if transport == "http":
        page.base_url = origin_of(public_url) if public_url else None
        if isinstance(page, SignedPreflightsPage):
            page.rp_id = http_rp_id(page.people, public_url, enrolling)
        rounds = PageRounds(page)
    else:
        listener = PageListener(page, port=0 if signed is None else enrolled_port(signed[0]))
        rounds = PageRounds(page, listener)
    forms.rounds.page = rounds
    return rounds, page, listener
