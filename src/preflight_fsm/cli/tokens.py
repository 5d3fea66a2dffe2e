"""``preflight-fsm tokens add NAME --tokens FILE``: a bearer token for ``mcp --tokens FILE``.

The token is printed once, on standard output, and only its SHA-256 is written (``mcp/tokens.py``):
hand it to the person NAME names, who keeps it in an environment variable their MCP client reads
(``setup --transport http --public-url URL`` prints that configuration).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.report import usage_error

__all__ = ["tokens_command"]


@app.command("tokens")
def tokens_command(
    action: Annotated[str, typer.Argument(metavar="add", help="add: create a token.")],
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The principal the token authenticates.")
    ],
    tokens: Annotated[
        Path,
        typer.Option("--tokens", metavar="FILE", help="The tokens file (created when absent)."),
    ],
    team: Annotated[
        str | None,
        typer.Option(
            "--team",
            metavar="TEAM",
            help="The team NAME belongs to: principals of one team share their sessions.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Create a bearer token for NAME; print it once (only its hash is kept)."""
    if action != "add":
        raise typer.BadParameter(f"{action!r} is not an action: use add", param_hint="ACTION")
    from preflight_fsm.mcp.tokens import InvalidTokensFile, add_token

    try:
        token = add_token(tokens, name, team)
    except InvalidTokensFile as exc:
        raise usage_error(str(exc)) from None
    typer.echo(token)
    typer.echo(
        f"preflight-fsm: token for {name} added to {tokens} (only its hash); it is shown once: "
        "give it to its holder now. Serve with: preflight-fsm mcp --transport http "
        f"--tokens {tokens}",
        err=True,
    )
