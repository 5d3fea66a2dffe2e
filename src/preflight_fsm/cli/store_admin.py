"""Commands on the store as a whole: ``list``, ``migrate`` (C10) and ``delete``.

Like ``cli/sessions.py``'s commands, each opens the store (``cli/stores.py``), does one thing
and exits with one of the stable codes of ``cli/report.py``.
"""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.report import EXIT_STORE_UNAVAILABLE, EXIT_UNKNOWN_SESSION, EXIT_USAGE
from preflight_fsm.cli.sessions import JsonOption, SessionArgument, exit_help
from preflight_fsm.cli.stores import (
    FlowOption,
    SealKeyFileOption,
    StoreOption,
    full_id,
    open_sessions,
)

__all__ = ["delete", "list_sessions", "migrate"]


@app.command("list", epilog=exit_help(EXIT_USAGE, EXIT_STORE_UNAVAILABLE))
def list_sessions(
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    seal_key_file: SealKeyFileOption = None,
    on_flow: Annotated[
        str | None,
        typer.Option(
            "--on-flow",
            metavar="FINGERPRINT",
            help="Only the sessions running on this flow version (see the FLOW column).",
        ),
    ] = None,
) -> None:
    """List the stored sessions, most recently changed first, with the flow version each runs on
    (corrupt ones flagged, expired ones left out; nothing is removed)."""
    from preflight_fsm.errors import CorruptSession, SnapshotFlowMismatch
    from preflight_fsm.store import SessionState

    with open_sessions(store, flow, seal_key_file=seal_key_file) as (sessions, shown):
        found = sessions.list()
        registry = sessions.flows
        exists = sessions.store.exists
    now = time.time()

    def flow_of(entry: SessionState | CorruptSession | SnapshotFlowMismatch) -> str:
        return entry.flow if isinstance(entry, SessionState) else ""

    def changed(entry: SessionState | CorruptSession | SnapshotFlowMismatch) -> float:
        return -entry.updated_at if isinstance(entry, SessionState) else float("inf")

    if on_flow is not None:
        found = [e for e in found if isinstance(e, SessionState) and e.flow == on_flow]
    found.sort(key=changed)

    def flow_label(fingerprint: str) -> str:
        registered = registry.get(fingerprint) if fingerprint else None
        if registered is None:
            return fingerprint or "-"
        current = " (current)" if registered is registry.current else ""
        return f"{registered.name}@{fingerprint}{current}"

    if as_json:
        entries = []
        for s in found:
            if isinstance(s, CorruptSession):
                entries.append({"session_id": s.session_id, "corrupt": True, "problem": s.problem})
            elif isinstance(s, SnapshotFlowMismatch):
                entries.append(
                    {
                        "session_id": s.session_id,
                        "corrupt": False,
                        "unregistered_flow": True,
                        "problem": s.problem,
                    }
                )
            else:
                entries.append({**s.to_json(), "corrupt": False, "flow": flow_label(s.flow)})
        # The store as a path or URL scripts can use; whether it exists yet in a field of its own.
        from preflight_fsm.store.location import resolve_location, shown_location

        where = {"store": shown_location(resolve_location(store)), "store_exists": exists}
        typer.echo(json.dumps({**where, "sessions": entries}, ensure_ascii=False))
        return
    if not found:
        typer.echo(f"no sessions in {shown}")
        return
    rows = [("SESSION", "STATE", "TURN", "CHANGED", "FLOW", "INTENTION")]
    for s in found:
        if isinstance(s, CorruptSession):
            rows.append((str(s.session_id), "CORRUPT", "-", "-", "-", s.problem))
        elif isinstance(s, SnapshotFlowMismatch):
            sid = str(s.session_id or "-")
            rows.append((sid, "UNREGISTERED", "-", "-", "?", s.problem))
        else:
            intention = " ".join(s.intention.split())
            intention = intention if len(intention) <= 50 else intention[:49] + "…"
            rows.append(
                (
                    s.id,
                    s.turn_data.state,
                    str(s.turn_data.number),
                    _age(now - s.updated_at),
                    flow_label(flow_of(s)),
                    intention,
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
        typer.echo("  ".join([*padded, row[5]]))


@app.command(epilog=exit_help(EXIT_USAGE, EXIT_STORE_UNAVAILABLE))
def migrate(
    store: StoreOption = None,
    flow: FlowOption = None,
    seal_key_file: SealKeyFileOption = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Migrate sessions whose outcome would differ on the current flow too.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Move every stored session to the current flow by replaying its answers there.

    A session whose answers would lead elsewhere on the new flow stays on its own flow (it keeps
    running there as long as that version is registered) unless --force; the report says where
    each one diverges.
    """
    with open_sessions(store, flow, seal_key_file=seal_key_file) as (sessions, shown):
        moved = sessions.migrate(force=force)
        current = sessions.flows.current
    done = sum(1 for m in moved if m.migrated)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "store": shown,
                    "flow": f"{current.name}@{current.fingerprint}",
                    "migrated": done,
                    "stayed": len(moved) - done,
                    "sessions": [m.to_json() for m in moved],
                },
                ensure_ascii=False,
            )
        )
        return
    target = f"{current.name}@{current.fingerprint}"
    if not moved:
        typer.echo(f"every session in {shown} already runs on {target}")
        return
    for m in moved:
        if m.problem is not None:
            typer.echo(f"{m.session_id}: stays ({m.problem})")
        elif m.migrated:
            note = f"; forced: {m.divergence}" if m.divergence is not None else ""
            typer.echo(f"{m.session_id}: migrated from {m.from_flow}{note}")
        else:
            typer.echo(f"{m.session_id}: stays on {m.from_flow}: {m.divergence}")
    typer.echo(f"{done} migrated to {target}, {len(moved) - done} stayed")


@app.command(epilog=exit_help(EXIT_USAGE, EXIT_UNKNOWN_SESSION, EXIT_STORE_UNAVAILABLE))
def delete(
    session_id: SessionArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete a stored session (an expired or corrupt one too)."""
    with open_sessions(store, None) as (sessions, _):
        session_id = full_id(sessions, session_id)
        sessions.delete(session_id)
    typer.echo(
        json.dumps({"session_id": session_id, "deleted": True})
        if as_json
        else f"deleted {session_id}"
    )


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return f"{int(seconds)}s ago"
