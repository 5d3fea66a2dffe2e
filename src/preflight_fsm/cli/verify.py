"""`preflight-fsm verify PATH...`: check decision files offline, with only the repository.

The checks and the outcomes are ``preflight_fsm/verify.py``'s; this prints one line per file (or
``--json``) and exits with the most severe outcome's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.report import EXIT_USAGE, reported
from preflight_fsm.cli.sessions import JsonOption

__all__ = ["verify"]

_OUTCOMES_HELP = (
    "Exit codes: 0 every file verified; 10 a file is unsigned (no decision record); 11 the "
    "policy (--require) is not met; 12 a file, its flow or the people file cannot be read; 13 a "
    "signature is from nobody in the people file; 14 a file or its record was tampered with; "
    "2 bad usage. The most severe outcome among the files decides."
)


@app.command("verify", epilog=_OUTCOMES_HELP)
def verify(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...", help="Decision files: ADRs, tasks, show --decision output."
        ),
    ],
    people_file: Annotated[
        Path | None,
        typer.Option(
            "--people",
            metavar="FILE",
            help="The people file whose passkeys may sign. Default: .preflight-fsm/people.toml.",
            show_default=False,
        ),
    ] = None,
    require: Annotated[
        str,
        typer.Option(
            "--require",
            metavar="any|user|person",
            help="any: every answer source; user: only the person's channels (user_form, "
            "user_web, user_passkey); person: every step signed with a listed passkey.",
        ),
    ] = "any",
    flow: Annotated[
        Path | None,
        typer.Option(
            "--flow",
            metavar="FLOW.toml",
            help="The flow file the decisions ran on (its earlier versions in "
            "FLOW.versions/ too). Default: the default flow.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> int:
    """Check decision files offline: each is what its attested inputs produce, signed by people
    the people file lists, under the required policy."""
    from preflight_fsm.cli.report import CommandFailed
    from preflight_fsm.flow_registry import default_registry, load_registry
    from preflight_fsm.people import DEFAULT_PEOPLE_FILE, People
    from preflight_fsm.verify import REQUIREMENTS, verify_path

    if require not in REQUIREMENTS:
        raise CommandFailed(
            "usage", f"--require takes any, user or person, not {require!r}", EXIT_USAGE
        )
    with reported():
        flows = load_registry(flow) if flow is not None else default_registry()
    loaded: list[People] = []

    def people() -> People:
        if not loaded:  # read once, and only when a signature needs it
            loaded.append(People.load(people_file or DEFAULT_PEOPLE_FILE))
        return loaded[0]

    verdicts = [verify_path(path, flows=flows, people=people, require=require) for path in paths]
    code = max(v.exit_code for v in verdicts)
    if as_json:
        typer.echo(
            json.dumps(
                {"exit_code": code, "require": require, "files": [v.to_json() for v in verdicts]},
                ensure_ascii=False,
            )
        )
    else:
        for v in verdicts:
            typer.echo(f"{v.outcome}: {v.path}: {v.reason}")
    return code
