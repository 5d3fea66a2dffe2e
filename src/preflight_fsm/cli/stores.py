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
from typing import TYPE_CHECKING, Annotated, Final

import typer

from preflight_fsm.cli.report import check_text, reported, usage_error

if TYPE_CHECKING:
    from preflight_fsm.snapshot import SealKeys
    from preflight_fsm.store import Sessions

__all__ = [
    "FLOW_ENV",
    "STORE_HELP",
    "ExpireOption",
    "FlowOption",
    "SealKeyFileOption",
    "StoreOption",
    "full_id",
    "open_sessions",
]

STORE_HELP: Final = (
    "A SQLite file path (or sqlite:///absolute/path), or a redis://, rediss://, unix://, "
    "postgresql:// or postgres:// URL."
)
"""What ``--store`` accepts, as every command's help says it (a test holds it equal to the
registered backends' prefixes; the store package is not imported to print help)."""

FLOW_ENV: Final = "PREFLIGHT_FSM_FLOW"
"""The flow file every command uses when ``--flow`` is not given (as PREFLIGHT_FSM_STORE)."""

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL_OR_PATH",
        help=f"{STORE_HELP} Default: $PREFLIGHT_FSM_STORE, else .preflight-fsm/sessions.sqlite3 "
        "in the working directory.",
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

SealKeyFileOption = Annotated[
    Path | None,
    typer.Option(
        "--seal-key-file",
        metavar="FILE",
        envvar="PREFLIGHT_FSM_SEAL_KEY_FILE",
        help="Seal snapshots with the first key in FILE (one per line) and accept only "
        "snapshots sealed with one of them. Else $PREFLIGHT_FSM_SEAL_KEYS, comma-separated.",
        show_default=False,
    ),
]

FlowOption = Annotated[
    Path | None,
    typer.Option(
        "--flow",
        metavar="FLOW.toml",
        envvar=FLOW_ENV,
        show_envvar=False,
        help="The flow file new sessions start on; earlier versions kept in "
        f"FLOW.versions/*.toml still run the sessions that started on them. Default: ${FLOW_ENV}, "
        "else the built-in flow.",
        show_default=False,
    ),
]


@contextmanager
def open_sessions(
    store: str | None,
    flow: Path | None,
    *,
    create: bool = False,
    warn: bool = False,
    seal_key_file: Path | None = None,
) -> Iterator[tuple[Sessions, str]]:
    """The Sessions service on the chosen store and flow, with the store's location as it may be
    printed; closed afterwards. Errors end the command (``cli/report.py``), naming the store.

    ``create`` lets a missing SQLite store be created (``start`` only); ``warn`` prints on
    standard error why the store would lose sessions, if it would (a Redis without persistence).
    Seal keys come from ``seal_key_file``, else the environment (C11, ``SealKeys``).
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
        registry = None
        if flow is not None:
            from preflight_fsm.flow_registry import load_registry

            registry = load_registry(flow)
        keys = _seal_keys(seal_key_file)
        opened = open_store(location, create=create)
    try:
        if not opened.exists:
            shown = f"{shown}, which does not exist yet: the first `start` creates it"
        if warn:
            why = opened.durability_warning()
            if why:
                typer.echo(f"preflight-fsm: warning: {why}", err=True)
        with reported(shown):
            yield Sessions(opened, flow=registry, keys=keys), shown
    finally:
        opened.close()


MAX_CANDIDATES_SHOWN: Final = 10


def full_id(sessions: Sessions, given: str) -> str:
    """The stored session ``given`` names: its id, or the start of exactly one live session's id
    (as ``git`` and ``docker`` take a unique prefix). A prefix several ids begin with is a usage
    error listing them; one no id begins with is returned as given (and not found as such)."""
    ids = sessions.store.list()  # the store's own listing: no snapshot is read
    if given in ids:
        return given
    matches = [session_id for session_id in ids if session_id.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:MAX_CANDIDATES_SHOWN])
        more = (
            f" and {len(matches) - MAX_CANDIDATES_SHOWN} more"
            if len(matches) > MAX_CANDIDATES_SHOWN
            else ""
        )
        raise usage_error(
            f"session id {given!r} begins {len(matches)} sessions ({shown}{more}): "
            "type more of the id"
        )
    return given


def _seal_keys(key_file: Path | None) -> SealKeys | None:
    """The seal keys from ``key_file`` or the environment; a bad key is a usage error."""
    import os

    from preflight_fsm.snapshot import SEAL_KEY_FILE_ENV, SEAL_KEYS_ENV, SealKeys

    if key_file is None and not (
        os.environ.get(SEAL_KEYS_ENV) or os.environ.get(SEAL_KEY_FILE_ENV)
    ):
        return None
    try:
        return SealKeys.from_environment(key_file)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
