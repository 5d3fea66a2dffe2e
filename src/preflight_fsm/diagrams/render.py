"""SVG and PNG through Graphviz's ``dot`` (the ``graphviz`` package's ``pipe``); the text
formats need nothing installed."""

from __future__ import annotations

from typing import Final, Literal

import graphviz

from preflight_fsm.diagrams.dot import dot_graph, to_dot
from preflight_fsm.diagrams.mermaid import to_mermaid
from preflight_fsm.diagrams.model import Graph
from preflight_fsm.errors import GraphvizFailed, GraphvizMissing

__all__ = ["BINARY_FORMATS", "FORMATS", "Format", "pipe", "render"]

Format = Literal["dot", "svg", "png", "mmd"]
FORMATS: Final[tuple[Format, ...]] = ("dot", "svg", "png", "mmd")
BINARY_FORMATS: Final = frozenset({"png"})


def render(graph: Graph, fmt: Format) -> bytes:
    """``graph`` in ``fmt``; svg and png run Graphviz's ``dot`` (GraphvizMissing without it)."""
    if fmt == "dot":
        return to_dot(graph).encode()
    if fmt == "mmd":
        return to_mermaid(graph).encode()
    if fmt not in FORMATS:
        raise ValueError(f"unknown diagram format {fmt!r}; use one of {', '.join(FORMATS)}")
    return pipe(dot_graph(graph), fmt)


def pipe(dot: graphviz.Digraph, fmt: str) -> bytes:
    """What ``dot -T<fmt>`` makes of ``dot``; GraphvizMissing or GraphvizFailed otherwise."""
    try:
        return dot.pipe(format=fmt, quiet=True)  # dot's stderr goes into GraphvizFailed
    except graphviz.ExecutableNotFound:
        raise GraphvizMissing(
            f"the {fmt} format needs Graphviz's `dot` program, which is not on PATH; "
            "install Graphviz (Debian/Ubuntu: `apt-get install graphviz`), "
            "or use --format dot or mmd"
        ) from None
    except graphviz.CalledProcessError as error:
        reported = (error.stderr or b"").decode(errors="replace").strip()
        raise GraphvizFailed(f"`dot -T{fmt}` failed ({error.returncode}): {reported}") from None
