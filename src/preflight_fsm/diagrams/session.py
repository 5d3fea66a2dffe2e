"""One session's path on its flow: the intention, each turn's answers on the edge it took (with
who supplied them, ``answered_by``), the category, and the patch or the unresolved key.

The path comes from a snapshot's ``trace`` (C9), or from a live ``ClarificationMachine``. It has
one numbering scheme, the turn: trace steps with ``turn == k`` were taken while answering turn
k's questions (``turn == 0``: at start). Which answers a step sent is looked up in one place,
:func:`step_answers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from preflight_fsm import (
    ClarificationMachine,
    Flow,
    InvalidSnapshot,
    SessionSnapshot,
    TraceStep,
    Turn,
    default_flow,
)
from preflight_fsm.diagrams.model import (
    Ask,
    Graph,
    Node,
    Role,
    Taken,
    Text,
    flow_graph,
)
from preflight_fsm.flow import OTHER_SUFFIX, ChoiceQuestion, other_text_question
from preflight_fsm.snapshot import parse_snapshot
from preflight_fsm.states import NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD

__all__ = ["BLANK", "PathSource", "session_graph", "step_answers"]

PathSource: TypeAlias = ClarificationMachine | SessionSnapshot | str | bytes | dict[str, Any]
"""Where a path comes from: a live machine, or a full snapshot (model, JSON or dict)."""

INTENTION_WIDTH = 120


def _load(source: PathSource, flow: Flow | None) -> tuple[SessionSnapshot, ClarificationMachine]:
    """The snapshot and the machine it restores to, every C9 check applied."""
    if isinstance(source, ClarificationMachine):
        return source.snapshot(), source
    parsed = parse_snapshot(source)
    if parsed.is_minimal:
        raise InvalidSnapshot(
            "state",
            "is missing: a minimal snapshot (Preflights' four fields) records no path; "
            "draw a full snapshot from ClarificationMachine.snapshot()",
        )
    return parsed, ClarificationMachine.from_snapshot(parsed, flow or default_flow())


BLANK = "(blank)"
"""How a step's blank answer (a decline, or no answer) is shown on its edge."""


def step_answers(snapshot: SessionSnapshot, flow: Flow) -> tuple[dict[str, str], ...]:
    """The answers each accepted step took, in order (C9's ``steps``): step k's at index k - 1,
    an option as the flow writes it (``other`` is "Other (specify)", ``mysql`` MySQL), a blank
    shown as BLANK."""
    from preflight_fsm.answers import AnswerRules
    from preflight_fsm.text import match_key

    options = AnswerRules(flow.plain).choice_options

    def shown(key: str, value: str | None) -> str:
        if value is None:
            return BLANK
        return options.get(key, {}).get(match_key(value), value)

    return tuple({k: shown(k, v) for k, v in step.items()} for step in snapshot.steps)


def _question_left(state: str, flow: Flow, category: str | None, owed: str | None) -> str | None:
    """The key whose answer lets a step leave ``state`` (for NeedOther, the text's own key)."""
    if state == NEED_CATEGORY:
        return flow.category_question.id
    if state == NEED_PRIMARY_FIELD:
        question = _field_question(flow, category)
        return question.id if question is not None else None
    if state == NEED_OTHER and owed is not None:
        return owed + OTHER_SUFFIX
    return None


def _field_question(flow: Flow, category: str | None) -> ChoiceQuestion | None:
    for candidate in flow.categories:
        if candidate.name == category:
            return candidate.question
    return None


def _owned_keys(state: str, flow: Flow, category: str | None, owed: str | None) -> set[str]:
    """Every answer key that belongs to ``state``'s question, volunteered fields included."""
    if state == NEED_CATEGORY:
        cq = flow.category_question.id
        return {cq, cq + OTHER_SUFFIX, flow.other_category.description_id}
    if state == NEED_PRIMARY_FIELD:
        for candidate in flow.categories:
            if candidate.name == category:
                qid = candidate.question.id
                return {qid, qid + OTHER_SUFFIX, *(s.id for s in candidate.secondary)}
        return set()
    if state == NEED_OTHER and owed is not None:
        return {owed + OTHER_SUFFIX}
    return set()


@dataclass(frozen=True, slots=True)
class _Walk:
    """What a path tells about each trace step: the answers drawn on it and its note."""

    taken: tuple[Taken, ...]
    other_questions: tuple[str, ...]  # the keys NeedOther waited on, in order


def _walk(snapshot: SessionSnapshot, flow: Flow) -> _Walk:
    steps = step_answers(snapshot, flow)
    category = snapshot.category
    placed: set[tuple[int, str]] = set()
    taken: list[Taken] = []
    owed: str | None = None
    others: list[str] = []
    first_of_turn: dict[int, int] = {}
    for index, step in enumerate(snapshot.trace):
        answers: dict[str, str] = {}
        if step.turn >= 1 and step.turn <= len(steps):
            mine = _owned_keys(step.source, flow, category, owed)
            for key, value in steps[step.turn - 1].items():
                if key in mine and (step.turn, key) not in placed:
                    answers[key] = value
                    placed.add((step.turn, key))
        first_of_turn.setdefault(step.turn, index)
        if step.dest == NEED_OTHER:
            owed = _question_left(step.source, flow, category, None)
            if owed is not None:
                others.append(owed)
        note = _note(step, answers, category)
        if 1 <= step.turn <= len(snapshot.answered_by):
            # Who supplied the step's answers (C9), on each edge the step took.
            by = f"answered by {snapshot.answered_by[step.turn - 1]}"
            note = f"{note}, {by}" if note else by
        taken.append(Taken(step.turn, tuple(answers.items()), note))
    # Answers no edge claimed (a key of another state, volunteered early) go on the first edge
    # of their turn, so every answer of a step is drawn.
    for turn, index in first_of_turn.items():
        if turn < 1 or turn > len(steps):
            continue
        rest = tuple((k, v) for k, v in steps[turn - 1].items() if (turn, k) not in placed)
        if rest:
            taken[index] = replace(taken[index], answers=taken[index].answers + rest)
    return _Walk(tuple(taken), tuple(others))


def _note(step: TraceStep, answers: Mapping[str, str], category: str | None) -> str:
    if step.trigger == "start":
        return f"keywords name {category}" if category else "keywords name one category"
    if step.guards and all(g == "pending_question_answered" for g in step.guards):
        declined = not answers or all(v == BLANK for v in answers.values())
        return "declined" if declined else "out of budget"
    return ""


def session_graph(source: PathSource, flow: Flow | None = None) -> Graph:
    """``flow``'s picture with one session's path on it, from a live machine or a full snapshot.

    A snapshot is checked as ``ClarificationMachine.from_snapshot`` checks it (InvalidSnapshot
    otherwise); a machine brings its own flow.
    """
    snapshot, machine = _load(source, flow)
    flow = machine.flow
    base = flow_graph(flow)
    walk = _walk(snapshot, flow)

    taken_on: dict[tuple[str, str, str, tuple[str, ...]], list[Taken]] = {}
    for step, taken in zip(snapshot.trace, walk.taken, strict=True):
        taken_on.setdefault((step.source, step.trigger, step.dest, tuple(step.guards)), []).append(
            taken
        )
    arrows = tuple(
        replace(a, taken=tuple(taken_on.get((a.source, a.trigger, a.dest, a.guards), ())))
        if (a.source, a.trigger, a.dest, a.guards) in taken_on
        else replace(a, faded=True)
        for a in base.arrows
    )
    visited = [base.initial, *(step.dest for step in snapshot.trace)]
    # A state asked its question when an answer left it, or when the session waits there; the
    # keyword shortcut passes NeedCategory without asking it.
    asked: set[str] = {step.source for step in snapshot.trace if step.trigger == "answer"}
    if not machine.finished:
        asked.add(machine.state)
    turn = machine.turn
    nodes = tuple(
        _session_node(node, visited, asked, machine.state, flow, snapshot.category, walk, turn)
        for node in base.nodes
    )
    intention = " ".join(machine.intention.split())
    if len(intention) > INTENTION_WIDTH:
        intention = intention[: INTENTION_WIDTH - 1] + "…"
    turns = snapshot.turn or 0
    if machine.finished:
        status = f"Ended in {machine.state} after {turns} question turn{'' if turns == 1 else 's'}."
    else:
        status = f"Stands at {machine.state}, asking turn {turns}."
    legend = (
        status + " Blue: the edges it took, each with its turn, that turn's answers and who "
        "supplied them.",
    )
    return replace(
        base,
        kind="session",
        title=f"One session's path on flow “{flow.name}” (a session, not the generated flow)",
        legend=tuple(legend),
        entry=(f"“{intention}”",),
        nodes=nodes,
        arrows=arrows,
    )


def _session_node(
    node: Node,
    visited: list[str],
    asked: set[str],
    current: str,
    flow: Flow,
    category: str | None,
    walk: _Walk,
    turn: Turn,
) -> Node:
    if node.name not in visited:
        return replace(node, asks=(), role="faded")
    role: Role = "current" if node.name == current else "visited"
    missing = turn.missing_info
    asks: tuple[Ask, ...] = ()
    lines: list[Text] = []
    if node.name not in asked:
        pass
    elif node.name == NEED_CATEGORY:
        asks = (Ask(Text(flow.category_question.text)),)
    elif node.name == NEED_PRIMARY_FIELD:
        question = _field_question(flow, category)
        if question is not None:
            asks = (Ask(Text(question.text), who=Text(category or "")),)
    elif node.name == NEED_OTHER:
        asks = tuple(
            Ask(Text(other_text_question(_text_of(flow, key)))) for key in walk.other_questions
        )
    if node.terminal and node.name == current:
        if turn.patch is not None:
            lines.append(Text(f"category: {turn.patch.category}"))
            lines += [Text(f"{name}: {value}") for name, value in turn.patch.fields]
        else:
            if category is not None:  # NoPatch keeps the category it knew (C7)
                lines.append(Text(f"category: {category}"))
            if missing:
                lines.append(Text("unresolved: " + ", ".join(missing)))
    elif node.name == current and missing:
        lines.append(Text("waiting for: " + ", ".join(missing)))
    return replace(node, asks=asks, lines=tuple(lines), role=role)


def _text_of(flow: Flow, key: str) -> str:
    if key == flow.category_question.id:
        return flow.category_question.text
    for category in flow.categories:
        if category.question.id == key:
            return category.question.text
    return key
