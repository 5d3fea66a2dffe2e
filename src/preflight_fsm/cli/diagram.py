"""`preflight-fsm diagram`: draw the flow, one session's path through it, or a flow change."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Final, cast

import typer

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.cli import app
from preflight_fsm.cli.report import CommandFailed, reported, usage_error
from preflight_fsm.cli.stores import STORE_HELP, SealKeyFileOption, full_id, open_sessions
from preflight_fsm.diagrams import (
    BINARY_FORMATS,
    MAX_SCALE,
    Format,
    Graph,
    diff_graph,
    flow_diff,
    flow_graph,
    render,
    session_graph,
)
from preflight_fsm.errors import InvalidSnapshot, PreflightFsmError
from preflight_fsm.flow import Flow, default_flow, load_flow
from preflight_fsm.flow_registry import load_registry
from preflight_fsm.snapshot.model import MAX_SNAPSHOT_BYTES


class DiagramFormat(StrEnum):
    """The formats ``diagram`` writes; svg and png need Graphviz's ``dot``; text and markdown
    are the list of a ``--diff``."""

    dot = "dot"
    svg = "svg"
    png = "png"
    mmd = "mmd"
    text = "text"
    markdown = "markdown"


LIST_FORMATS = frozenset({"text", "markdown"})
_BY_SUFFIX: Final = {
    ".dot": "dot",
    ".gv": "dot",
    ".svg": "svg",
    ".png": "png",
    ".mmd": "mmd",
    ".txt": "text",
    ".md": "markdown",
}
"""The format an ``--out`` file's extension names."""


def _format_of(fmt: DiagramFormat | None, out: Path | None) -> str:
    """The format to write: ``--format``, else the one ``--out``'s extension names, else dot; a
    ``--format`` the extension contradicts is refused (a .png holding DOT text opens nowhere)."""
    named = _BY_SUFFIX.get(out.suffix.lower()) if out is not None else None
    if fmt is None:
        return named or "dot"
    if named is not None and named != fmt.value:
        raise _usage(
            f"--format {fmt.value} but --out {out} names {named}: drop --format, or name the file "
            f"*.{fmt.value}"
        )
    return fmt.value


def _fail(message: str) -> CommandFailed:
    """A diagram that cannot be drawn or written (exit 1), reported as every command reports."""
    return CommandFailed("diagram_failed", message, 1)


def _usage(message: str) -> CommandFailed:
    return usage_error(message)


def _diff_side(spec: Path, flow_file: Path | None) -> Flow:
    """One side of ``--diff``: a flow TOML file, or with ``--flow FILE`` one of its registered
    versions (C10) by fingerprint, or ``current``."""
    if spec.exists() or flow_file is None:
        return load_flow(spec)
    registry = load_registry(flow_file)
    found = registry.current if str(spec) == "current" else registry.get(str(spec))
    if found is None:
        raise _usage(
            f"{spec} is neither a flow file nor a version registered beside {flow_file} "
            f"({registry.describe()})"
        )
    return found


def _stored_path(
    session_id: str, store: str | None, flow_file: Path | None, seal_key_file: Path | None
) -> Graph:
    """The path of a stored session, read without changing it (as ``preflight-fsm show``)."""
    with open_sessions(store, flow_file, seal_key_file=seal_key_file) as (sessions, _):
        machine, _record = sessions.load(full_id(sessions, session_id))
    return session_graph(machine)


@app.command()
def diagram(
    fmt: Annotated[
        DiagramFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="dot or mmd (Mermaid) text; svg or png through Graphviz's `dot`; "
            "text or markdown: the list of a --diff. Default: --out's extension, else dot.",
            show_default=False,
        ),
    ] = None,
    scale: Annotated[
        float,
        typer.Option(
            "--scale",
            metavar="FACTOR",
            help=f"svg and png: this many times the natural size (up to {MAX_SCALE:g}).",
        ),
    ] = 1.0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Write here instead of stdout (png needs it).",
            dir_okay=False,
        ),
    ] = None,
    flow_file: Annotated[
        Path | None,
        typer.Option(
            "--flow",
            metavar="FLOW.toml",
            help="A flow TOML file; its own diagram is drawn.",
            dir_okay=False,
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", metavar="SESSION_ID", help="Draw a stored session's path."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar="URL_OR_PATH",
            help=f"Where --session is stored (as in `preflight-fsm show`). {STORE_HELP} "
            "Default: $PREFLIGHT_FSM_STORE, else .preflight-fsm/sessions.sqlite3.",
            show_default=False,
        ),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            "--snapshot",
            metavar="FILE",
            help="A session snapshot (JSON): draw that session's path through the flow.",
            dir_okay=False,
        ),
    ] = None,
    diff: Annotated[
        tuple[Path, Path] | None,
        typer.Option(
            "--diff",
            metavar="OLD NEW",
            help="Draw what changes from one flow to the other (text or markdown: the list): "
            "two flow files, or with --flow FILE two of its versions by fingerprint or `current`.",
        ),
    ] = None,
    seal_key_file: SealKeyFileOption = None,
) -> None:
    """Write a diagram generated from the engine's table: the flow, a session's path, or a diff."""
    chosen = [
        name
        for name, value in (("--session", session), ("--snapshot", snapshot), ("--diff", diff))
        if value is not None
    ]
    if len(chosen) > 1:
        raise _usage(f"{' and '.join(chosen)} draw different pictures: pass one of them")
    if store is not None and session is None:
        raise _usage("--store says where --session is stored: pass --session ID with it")
    fmt_name = _format_of(fmt, out)
    if not 0 < scale <= MAX_SCALE:
        raise _usage(f"--scale {scale:g} is out of range: pass more than 0, at most {MAX_SCALE:g}")
    if scale != 1.0 and fmt_name not in ("svg", "png"):
        raise _usage(f"--scale sizes svg and png pictures, not {fmt_name}")
    if fmt_name in LIST_FORMATS and diff is None:
        raise _usage(f"--format {fmt_name} lists a flow change: pass --diff OLD.toml NEW.toml")
    if out is None and fmt_name in BINARY_FORMATS:
        raise _usage(f"{fmt_name} is binary: pass --out FILE.{fmt_name}")
    try:
        content = _drawn(fmt_name, flow_file, session, store, snapshot, diff, seal_key_file, scale)
    except PreflightFsmError as exc:  # what no exit code of its own names: a diagram failure
        raise _fail(str(exc)) from None
    if out is None:
        sys.stdout.write(content.decode())
        return
    try:
        out.write_bytes(content)
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror}") from None


def _drawn(
    fmt_name: str,
    flow_file: Path | None,
    session: str | None,
    store: str | None,
    snapshot: Path | None,
    diff: tuple[Path, Path] | None,
    seal_key_file: Path | None,
    scale: float = 1.0,
) -> bytes:
    """The picture (or a diff's list) the options ask for, as bytes."""
    with reported(store if session is not None else None):
        if diff is not None:
            old, new = (_diff_side(side, flow_file) for side in diff)
            if fmt_name in LIST_FORMATS:
                changes = flow_diff(old, new)
                text = changes.to_markdown() if fmt_name == "markdown" else changes.to_text()
                return text.encode()
            return render(diff_graph(old, new), cast(Format, fmt_name), scale)
        flow = load_flow(flow_file) if flow_file is not None else None
        if session is not None:
            graph = _stored_path(session, store, flow_file, seal_key_file)
        elif snapshot is not None:
            try:
                data = read_bounded(snapshot, MAX_SNAPSHOT_BYTES)
            except OSError as exc:
                raise _fail(f"cannot read snapshot {snapshot}: {exc.strerror}") from None
            except Unreadable as exc:
                raise _usage(f"the snapshot file {snapshot} {exc.problem}") from None
            try:
                graph = session_graph(data, flow or default_flow())
            except InvalidSnapshot as exc:  # the file given is no snapshot: a usage error
                raise _usage(f"{snapshot}: {exc}; pass a session snapshot (JSON)") from None
        else:
            graph = flow_graph(flow)
        return render(graph, cast(Format, fmt_name), scale)
