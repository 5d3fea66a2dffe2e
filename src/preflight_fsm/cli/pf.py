"""``preflight-fsm pf ARGS…``: Preflights' own command line on the engine (docs/preflights.md)."""

from __future__ import annotations

import sys

import typer

from preflight_fsm.cli import app

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


@app.command(
    "pf",
    context_settings=_PASS_THROUGH,
    add_help_option=False,
    help="Preflights' `pf` (start, answer, status, resume, reset) with preflight-fsm as its "
    "clarification engine: the same arguments, prompts and files. `preflight-fsm pf --help`.",
)
def pf(ctx: typer.Context) -> None:
    """Run ``pf`` with every argument as given; exit with its code."""
    try:
        from preflight_fsm.integrations.preflights.command_line import run_pf
    except ImportError:
        from preflight_fsm.extras import install_hint

        print(
            "✗ Error: `preflight-fsm pf` needs Preflights; install it with: "
            + install_hint("preflights"),
            file=sys.stderr,
        )
        raise typer.Exit(2) from None
    raise typer.Exit(run_pf(ctx.args, prog_name="preflight-fsm pf"))
