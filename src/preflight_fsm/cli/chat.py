"""`preflight-fsm chat`: run one clarification session in the terminal."""

from __future__ import annotations

import typer

from preflight_fsm.cli import app


@app.command()
def chat(
    intention: str = typer.Argument(..., help="What you want to change, in one sentence."),
) -> None:
    """Ask this turn's questions until the session ends (placeholder: see issue 2)."""
    raise typer.Exit(code=1)
