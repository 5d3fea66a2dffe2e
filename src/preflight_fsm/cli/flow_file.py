"""``preflight-fsm flow show``: the default flow as a file to start a flow of one's own from
(docs/flows.md): a file that names any category replaces the whole list, so a new flow starts
from the whole default one."""

from __future__ import annotations

from typing import Annotated

import typer

from preflight_fsm.cli import app

__all__ = ["flow_command"]


@app.command("flow")
def flow_command(
    action: Annotated[
        str, typer.Argument(metavar="show", help="show: print the default flow's TOML file.")
    ],
) -> None:
    """Print the default flow as a TOML file to start your own from (> mine.toml)."""
    if action != "show":
        raise typer.BadParameter(f"{action!r} is not an action: use show", param_hint="ACTION")
    from preflight_fsm.flow import DEFAULT_FLOW_FILE

    typer.echo(DEFAULT_FLOW_FILE.read_text(encoding="utf-8"), nl=False)
