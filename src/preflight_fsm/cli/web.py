"""``--web`` on the command line: a session answered on the answer page instead of the terminal
(docs/web.md). The page is served by a loopback listener of its own for as long as the command
waits; the link is printed once, and each answered turn leads the browser to the next."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from preflight_fsm.cli.render import render_outcome
from preflight_fsm.store import Sessions
from preflight_fsm.web import AnswerPage, LinkBook, PageListener

__all__ = ["EXIT_LINK_EXPIRED", "answer_on_page"]

EXIT_LINK_EXPIRED: Final = 1
"""The person did not answer a turn before its link expired (the session stays where it was)."""


def answer_on_page(
    sessions: Sessions,
    session_id: str,
    write: Callable[[str], None],
    *,
    link_ttl: float | None = None,
) -> int:
    """Serve ``session_id`` on the page until it ends; write the link, then the outcome."""
    page = AnswerPage(sessions, LinkBook(link_ttl) if link_ttl else None)
    with PageListener(page):
        link = page.link(session_id)
        if link is not None:
            write(f"Answer in your browser (this link is for you alone; it expires): {link}")
        machine = page.until_finished(session_id, page.links.ttl)
    if machine is None:
        write(
            "preflight-fsm: the link expired before the turn was answered; the session is "
            "where it was (run the command again for a new link)"
        )
        return EXIT_LINK_EXPIRED
    write(render_outcome(machine.turn, machine.flow))
    return 0
