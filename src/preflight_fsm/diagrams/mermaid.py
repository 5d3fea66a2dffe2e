"""Mermaid ``flowchart`` text for a :class:`~preflight_fsm.diagrams.model.Graph`, for GitHub.

A ``flowchart`` rather than a ``stateDiagram``: GitHub's renderer draws its quoted labels with
``<br>``, ``<b>``, ``<small>`` and ``<s>``, quoted edge labels take any text (``stateDiagram``
cuts labels at ``:``), and ``linkStyle`` colours single edges. Text is escaped with Mermaid's
entity codes (``#quot;``, ``#lt;``, ``#gt;``, ``#amp;``, ``#35;``), never with backslashes.
Diff marks are signs (``+``, a minus sign, ``~``) and ``<s>``, which survive GitHub's HTML sanitiser
where inline colours may not.
"""

from __future__ import annotations

import json
import textwrap
from typing import Final

from preflight_fsm.diagrams.dot import (
    CHANGE_COLOURS,
    CHANGE_SIGNS,
    FADED,
    GENERATED_NOTE,
    PATH,
    VISITED_FILL,
)
from preflight_fsm.diagrams.model import Arrow, Ask, Graph, Node, Text

__all__ = ["to_mermaid"]

ENTRY: Final = "entry"


def _escape(text: str) -> str:
    """Text safe inside a quoted Mermaid label (entity codes, as Mermaid documents them)."""
    text = " ".join(text.split())
    for bad, good in (("#", "#35;"), ("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(bad, good)
    return text


def _marked(text: Text) -> str:
    body = _escape(text.text)
    if text.change is None:
        return body
    if text.change == "removed":
        body = f"<s>{body}</s>"
    return f"<b>{CHANGE_SIGNS[text.change]}</b>{body}"


def _ask_lines(ask: Ask) -> list[str]:
    who = ask.who
    if who is not None and ask.change is not None:
        who = Text(who.text, ask.change)
    head = f"<b>{_marked(who)}</b> " if who is not None else ""
    lines = [head + _marked(ask.text)]
    options = " · ".join(_marked(o) for o in ask.options)
    if options:
        lines.append(f"<small>{options}</small>")
    lines += [f"<small>{_marked(note)}</small>" for note in ask.notes]
    return lines


def _node_label(node: Node) -> str:
    lines = [f"<b>{_marked(Text(node.name, node.change))}</b>"]
    for ask in node.asks:
        lines += _ask_lines(ask)
    lines += [_marked(line) for line in node.lines]
    return "<br>".join(lines)


def _shape(node: Node) -> str:
    label = f'"{_node_label(node)}"'
    return f"((({label})))" if node.terminal else f"({label})"


def _arrow_line(arrow: Arrow, back: bool) -> str:
    dotted = arrow.trigger == "start" or arrow.change == "removed"
    # A link back up the flow is drawn one rank longer (`--->`): dagre then routes it apart from
    # the forward link between the same two states, and their labels no longer overlap.
    link = ("-..->" if back else "-.->") if dotted else ("--->" if back else "-->")
    label = "<br>".join(_escape(line) for line in arrow.label)
    middle = f'|"{label}"|' if label else ""
    return f"    {arrow.source} {link}{middle} {arrow.dest}"


def _link_style(arrow: Arrow) -> str | None:
    if arrow.taken:
        return f"stroke:{PATH},stroke-width:3px,color:{PATH}"
    if arrow.faded:
        return f"stroke:{FADED},color:{FADED}"
    if arrow.change is not None:
        colour = CHANGE_COLOURS[arrow.change]
        return f"stroke:{colour},stroke-width:2px,color:{colour}"
    return None


def _entry(graph: Graph) -> str:
    if not graph.entry:
        return f'    {ENTRY}(("start"))'
    # Not wrapped here: Mermaid wraps a label to its node width itself.
    return f'    {ENTRY}["{"<br>".join(_escape(line) for line in graph.entry)}"]'


def to_mermaid(graph: Graph) -> str:
    """Mermaid ``flowchart TD`` text of ``graph``, byte-identical for the same graph."""
    lines = [
        "---",
        f"title: {json.dumps(graph.title, ensure_ascii=False)}",
        "---",
        f"%% {GENERATED_NOTE}",
        "flowchart TD",
        "    classDef question stroke-width:3px",
        "    classDef terminal stroke-width:1px",
        "    classDef legend fill:none,stroke:none,text-align:left",
        f"    classDef visited fill:{VISITED_FILL},stroke:{PATH}",
        f"    classDef current fill:{VISITED_FILL},stroke:{PATH},stroke-width:4px",
        f"    classDef faded stroke:{FADED},color:{FADED}",
    ]
    for change, colour in CHANGE_COLOURS.items():
        dash = ",stroke-dasharray:4 3" if change == "removed" else ""
        lines.append(f"    classDef {change} stroke:{colour},stroke-width:3px{dash}")
    if graph.legend:
        # Wrapped: GitHub draws a label on one line as wide as its text.
        parts = [part for line in graph.legend for part in textwrap.wrap(line, 60)]
        legend = "<br>".join(_escape(part) for part in parts)
        lines.append(f'    legend["<small>{legend}</small>"]:::legend')
    lines.append(_entry(graph))
    for node in graph.nodes:
        lines.append(f"    {node.name}{_shape(node)}")
    lines.append(f"    {ENTRY} --> {graph.initial}")
    styles: list[str] = []
    if graph.kind == "session":  # every path begins with its intention
        styles.append(f"    linkStyle 0 stroke:{PATH},stroke-width:3px")
    rank = {node.name: index for index, node in enumerate(graph.nodes)}
    for index, arrow in enumerate(graph.arrows, start=1):  # link 0 is the entry's
        back = rank.get(arrow.dest, 0) < rank.get(arrow.source, 0)
        lines.append(_arrow_line(arrow, back))
        style = _link_style(arrow)
        if style is not None:
            styles.append(f"    linkStyle {index} {style}")
    lines += styles
    for node in graph.nodes:
        classes = ["terminal" if node.terminal else "question"]
        if node.role != "plain":
            classes.append(node.role)
        if node.change is not None:
            classes.append(node.change)
        # One `class` statement per class: Mermaid adds each, and reads a comma as a node list.
        lines += [f"    class {node.name} {name}" for name in classes]
    return "\n".join(lines) + "\n"
