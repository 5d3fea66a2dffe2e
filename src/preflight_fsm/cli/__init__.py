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

# Modules under preflight_fsm.cli that register their commands on `app` when imported.
_COMMAND_MODULES: tuple[str, ...] = ("chat",)


def main() -> None:
    """Console-script entry point."""
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    app()
