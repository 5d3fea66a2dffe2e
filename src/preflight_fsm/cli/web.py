"""``--web`` on the command line: a session answered on the answer page instead of the terminal
(docs/web.md). The page is served by a loopback listener of its own for as long as the command
waits; the link is printed once, and each answered turn leads the browser to the next."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from preflight_fsm.cli.render import render_outcome
from preflight_fsm.errors import InvalidPeopleFile
from preflight_fsm.people import People
from preflight_fsm.store import Sessions
from preflight_fsm.web import AnswerPage, LinkBook, PageListener
from preflight_fsm.web.signing import SignedAnswerPage

__all__ = ["EXIT_LINK_EXPIRED", "answer_on_page", "enrolled_port"]

EXIT_LINK_EXPIRED: Final = 1
"""The person did not answer a turn before its link expired (the session stays where it was)."""


def answer_on_page(
    sessions: Sessions,
    session_id: str,
    write: Callable[[str], None],
    *,
    link_ttl: float | None = None,
    people: People | None = None,
) -> int:
    """Serve ``session_id`` on the page until it ends; write the link, then the outcome. With
    ``people``, every turn is confirmed with a passkey they list (``web/signing.py``), on the
    loopback port they enrolled on."""
    links = LinkBook(link_ttl) if link_ttl else None
    page = (
        AnswerPage(sessions, links) if people is None else SignedAnswerPage(sessions, people, links)
    )
    port = 0 if people is None else enrolled_port(people)
    with PageListener(page, port=port):
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


def enrolled_port(people: People) -> int:
    """The loopback port the people file's passkeys were enrolled on (their origin's): the
    page that asks for them must be served there. A passkey signs only on the origin it was
    enrolled on and the page listens on one port, so InvalidPeopleFile, naming who enrolled on
    which port and what to do, when no one port serves everybody enrolled on localhost
    (docs/decisions.md D285)."""
    ports: dict[str, list[int]] = {}  # each person's localhost ports, in their file's order
    for person in people:
        if person.rp_id == "localhost":
            local = [int(o.rsplit(":", 1)[1]) for o in person.origins if o.startswith(_LOCAL)]
            if local:
                ports[person.name] = local
    if not ports:
        raise InvalidPeopleFile(
            f"{people.source}: nobody enrolled a passkey on localhost; run preflight-fsm people "
            "enroll NAME first"
        )
    for port in next(iter(ports.values())):  # the first one's, when everybody has it
        if all(port in held for held in ports.values()):
            return port
    raise InvalidPeopleFile(_ports_conflict(people.source, ports))


_LOCAL: Final = "http://localhost:"


def _ports_conflict(source: str, ports: dict[str, list[int]]) -> str:
    by_port: dict[int, list[str]] = {}
    for name, held in ports.items():
        for port in sorted(held):
            by_port.setdefault(port, []).append(name)
    listed = "; ".join(f"{', '.join(names)} on {port}" for port, names in sorted(by_port.items()))
    usual = max(by_port, key=lambda port: (len(by_port[port]), -port))
    return (
        f"{source}: the passkeys were enrolled on different localhost ports ({listed}), and "
        "the signing page is served on one port (a passkey signs only on the origin it was "
        f"enrolled on): enroll everyone on one port (remove the others' entries, then "
        f"preflight-fsm people enroll NAME --port {usual}), or give --people a file listing "
        "only the people of one port"
    )
