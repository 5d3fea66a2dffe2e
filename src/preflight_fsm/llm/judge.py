"""The engine as judge of an LLM's turn and patch: what a reply must share with the engine's own.

An LLM's reply to ``generate_questions`` is held to the contract (``contract.check_llm_response``,
rules C2, C3, C7) and to the engine's turn for the same position: the same question ids, types
and number of options, "Other (specify)" last, the same ``missing_info`` and ``decision_hint``,
and a ``progress`` in the same phase (0.0 while the category is asked, 1.0 once nothing is
missing, between otherwise). Its wording may differ, and so may its option texts, as long as
each names exactly one of the flow's options (``preflight_fsm.option_names``): the user sees
the LLM's text, the engine receives the flow's option it names. A reply to
``extract_decision_patch`` must equal the engine's patch from the same answers (C6: the user's
category, exactly the values given, nothing invented).

Each finding is a :class:`Disagreement` under one of :data:`AGREEMENT_RULES`, the groups the
conformance report counts agreement by (the contract's own rules are ``contract.RULES``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from preflight_fsm.contract import check_llm_response
from preflight_fsm.flow import Flow
from preflight_fsm.option_names import option_names

__all__ = [
    "AGREEMENT_RULES",
    "Disagreement",
    "judge_patch",
    "judge_turn",
    "phase",
]

AGREEMENT_RULES: Final = ("questions", "missing_info", "progress", "hint", "patch")
"""The groups a disagreement falls under, as the conformance report counts them."""

_RULE_OF_VIOLATION: Final = {
    "C7-missing-info": "missing_info",
    "C7-progress": "progress",
    "C7-hint": "hint",
}


@dataclasses.dataclass(frozen=True, slots=True)
class Disagreement:
    """One way a reply differs from the engine: its rule (one of AGREEMENT_RULES) and what."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


def phase(progress: float) -> str:
    """Where a progress value puts a session: ``start`` (0.0), ``done`` (1.0) or ``between``."""
    if progress == 0.0:
        return "start"
    return "done" if progress == 1.0 else "between"


def judge_turn(reply: Any, reference: Any, flow: Flow) -> list[Disagreement]:
    """Every way ``reply`` (a turn, its companions completed) differs from the engine's turn.

    ``reply`` and ``reference`` may be Preflights' ``LLMResponse``, ours or a ``Turn``.
    """
    found = [
        Disagreement(_RULE_OF_VIOLATION.get(v.rule, "questions"), str(v))
        for v in check_llm_response(reply, flow=flow)
    ]
    if any(d.rule == "questions" and d.message.startswith("shape") for d in found):
        return found
    found += _judge_questions(tuple(reply.questions), tuple(reference.questions), flow)
    if sorted(reply.missing_info) != sorted(reference.missing_info):
        found.append(
            Disagreement(
                "missing_info",
                f"is {list(reply.missing_info)}; at this position it is "
                f"{list(reference.missing_info)}",
            )
        )
    if isinstance(reply.progress, int | float) and phase(reply.progress) != phase(
        reference.progress
    ):
        found.append(
            Disagreement(
                "progress",
                f"is {reply.progress!r} ({phase(reply.progress)}); at this position it is "
                f"{phase(reference.progress)} ({reference.progress!r})",
            )
        )
    if reply.decision_hint != reference.decision_hint:
        found.append(
            Disagreement(
                "hint",
                f"is {reply.decision_hint!r}; at this position it is {reference.decision_hint!r}",
            )
        )
    return found


def _judge_questions(
    questions: tuple[Any, ...], expected: tuple[Any, ...], flow: Flow
) -> list[Disagreement]:
    found: list[Disagreement] = []
    ids = [q.id for q in questions]
    wanted = [q.id for q in expected]
    if ids != wanted:
        return [Disagreement("questions", f"asks {ids}; at this position the flow asks {wanted}")]
    for question, reference in zip(questions, expected, strict=True):
        if question.type != reference.type:
            found.append(
                Disagreement("questions", f"{question.id} is {question.type}, not {reference.type}")
            )
        elif reference.options is not None:
            names = option_names(
                tuple(question.options or ()), reference.options, flow.other_option
            )
            if isinstance(names, str):
                found.append(Disagreement("questions", f"{question.id} {names}"))
        if (question.depends_on_question_id, question.optional) != (
            reference.depends_on_question_id,
            reference.optional,
        ):
            found.append(
                Disagreement(
                    "questions",
                    f"{question.id} is not shown as the flow shows it (optional, depends on)",
                )
            )
    return found


def judge_patch(
    reply: Any, reference: Any, *, answers: Mapping[str, Any] | None = None
) -> list[Disagreement]:
    """How ``reply`` (a patch or None) differs from the engine's patch from the same answers.

    Category and field names compare case-insensitively; values exactly (spaces at the ends
    aside): a value the user did not give is never the same decision.
    """
    if reply is None and reference is None:
        return []
    if reply is None:
        return [Disagreement("patch", "is None where the answers give a decision")]
    if reference is None:
        given = f" from {dict(answers)}" if answers is not None else ""
        return [Disagreement("patch", f"is {_show(reply)} where the answers{given} give none")]
    found: list[Disagreement] = []
    if str(reply.category).casefold() != str(reference.category).casefold():
        found.append(
            Disagreement(
                "patch", f"category is {reply.category!r}, the user's is {reference.category!r}"
            )
        )
    if _fields(reply) != _fields(reference):
        found.append(
            Disagreement(
                "patch",
                f"fields are {_show_fields(reply)}; the answers give {_show_fields(reference)}",
            )
        )
    return found


def _fields(patch: Any) -> frozenset[tuple[str, str]]:
    try:
        return frozenset((str(k).casefold(), str(v).strip()) for k, v in patch.fields)
    except (TypeError, ValueError):
        return frozenset({("", "<unreadable fields>")})


def _show_fields(patch: Any) -> str:
    try:
        return ", ".join(f"{k}={v}" for k, v in patch.fields) or "none"
    except (TypeError, ValueError):
        return repr(patch.fields)


def _show(patch: Any) -> str:
    return f"{patch.category} - {_show_fields(patch)}"
