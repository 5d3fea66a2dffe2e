"""What a person reads: a turn's question, a session's outcome, refused answers — by the
question's text, never by its id (ids are for scripts: ``--json`` and ``key=value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow
    from preflight_fsm.flow_data import FlowData
    from preflight_fsm.turn import Question, Turn
    from preflight_fsm.turn_data import QuestionData, TurnData

__all__ = [
    "question_texts",
    "render_feedback",
    "render_outcome",
    "render_turn",
    "visible_question",
]


def visible_question(turn: Turn | TurnData) -> Question | QuestionData:
    """The one question the turn shows (its companion, if any, is asked only on "Other")."""
    for question in turn.questions:
        if question.depends_on_question_id is None:
            return question
    raise ValueError(f"the session is in {turn.state}; it asks no question")


def question_texts(flow: Flow | FlowData | None = None) -> dict[str, str]:
    """Every question id the flow asks, with its text (the default flow when None)."""
    from preflight_fsm.flow_data import DEFAULT_FLOW, OTHER_SUFFIX, other_text_question

    flow = flow or DEFAULT_FLOW
    texts = {flow.category_question.id: flow.category_question.text}
    texts.update({c.question.id: c.question.text for c in flow.categories})
    texts.update({f"{qid}{OTHER_SUFFIX}": other_text_question(t) for qid, t in list(texts.items())})
    return texts


def render_turn(turn: Turn | TurnData, flow: Flow | FlowData | None = None) -> str:
    """The turn's visible question, its options numbered from 1 (the last is "Other (specify)",
    shown as the flow's label for it, C2)."""
    from preflight_fsm.flow_data import OTHER_OPTION

    question = visible_question(turn)
    label = OTHER_OPTION if flow is None else flow.other_option
    shown = [label if option == OTHER_OPTION else option for option in question.options or ()]
    lines = [question.question]
    lines += [f"  {n}. {option}" for n, option in enumerate(shown, start=1)]
    return "\n".join(lines)


def render_outcome(turn: Turn | TurnData, flow: Flow | FlowData | None = None) -> str:
    """A finished session: its patch, one field a line, or the question left unanswered; the
    hint."""
    if not turn.finished:
        raise ValueError(f"the session is still in {turn.state}; it has no outcome yet")
    if turn.patch is not None:
        lines = [f"Category: {turn.patch.category}"]
        lines += [f"{name}: {value}" for name, value in turn.patch.fields]
        lines += [f"Reference: {name}: {value}" for name, value in turn.patch.references]
    else:
        texts = question_texts(flow)
        left = [f'"{texts.get(key, key)}"' for key in turn.missing_info] or ["a question"]
        lines = [f"No patch: {', '.join(left)} was left unanswered."]
    lines.append(f"Decision hint: {turn.decision_hint}")
    return "\n".join(lines)


def render_feedback(feedback: Mapping[str, Any], texts: Mapping[str, str] | None = None) -> str:
    """InvalidAnswers' structured feedback (C5) as one line per issue, for a person; each field
    is named by its question's text when ``texts`` (id -> text) knows it."""
    texts = texts or {}

    def named(field: object) -> str:
        text = texts.get(str(field))
        return f'"{text}"' if text else str(field)

    issues = feedback.get("issues", {})
    lines = [
        f"Not accepted: {named(item['field'])} {item['problem']}. Expected {item['requirement']}."
        for item in issues.get("invalid", [])
    ]
    lines += [
        f"Not accepted: {named(item['field'])} is missing. Expected {item['requirement']}."
        for item in issues.get("missing", [])
    ]
    unknown = issues.get("unknown", [])
    if unknown:
        lines.append("Not accepted: unknown question ids: " + ", ".join(map(str, unknown)) + ".")
    return "\n".join(lines) or "Not accepted."
