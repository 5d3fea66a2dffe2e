"""``preflight-fsm people enroll|add|list``: the people file whose passkeys sign decisions.

``enroll NAME``: a one-time link is printed once, on standard error, and never logged; the page
it opens, served on loopback for as long as the command waits, runs the WebAuthn registration.
The command exits 0 once the credential is written, 1 when the link expired first (nothing
written).

``add NAME... --from FILE``: copy named entries from another people file (the team server's,
where ``mcp --enroll`` wrote them) into this one (``people.copy_people``): an entry already
there as is stays, a name or credential listed with another entry is refused and nothing is
written. The commit of the file is the review (docs/web.md).

``list``: what the people file lists, one person a line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.report import usage_error

if TYPE_CHECKING:
    from preflight_fsm.people import Person

__all__ = ["DEFAULT_ENROLL_PORT", "EXIT_ENROLL_EXPIRED", "people_command"]

DEFAULT_ENROLL_PORT: Final = 8765
"""The loopback port of the enrollment page: a passkey counts only on the origin it was
enrolled on, so the answer page that asks for it listens on the same port."""
EXIT_ENROLL_EXPIRED: Final = 1


_ACTIONS: Final = ("enroll", "add", "list")


@app.command("people")
def people_command(
    action: Annotated[
        str,
        typer.Argument(
            metavar="enroll|add|list",
            help="enroll NAME: create a passkey through a one-time link; add NAME... --from "
            "FILE: copy entries from another people file; list: show who the file lists.",
        ),
    ],
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="NAME...", help="The person's name, as decisions show it."),
    ] = None,
    people_file: Annotated[
        Path | None,
        typer.Option(
            "--people",
            metavar="FILE",
            help="The people file to add to or list. Default: .preflight-fsm/people.toml.",
            show_default=False,
        ),
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option(
            "--from",
            metavar="FILE",
            help="add: the people file to copy the named entries from (the team server's "
            "--people file, where mcp --enroll wrote them).",
            show_default=False,
        ),
    ] = None,
    port: Annotated[
        int,
        typer.Option(
            "--port",
            min=1,
            max=65535,
            help="The loopback port of the enrollment page (the passkey's origin).",
        ),
    ] = DEFAULT_ENROLL_PORT,
    link_ttl: Annotated[
        float,
        typer.Option("--link-ttl", min=1.0, help="Seconds the link stays good."),
    ] = 15 * 60.0,
) -> None:
    """Enroll a person's passkey, copy entries from another people file, or list one."""
    from preflight_fsm.people import DEFAULT_PEOPLE_FILE

    if action not in _ACTIONS:
        raise usage_error(f"{action!r} is not an action of people: use enroll, add or list")
    names = names or []
    path = people_file or DEFAULT_PEOPLE_FILE
    if (source is not None) != (action == "add"):
        raise usage_error("--from FILE goes with people add NAME... (and only with it)")
    if action == "list":
        if names:
            raise usage_error("people list takes no NAME (--people FILE names the file)")
        _list(path)
    elif action == "add":
        if not names:
            raise usage_error("people add needs the NAME of each entry to copy from --from FILE")
        _add(names, source or path, path)
    elif len(names) != 1:
        raise usage_error("people enroll takes one NAME")
    else:
        _enroll(names[0], path, port, link_ttl)


def _list(path: Path) -> None:
    from preflight_fsm.cli.report import reported
    from preflight_fsm.people import People

    with reported():
        people = People.load(path)
    for person in people:
        typer.echo(_described(person))
    typer.echo(f"preflight-fsm: {path} lists {len(people)} person(s)", err=True)


def _add(names: list[str], source: Path, path: Path) -> None:
    from preflight_fsm.cli.report import reported
    from preflight_fsm.people import People, copy_people

    if source.resolve() == path.resolve():
        raise usage_error(f"--from {source} is the file added to: name the other people file")
    with reported():
        added = copy_people(People.load(source), names, path)
    for person in added:
        typer.echo(f"added {_described(person)}")
    kept = len(dict.fromkeys(names)) - len(added)
    typer.echo(
        f"preflight-fsm: {len(added)} added to {path}"
        + (f", {kept} already there as is" if kept else "")
        + (f"; commit {path} for review: the commit is the review" if added else ""),
        err=True,
    )


def _described(person: Person) -> str:
    return (
        f"{person.name}: credential {person.credential_id}, relying party {person.rp_id}, "
        f"origins {' '.join(person.origins)}"
    )


def _enroll(name: str, path: Path, port: int, link_ttl: float) -> None:
    from preflight_fsm.principal import principal_problem
    from preflight_fsm.web import PageListener
    from preflight_fsm.web.enroll import Enrollment

    problem = principal_problem(name)
    if problem is not None:
        raise usage_error(f"NAME {problem}")
    enrollment = Enrollment(name, path, link_ttl)
    try:
        listener = PageListener(enrollment, port=port)
        listener.start()
    except OSError as exc:
        raise usage_error(
            f"cannot listen on localhost:{port} ({exc}); free the port or choose --port"
        ) from None
    try:
        typer.echo(
            f"Open this link in your browser to enroll {name}'s passkey (it is for you alone, "
            f"good once; it expires): {enrollment.link}",
            err=True,
        )
        person = enrollment.wait()
    finally:
        listener.stop()
    if person is None:
        typer.echo("preflight-fsm: the link expired; nothing was written", err=True)
        raise typer.Exit(EXIT_ENROLL_EXPIRED)
    typer.echo(
        f"preflight-fsm: wrote {person.name}'s passkey to {path}: credential "
        f"{person.credential_id}, relying party {person.rp_id}, origin {person.origins[0]}"
    )
