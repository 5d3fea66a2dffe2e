"""The `preflight-fsm` command line. Each command lives in a module of its own under ``cli/``."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="preflight-fsm",
    help="Deterministic clarification sessions for Preflights, as a finite-state machine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    # A callback keeps `app` a group even while it has a single command: without it typer runs a
    # lone command as the program itself, and `preflight-fsm chat "..."` is refused.
    pass


# Modules under preflight_fsm.cli that register their commands on `app` when imported.
_COMMAND_MODULES: tuple[str, ...] = ("chat", "check", "diagram", "pf", "sessions")


def main() -> None:
    """Console-script entry point."""
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    app()
