"""Diagrams generated from the engine's transition table, for reviewers (issue 15).

One graph model (:mod:`.model`) read from ``transition_table(flow)`` and the flow's questions;
three pictures on it: the flow (:func:`flow_graph`), one session's path (:func:`session_graph`)
and a flow change (:func:`diff_graph`, with :func:`flow_diff` as text). Thin renderers draw a
graph as DOT (:func:`to_dot`), Mermaid (:func:`to_mermaid`), or SVG/PNG through Graphviz
(:func:`render`). ``python -m preflight_fsm.diagrams`` (``make diagrams``) rewrites
``diagrams/`` and the generated parts of ``docs/flow.md``; ``docs/flow.md`` says how to read
each picture.
"""

from preflight_fsm.diagrams.diff import FlowChange, FlowDiff, diff_graph, flow_diff
from preflight_fsm.diagrams.dot import to_dot
from preflight_fsm.diagrams.generate import generated_files, svg_files, write_diagrams
from preflight_fsm.diagrams.mermaid import to_mermaid
from preflight_fsm.diagrams.model import LOCK_GUARD, Arrow, Graph, Node, flow_graph
from preflight_fsm.diagrams.render import BINARY_FORMATS, FORMATS, MAX_SCALE, Format, render
from preflight_fsm.diagrams.session import PathSource, session_graph, step_answers

__all__ = [
    "BINARY_FORMATS",
    "FORMATS",
    "LOCK_GUARD",
    "MAX_SCALE",
    "Arrow",
    "FlowChange",
    "FlowDiff",
    "Format",
    "Graph",
    "Node",
    "PathSource",
    "diff_graph",
    "flow_diff",
    "flow_graph",
    "generated_files",
    "render",
    "session_graph",
    "step_answers",
    "svg_files",
    "to_dot",
    "to_mermaid",
    "write_diagrams",
]
