"""C1's transition table, declared as data, and the check every flow's table passes when built.

Each row is what ``transitions`` itself takes (trigger, source, dest, conditions, before), with
guards and effects named (``guards.py``). Rows leaving one state are tried in the order listed;
the first whose guards all pass is taken. The engine runs exactly these rows, the diagrams draw
exactly these rows, and the transition tests take every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, NotRequired, TypedDict

from preflight_fsm.errors import InvalidFlow
from preflight_fsm.flow_data import DEFAULT_FLOW, FlowData
from preflight_fsm.states import (
    DONE,
    NEED_CATEGORY,
    NEED_OTHER,
    NEED_PRIMARY_FIELD,
    NO_PATCH,
    STATES,
    TERMINAL_STATES,
    StateName,
)

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow

__all__ = [
    "LOCK",
    "TABLE",
    "Edge",
    "Row",
    "Trigger",
    "check_graph",
    "edges_for",
    "transition_table",
]

Trigger = Literal["start", "answer"]

LOCK: Final = "pending_question_answered"
"""C3's one-field-per-turn lock: the first guard of every ``answer`` row."""


class Row(TypedDict):
    """One row as ``transitions.Machine(transitions=[...])`` takes it, plus what it needs."""

    trigger: Trigger
    source: StateName
    dest: StateName
    conditions: list[str]
    before: str
    needs: NotRequired[Literal["keywords", "categories"]]


# `needs` says what a flow must have for the row to be takeable at all: a flow without keywords
# has no shortcut, one without categories no category to move on to. Such rows are left out of
# that flow's table, and the graph check names what their absence leaves unreachable (D18).
TABLE: Final[tuple[Row, ...]] = (
    # -- the session starts: the keyword shortcut (C4) -------------------------------------------
    {"trigger": "start", "source": NEED_CATEGORY, "dest": NEED_PRIMARY_FIELD,
     "conditions": ["intention_names_one_category"],
     "before": "adopt_intention_category", "needs": "keywords"},
    # -- the category question (C6) ----------------------------------------------------------------
    {"trigger": "answer", "source": NEED_CATEGORY, "dest": NEED_PRIMARY_FIELD,
     "conditions": [LOCK, "category_is_known"],
     "before": "adopt_answered_category", "needs": "categories"},
    {"trigger": "answer", "source": NEED_CATEGORY, "dest": DONE,
     "conditions": [LOCK, "category_is_custom"],
     "before": "file_under_other"},
    {"trigger": "answer", "source": NEED_CATEGORY, "dest": NEED_OTHER,
     "conditions": [LOCK, "other_text_missing", "budget_left"],
     "before": "await_other_text"},
    {"trigger": "answer", "source": NEED_CATEGORY, "dest": NO_PATCH,
     "conditions": [LOCK],
     "before": "give_up"},
    # -- the category's primary field (C6) -------------------------------------------------------
    {"trigger": "answer", "source": NEED_PRIMARY_FIELD, "dest": DONE,
     "conditions": [LOCK, "field_is_concrete"],
     "before": "accept_field"},
    {"trigger": "answer", "source": NEED_PRIMARY_FIELD, "dest": NEED_OTHER,
     "conditions": [LOCK, "other_text_missing", "budget_left"],
     "before": "await_other_text"},
    {"trigger": "answer", "source": NEED_PRIMARY_FIELD, "dest": NO_PATCH,
     "conditions": [LOCK],
     "before": "give_up"},
    # -- the text owed for "Other (specify)" (C5, C6) --------------------------------------------
    {"trigger": "answer", "source": NEED_OTHER, "dest": NEED_PRIMARY_FIELD,
     "conditions": [LOCK, "text_names_known_category", "budget_left"],
     "before": "adopt_answered_category", "needs": "categories"},
    {"trigger": "answer", "source": NEED_OTHER, "dest": DONE,
     "conditions": [LOCK, "text_is_concrete"],
     "before": "accept_other_text"},
    {"trigger": "answer", "source": NEED_OTHER, "dest": NO_PATCH,
     "conditions": [LOCK],
     "before": "give_up"},
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Edge:
    """One row of a flow's table (C1): taken when all its guards pass, first row first."""

    source: StateName
    trigger: Trigger
    dest: StateName
    guards: tuple[str, ...]
    effect: str

    @property
    def label(self) -> str:
        """``trigger [guard & guard]``."""
        return f"{self.trigger} [{' & '.join(self.guards)}]" if self.guards else self.trigger


def edges_for(flow: FlowData) -> tuple[Edge, ...]:
    """The rows of TABLE that ``flow`` can take, as Edges in table order; checked by check_graph."""
    has = {
        "keywords": any(c.keywords for c in flow.categories),
        "categories": bool(flow.categories),
    }
    edges = tuple(
        Edge(row["source"], row["trigger"], row["dest"], tuple(row["conditions"]), row["before"])
        for row in TABLE
        if "needs" not in row or has[row["needs"]]
    )
    check_graph(edges)
    return edges


def transition_table(flow: Flow | FlowData | None = None) -> tuple[Edge, ...]:
    """Every edge of the flow's machine (the default flow's by default), in the order tried."""
    if flow is None or isinstance(flow, FlowData):
        return edges_for(flow or DEFAULT_FLOW)
    return edges_for(flow.plain)


def check_graph(edges: tuple[Edge, ...]) -> None:
    """Every state reachable, no trap state, a terminal state reachable from each (C1)."""
    following: dict[str, set[str]] = {state: set() for state in STATES}
    for edge in edges:
        following[edge.source].add(edge.dest)

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in following[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    problems: list[str] = []
    offending: list[str] = []
    unreachable = [s for s in STATES if s not in reach(NEED_CATEGORY)]
    if unreachable:
        problems.append("unreachable states: " + ", ".join(unreachable))
        offending += unreachable
    traps = [s for s in STATES if s not in TERMINAL_STATES and not following[s]]
    if traps:
        problems.append("states without a way out: " + ", ".join(traps))
        offending += traps
    stuck = [s for s in STATES if s not in traps and not reach(s) & TERMINAL_STATES]
    if stuck:
        problems.append("states that cannot reach Done or NoPatch: " + ", ".join(stuck))
        offending += stuck
    if problems:
        raise InvalidFlow(
            "the flow's machine is broken: " + "; ".join(problems), ids=tuple(offending)
        )
