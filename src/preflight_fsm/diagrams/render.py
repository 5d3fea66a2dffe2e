"""SVG and PNG through Graphviz's ``dot`` program; the text formats need nothing installed."""

from __future__ import annotations

import shutil
import subprocess
from typing import Final, Literal

from preflight_fsm.diagrams.dot import to_dot
from preflight_fsm.diagrams.mermaid import to_mermaid
from preflight_fsm.diagrams.model import Graph
from preflight_fsm.errors import GraphvizFailed, GraphvizMissing

__all__ = ["BINARY_FORMATS", "FORMATS", "Format", "render", "run_dot"]

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
    return run_dot(to_dot(graph), fmt)


def run_dot(source: str, fmt: str) -> bytes:
    """What ``dot -T<fmt>`` makes of ``source``; GraphvizMissing or GraphvizFailed otherwise."""
    program = shutil.which("dot")
    if program is None:
        raise GraphvizMissing(
            f"the {fmt} format needs Graphviz's `dot` program, which is not on PATH; "
            "install Graphviz (Debian/Ubuntu: `apt-get install graphviz`), "
            "or use --format dot or mmd"
        )
    result = subprocess.run(
        [program, f"-T{fmt}"], input=source.encode(), capture_output=True, check=False
    )
    if result.returncode != 0:
        reported = result.stderr.decode(errors="replace").strip()
        raise GraphvizFailed(f"`dot -T{fmt}` failed ({result.returncode}): {reported}")
    return bytes(result.stdout)
