"""SVG and PNG through Graphviz's ``dot`` (the ``graphviz`` package's ``pipe``); the text
formats need nothing installed."""

from __future__ import annotations

from typing import Final, Literal

import graphviz

from preflight_fsm.diagrams.dot import dot_graph, to_dot
from preflight_fsm.diagrams.mermaid import to_mermaid
from preflight_fsm.diagrams.model import Graph
from preflight_fsm.errors import GraphvizFailed, GraphvizMissing

__all__ = ["BINARY_FORMATS", "FORMATS", "MAX_SCALE", "Format", "pipe", "render"]

Format = Literal["dot", "svg", "png", "mmd"]
FORMATS: Final[tuple[Format, ...]] = ("dot", "svg", "png", "mmd")
BINARY_FORMATS: Final = frozenset({"png"})


_BASE_DPI: Final = {"png": 96, "svg": 72}  # Graphviz's own resolution for each
MAX_SCALE: Final = 8.0
"""The largest ``scale``: the flow's PNG at 8x is about 6,600 x 5,800 pixels."""


def render(graph: Graph, fmt: Format, scale: float = 1.0) -> bytes:
    """``graph`` in ``fmt``; svg and png run Graphviz's ``dot`` (GraphvizMissing without it),
    ``scale`` times their natural size (0 < scale <= MAX_SCALE; the text formats have none)."""
    if not 0 < scale <= MAX_SCALE:
        raise ValueError(f"scale {scale} is out of range: use more than 0, at most {MAX_SCALE:g}")
    if fmt == "dot":
        return to_dot(graph).encode()
    if fmt == "mmd":
        return to_mermaid(graph).encode()
    if fmt not in FORMATS:
        raise ValueError(f"unknown diagram format {fmt!r}; use one of {', '.join(FORMATS)}")
    drawn = dot_graph(graph)
    if scale != 1.0:
        drawn.graph_attr["dpi"] = f"{_BASE_DPI[fmt] * scale:g}"
    return pipe(drawn, fmt)


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
