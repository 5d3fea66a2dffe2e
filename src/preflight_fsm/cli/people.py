"""``preflight-fsm people enroll NAME``: enroll a person's passkey in the people file.

A one-time link is printed once, on standard error, and never logged; the page it opens, served
on loopback for as long as the command waits, runs the WebAuthn registration. The command exits
0 once the credential is written, 1 when the link expired first (nothing written). See
docs/web.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.report import usage_error

__all__ = ["DEFAULT_ENROLL_PORT", "EXIT_ENROLL_EXPIRED", "people_command"]

DEFAULT_ENROLL_PORT: Final = 8765
"""The loopback port of the enrollment page: a passkey counts only on the origin it was
enrolled on, so the answer page that asks for it listens on the same port."""
EXIT_ENROLL_EXPIRED: Final = 1


@app.command("people")
def people_command(
    action: Annotated[str, typer.Argument(metavar="enroll", help="enroll: add a passkey.")],
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The person's name, as decisions show it.")
    ],
    people_file: Annotated[
        Path | None,
        typer.Option(
            "--people",
            metavar="FILE",
            help="The people file to add to. Default: .preflight-fsm/people.toml.",
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
    """Enroll NAME's passkey: print a one-time link whose page creates it; write it to the
    people file."""
    if action != "enroll":
        raise typer.BadParameter(f"{action!r} is not an action: use enroll", param_hint="ACTION")
    from preflight_fsm.people import DEFAULT_PEOPLE_FILE
    from preflight_fsm.principal import principal_problem
    from preflight_fsm.web import PageListener
    from preflight_fsm.web.enroll import Enrollment

    problem = principal_problem(name)
    if problem is not None:
        raise usage_error(f"NAME {problem}")
    path = people_file or DEFAULT_PEOPLE_FILE
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
