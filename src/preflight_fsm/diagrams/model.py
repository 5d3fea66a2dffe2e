"""One graph model for every picture, read from the engine's transition table (C1).

:func:`flow_graph` turns ``transition_table(flow)`` and the flow's questions into a
:class:`Graph`; the session path (``session.py``) and the flow diff (``diff.py``) are the same
graph with marks on it. The renderers (``dot.py``, ``mermaid.py``) draw what a graph holds and
decide nothing, so the DOT, the SVG and the Mermaid text always say the same.

The lock (``pending_question_answered``, C3) is on every ``answer`` edge, so it tells no edge
apart: it is left off the edge labels and drawn once, as the style of the question states and one
legend line. What is left of an edge's guards is what distinguishes it; the unguarded last edge
reads as what it means (``else: declined or out of budget``).

Everything is built in a fixed order (tuples, insertion-ordered dicts), so the text formats are
byte-identical across runs and ``PYTHONHASHSEED`` values.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Final, Literal

from preflight_fsm import ClarificationMachine, Edge, Flow, default_flow, transition_table
from preflight_fsm.flow import other_text_question
from preflight_fsm.guards import budget_left
from preflight_fsm.states import NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD
from preflight_fsm.table import LOCK as LOCK_GUARD

__all__ = [
    "LOCK_GUARD",
    "Arrow",
    "Ask",
    "Change",
    "Graph",
    "Kind",
    "Node",
    "Role",
    "Taken",
    "Text",
    "arrows_of",
    "asks_of",
    "flow_graph",
    "flow_legend",
    "ordinal",
    "states_of",
    "terminal_states",
]

BUDGET_GUARD: Final = budget_left.__name__
"""The guard an edge needs while the flow's turn budget lasts (C3)."""

Change = Literal["added", "removed", "changed"]
Role = Literal["plain", "visited", "current", "faded"]
Kind = Literal["flow", "session", "diff"]


@dataclass(frozen=True, slots=True)
class Text:
    """A piece of text drawn in a node; ``change`` marks it in a diff."""

    text: str
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """One question a state shows: ``who`` it belongs to (a category), its text and options."""

    text: Text
    options: tuple[Text, ...] = ()
    who: Text | None = None
    notes: tuple[Text, ...] = ()
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """One state, drawn once: the questions it asks, or (in a session) what it ended with."""

    name: str
    terminal: bool
    asks: tuple[Ask, ...] = ()
    lines: tuple[Text, ...] = ()
    role: Role = "plain"
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class Taken:
    """One time a session took an edge: during which turn (0 = at start), with which answers."""

    turn: int
    answers: tuple[tuple[str, str], ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Arrow:
    """One edge of the transition table, as drawn.

    ``order`` is its place among the ``answer`` edges leaving ``source`` (``1st``, ``2nd``, …,
    ``else`` for the unguarded last one; empty for ``start``); ``condition`` is its guards
    without the lock.
    """

    source: str
    trigger: str
    dest: str
    guards: tuple[str, ...]
    order: str
    condition: tuple[str, ...]
    fallthrough: str = ""
    change: Change | None = None
    taken: tuple[Taken, ...] = ()
    faded: bool = False

    @property
    def key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """What identifies the edge across two flows: its ends, trigger and condition."""
        return (self.source, self.trigger, self.dest, self.condition)

    @property
    def edge_id(self) -> str:
        """A stable id, written into DOT and SVG so tests find each table edge in the picture."""
        guards = "+".join(self.condition) or ("else" if self.trigger == "answer" else "none")
        return f"{self.source}__{self.trigger}__{self.dest}__{guards}"

    @property
    def label(self) -> tuple[str, ...]:
        """The lines drawn on the edge: its turns in a path, else its order and condition."""
        if self.taken:
            return tuple(line for taken in self.taken for line in _taken_lines(taken))
        if self.faded:
            return ()
        if self.trigger == "start":
            head = ["at start, if", *self.condition]
        elif self.condition:
            head = [f"{self.order}:", self.condition[0], *(f"& {g}" for g in self.condition[1:])]
        else:
            head = [f"{self.order}:", *textwrap.wrap(self.fallthrough, 16)]
        if self.change == "removed":
            head.append("(removed)")
        return tuple(head)


def _taken_lines(taken: Taken) -> list[str]:
    head = "at start" if taken.turn == 0 else f"turn {taken.turn}"
    lines = [head + (f": {taken.note}" if taken.note else "")]
    lines += [f"{key} = {_clip(value)}" for key, value in taken.answers]
    return lines


def _clip(value: str, width: int = 40) -> str:
    """One line of at most ``width`` characters: answers can be long free text."""
    value = " ".join(value.split())
    return value if len(value) <= width else value[: width - 1] + "…"


@dataclass(frozen=True, slots=True)
class Graph:
    """A picture to render: a header, at most a few legend lines, states and edges."""

    kind: Kind
    title: str
    legend: tuple[str, ...]
    initial: str
    entry: tuple[str, ...]  # text of the entry point: the intention in a session, else nothing
    nodes: tuple[Node, ...]
    arrows: tuple[Arrow, ...]


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``…: the order an edge is tried in, never a path number."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def arrows_of(table: tuple[Edge, ...]) -> tuple[Arrow, ...]:
    """The table's edges as arrows: the lock taken off, each answer edge given its order."""
    arrows: list[Arrow] = []
    seen: dict[str, int] = {}
    for index, edge in enumerate(table):
        condition = tuple(g for g in edge.guards if g != LOCK_GUARD)
        order = ""
        fallthrough = ""
        if edge.trigger == "answer":
            seen[edge.source] = seen.get(edge.source, 0) + 1
            last = _is_last_answer_edge(table, index)
            order = "else" if last and not condition else ordinal(seen[edge.source])
            if not condition:
                # The unguarded edge is taken when no earlier one passed: the pending question was
                # declined, or (when the edge tried just before it needs budget) none was left.
                before = arrows[-1] if arrows and arrows[-1].source == edge.source else None
                budget = before is not None and BUDGET_GUARD in before.condition
                fallthrough = "declined or out of budget" if budget else "declined"
        arrows.append(
            Arrow(
                source=edge.source,
                trigger=edge.trigger,
                dest=edge.dest,
                guards=tuple(edge.guards),
                order=order,
                condition=condition,
                fallthrough=fallthrough,
            )
        )
    return tuple(arrows)


def _is_last_answer_edge(table: tuple[Edge, ...], index: int) -> bool:
    edge = table[index]
    return not any(e.source == edge.source and e.trigger == "answer" for e in table[index + 1 :])


def states_of(arrows: tuple[Arrow, ...]) -> tuple[str, ...]:
    """The states in C1's order, as the machine lists them; any other the table names after."""
    states: list[str] = list(ClarificationMachine.states)
    for arrow in arrows:
        for state in (arrow.source, arrow.dest):
            if state not in states:
                states.append(state)
    return tuple(states)


def terminal_states(arrows: tuple[Arrow, ...]) -> frozenset[str]:
    """The states no edge leaves."""
    sources = {a.source for a in arrows}
    return frozenset(s for s in states_of(arrows) if s not in sources)


def asks_of(flow: Flow, state: str) -> tuple[Ask, ...]:
    """What a state asks, from the flow's data, so a custom flow's picture says its own words."""
    other = Text(flow.other_option)
    if state == NEED_CATEGORY:
        options = (*(Text(c.name) for c in flow.categories), other)
        return (Ask(Text(flow.category_question.text), options),)
    if state == NEED_PRIMARY_FIELD:
        return tuple(
            Ask(
                Text(c.question.text),
                (*(Text(o) for o in c.question.options), other),
                who=Text(c.name),
            )
            for c in flow.categories
        )
    if state == NEED_OTHER:
        return (
            Ask(
                Text(other_text_question("…")),
                notes=(Text("the text owed after"), Text(f"“{flow.other_option}”")),
            ),
        )
    return ()


def flow_graph(flow: Flow | None = None) -> Graph:
    """The picture of ``flow`` (the default flow when None), from ``transition_table(flow)``."""
    flow = flow or default_flow()
    arrows = arrows_of(transition_table(flow))
    terminal = terminal_states(arrows)
    states = states_of(arrows)
    nodes = tuple(
        Node(name=s, terminal=s in terminal, asks=() if s in terminal else asks_of(flow, s))
        for s in states
    )
    return Graph(
        kind="flow",
        title=f"Clarification flow “{flow.name}”, generated from its transition table",
        legend=flow_legend(),
        initial=states[0],
        entry=(),
        nodes=nodes,
        arrows=arrows,
    )


def flow_legend() -> tuple[str, ...]:
    """The two legend lines of the flow picture; the full reading guide is docs/flow.md."""
    return (
        "Bold boxes ask the question shown; their edges are tried 1st, 2nd, …, else, "
        "and only once it is answered (the lock).",
        "Dashed: at session start, when the intention's keywords name one category.",
    )
