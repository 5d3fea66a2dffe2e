"""Which store and flow a session command uses, from its options: the one place a command
builds its :class:`~preflight_fsm.store.Sessions` (options such as seal keys, C11, go here).

The store is ``--store``, else ``$PREFLIGHT_FSM_STORE``, else ``.preflight-fsm/sessions.sqlite3``
in the working directory. Only a command that starts a session may create it (``create=True``);
every other command reads a store that does not exist yet as empty and creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from preflight_fsm.cli.report import check_text, reported, usage_error

if TYPE_CHECKING:
    from preflight_fsm.store import Sessions

__all__ = ["ExpireOption", "FlowOption", "StoreOption", "open_sessions"]

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL_OR_PATH",
        help="A SQLite file path, or a redis://, rediss:// or unix:// URL. Default: "
        "$PREFLIGHT_FSM_STORE, else .preflight-fsm/sessions.sqlite3 in the working directory.",
        show_default=False,
    ),
]


def _positive(value: float) -> float:
    import math

    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a positive number of seconds, not {value:g}")
    return value


ExpireOption = Annotated[
    float,
    typer.Option(
        "--expire-after",
        metavar="SECONDS",
        envvar="PREFLIGHT_FSM_EXPIRE_AFTER",
        callback=_positive,
        help="Seconds without a step after which a new session expires; kept with the "
        "session, so every later command honours it.",
    ),
]
"""For commands that start sessions (``start``, servers); the session keeps it (D64)."""

FlowOption = Annotated[
    Path | None,
    typer.Option("--flow", metavar="FLOW.toml", help="The flow file the sessions run on."),
]


@contextmanager
def open_sessions(
    store: str | None, flow: Path | None, *, create: bool = False, warn: bool = False
) -> Iterator[tuple[Sessions, str]]:
    """The Sessions service on the chosen store and flow, with the store's location as it may be
    printed; closed afterwards. Errors end the command (``cli/report.py``), naming the store.

    ``create`` lets a missing SQLite store be created (``start`` only); ``warn`` prints on
    standard error why the store would lose sessions, if it would (a Redis without persistence).
    """
    from preflight_fsm.store import STORE_ENV, Sessions, open_store, resolve_location
    from preflight_fsm.store.location import shown_location

    location = resolve_location(store)
    shown = shown_location(location)
    if location == "memory:":
        raise usage_error(
            "the store memory: lives inside one process, and every preflight-fsm command is a "
            "process of its own: use a SQLite file path or a redis:// URL"
        )
    check_text(location, "--store" if store else STORE_ENV)
    with reported(shown):
        loaded = None
        if flow is not None:
            from preflight_fsm.flow import load_flow

            loaded = load_flow(flow)
        opened = open_store(location, create=create)
    try:
        if getattr(opened, "exists", True) is False:
            shown = f"{shown}, which does not exist yet: the first `start` creates it"
        if warn:
            why = getattr(opened, "durability_warning", lambda: None)()
            if why:
                typer.echo(f"preflight-fsm: warning: {why}", err=True)
        with reported(shown):
            yield Sessions(opened, flow=loaded), shown
    finally:
        opened.close()
