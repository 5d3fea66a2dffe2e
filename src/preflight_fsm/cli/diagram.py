"""`preflight-fsm diagram`: draw a flow, or one session's path through it."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, cast

import typer

from preflight_fsm.cli import app
from preflight_fsm.diagrams import BINARY_FORMATS, Format, flow_graph, render, session_graph
from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.flow import default_flow, load_flow


class DiagramFormat(StrEnum):
    """The formats ``diagram`` writes; svg and png need Graphviz's ``dot``."""

    dot = "dot"
    svg = "svg"
    png = "png"
    mmd = "mmd"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=1)


@app.command()
def diagram(
    fmt: Annotated[
        DiagramFormat,
        typer.Option(
            "--format", "-f", help="dot or mmd (Mermaid) text; svg or png through Graphviz's `dot`."
        ),
    ] = DiagramFormat.dot,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write here instead of stdout (png needs it).", dir_okay=False
        ),
    ] = None,
    flow_file: Annotated[
        Path | None,
        typer.Option("--flow", help="A flow TOML file; its own diagram is drawn.", dir_okay=False),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            "--snapshot",
            help="A session snapshot (JSON): draw that session's path through the flow.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Write the flow's diagram, generated from its machine (or one session's path on it)."""
    fmt_name = fmt.value
    if out is None and fmt_name in BINARY_FORMATS:
        raise _fail(f"{fmt_name} is binary: pass --out FILE.{fmt_name}")
    try:
        flow = load_flow(flow_file) if flow_file is not None else default_flow()
        if snapshot is None:
            graph = flow_graph(flow)
        else:
            try:
                data = snapshot.read_bytes()
            except OSError as exc:
                raise _fail(f"cannot read snapshot {snapshot}: {exc.strerror}") from None
            graph = session_graph(data, flow)
        content = render(graph, cast(Format, fmt_name))
    except PreflightFsmError as exc:
        raise _fail(str(exc)) from None
    if out is None:
        sys.stdout.write(content.decode())
        return
    try:
        out.write_bytes(content)
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror}") from None
