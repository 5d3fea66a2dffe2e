"""The `preflight-fsm` command line. Each command lives in a module of its own under ``cli/``.

A command's module is imported only when that command runs (``_LAZY``): ``--help`` and ``start``
never pay for ``check``'s or ``diagram``'s imports. Every failure ends the same way, whatever the
command (``cli/report.py``): one ``preflight-fsm:`` line on standard error, or with ``--json`` one
JSON object on standard output, and a stable exit code (usage errors exit 2).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from preflight_fsm.cli.coercion import plain_coercion
from preflight_fsm.cli.help_pages import plain_help

plain_help()
plain_coercion()

# Modules under preflight_fsm.cli that register their commands on `app` when imported.
_COMMAND_MODULES: tuple[str, ...] = (
    "chat",
    "check",
    "conformance",
    "diagram",
    "flow_file",
    "mcp",
    "people",
    "pf",
    "sessions",
    "store_admin",
    "tokens",
    "verify",
)

_LAZY: dict[str, tuple[str, str]] = {
    "chat": ("chat", "Clarify an intention in the terminal, one question at a time."),
    "start": ("sessions", "Start a stored session; print its id and first turn."),
    "answer": ("sessions", "Answer the session's current turn; print the next turn or outcome."),
    "show": ("sessions", "Print where a stored session stands, without changing it."),
    "list": ("store_admin", "List the stored sessions, most recently changed first."),
    "delete": ("store_admin", "Delete a stored session (an expired or corrupt one too)."),
    "migrate": (
        "store_admin",
        "Move stored sessions to the current flow; report those that diverge.",
    ),
    "diagram": ("diagram", "Write the flow's diagram, or one session's path on it."),
    "check": ("check", "Check recorded LLM responses and patches against the contract."),
    "conformance": ("conformance", "Drive an LLM adapter through every path; print agreement."),
    "mcp": ("mcp", "Serve the sessions to AI coding agents over MCP (stdio or HTTP)."),
    "setup": ("setup", "Print the MCP configuration of Claude Code, Cursor and VS Code."),
    "pf": ("pf", "Run Preflights' own command line (pf) with preflight-fsm as its engine."),
    "tokens": ("tokens", "Create a bearer token for a team server (mcp --tokens FILE)."),
    "people": ("people", "Enroll, copy (add --from) or list the passkeys of the people file."),
    "flow": ("flow_file", "Print the default flow as a TOML file to start your own from."),
    "verify": ("verify", "Check decision files offline: replayed, signed, under a policy."),
}
"""Command name -> (the module that defines it, its one-line help for ``--help``)."""


class _LazyGroup(TyperGroup):
    """Imports a command's module only when that command is run or its help is asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        lazy_modules = {module for module, _ in _LAZY.values()}
        for module in _COMMAND_MODULES:
            if module not in lazy_modules:
                _import(module)  # a module without _LAZY entries is registered the slow way
        others = [n for n in (*super().list_commands(ctx), *_registered()) if n not in _LAZY]
        return [*_LAZY, *dict.fromkeys(others)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        if cmd_name in _LAZY:
            _import(_LAZY[cmd_name][0])
        else:
            for module in _COMMAND_MODULES:
                _import(module)
        info = _registered().get(cmd_name)
        if info is None:
            return None
        command = typer.main.get_command_from_info(
            info, pretty_exceptions_short=True, rich_markup_mode=None
        )
        self.commands[cmd_name] = command
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # typer suggests among the commands already imported only: suggest among them all.
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as error:  # typer's own click's UsageError: no such command
            typed = args[0] if args else ""
            message = getattr(error, "message", None)
            if typed.startswith("-") or not isinstance(message, str) or "Did you mean" in message:
                raise
            import difflib

            near = difflib.get_close_matches(typed, self.list_commands(ctx), n=1, cutoff=0.6)
            if near:
                error.message = f"{message.rstrip('.')}. Did you mean {near[0]!r}?"
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The short help of lazy commands comes from _LAZY: listing them imports nothing.
        rows = [(name, _LAZY[name][1]) for name in _LAZY]
        for name in self.list_commands(ctx):
            if name not in _LAZY:
                command = self.get_command(ctx, name)
                rows.append((name, command.get_short_help_str(limit=70) if command else ""))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from preflight_fsm.cli.report import run_reported

        argv = list(sys.argv[1:] if args is None else args)

        def run() -> Any:
            return super(_LazyGroup, self).main(
                argv,
                prog_name or "preflight-fsm",
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )

        code = run_reported(run, argv)
        if standalone_mode:
            sys.exit(code)
        return code


def _import(module: str) -> None:
    importlib.import_module(f"{__name__}.{module}")


def _registered() -> dict[str, Any]:
    return {
        info.name or typer.main.get_command_name(info.callback.__name__): info
        for info in app.registered_commands
        if info.callback is not None
    }


app = typer.Typer(
    name="preflight-fsm",
    cls=_LazyGroup,
    help="Deterministic clarification sessions for Preflights, as a finite-state machine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and errors: Rich costs about 80 ms per command, and errors have one format
    # of our own (cli/report.py).
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        # The package's own constant, not importlib.metadata (~15 ms): the tests check that they
        # agree (test_version_prints_the_installed_version).
        from preflight_fsm import __version__

        typer.echo(f"preflight-fsm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    _version_option: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    # A callback keeps `app` a group even while it has a single command: without it typer runs a
    # lone command as the program itself, and `preflight-fsm chat "..."` is refused.
    pass


@functools.cache
def command() -> Any:
    """The click command of ``app``, built once per process.

    A process that has imported every command module (the tests' warm interpreter) would
    otherwise build all of them at every ``main``: about 60 ms of CPU.
    """
    return typer.main.get_command(app)


def main() -> None:
    """Console-script entry point."""
    command().main()
