"""The structural contract of an LLM response (C2, C3, C5, C7), checked."""

from __future__ import annotations

import math
from typing import Any

from preflight_fsm.contract.rules import (
    Violation,
    as_dict,
    base_key,
    clean_text,
    is_sequence,
)
from preflight_fsm.flow import HINTS, OTHER_OPTION, OTHER_SUFFIX, Flow, default_flow

__all__ = ["check_llm_response"]

MAX_QUESTIONS = 2
_CHOICE_TYPES = ("single_choice", "multi_choice")
_TYPES = (*_CHOICE_TYPES, "free_text")


def check_llm_response(
    response: object, session_state: object = None, *, flow: Flow | None = None
) -> list[Violation]:
    """Every way ``response`` breaks the turn contract; an empty list when it keeps it.

    ``response`` may be our ``LLMResponse`` or ``Turn``, Preflights' ``LLMResponse``, or a dict
    parsed from JSON. ``session_state`` (a snapshot of the session the response answers, in any
    of those forms) adds the check that no answered question is asked again. ``flow`` (the
    default flow by default) names the "Other" option and the categories judged against.
    """
    flow = flow or default_flow()
    data = as_dict(response)
    if data is None:
        return [Violation("shape", f"is a {type(response).__name__}, not a response object")]
    found: list[Violation] = []
    for key in ("questions", "missing_info", "decision_hint", "progress"):
        if key not in data:
            found.append(Violation("shape", "is missing", key))
    raw_questions = data.get("questions", ())
    if not is_sequence(raw_questions):
        found.append(Violation("shape", "must be a list of questions", "questions"))
        raw_questions = ()
    questions: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_questions):
        q = as_dict(raw)
        if q is None:
            found.append(Violation("shape", "is not a question object", f"questions[{i}]"))
        else:
            questions.append(q)
    missing = data.get("missing_info", ())
    if not is_sequence(missing) or not all(isinstance(k, str) for k in missing):
        found.append(Violation("shape", "must be a list of text keys", "missing_info"))
        missing = ()
    found += _check_questions(questions, flow)
    found += _check_missing_info(questions, tuple(missing))
    found += _check_progress(
        data.get("progress"), questions, tuple(missing), "progress" in data, flow
    )
    hint = data.get("decision_hint")
    if "decision_hint" in data and hint not in HINTS:
        found.append(
            Violation("C7-hint", f"is {hint!r}; it must be one of task, adr, unsure", "hint")
        )
    if session_state is not None:
        found += _check_against_state(questions, session_state)
    return found


def _check_questions(questions: list[dict[str, Any]], flow: Flow) -> list[Violation]:
    found: list[Violation] = []
    ids = [q.get("id") for q in questions]
    if len(questions) > MAX_QUESTIONS:
        found.append(
            Violation(
                "C3-budget",
                f"asks {len(questions)} questions; a turn asks at most {MAX_QUESTIONS}",
                ", ".join(str(i) for i in ids),
            )
        )
    visible = [q for q in questions if q.get("depends_on_question_id") is None]
    if len(visible) > 1:
        found.append(
            Violation(
                "C3-one-field",
                f"asks {len(visible)} visible questions; a turn asks one field at a time",
                ", ".join(str(q.get("id")) for q in visible),
            )
        )
    by_id: dict[str, dict[str, Any]] = {}
    for q in questions:
        qid = q.get("id")
        if not isinstance(qid, str) or not qid:
            found.append(Violation("C2-question", "has no text id", repr(qid)))
            continue
        if qid in by_id:
            found.append(Violation("C2-question", "is asked twice in one turn", qid))
        by_id[qid] = q
        found += _check_question(qid, q, OTHER_OPTION)
    for qid, q in by_id.items():
        if q.get("type") in _CHOICE_TYPES:
            found += _check_companion(qid, by_id.get(f"{qid}{OTHER_SUFFIX}"), OTHER_OPTION)
        parent = q.get("depends_on_question_id")
        if parent is not None:
            if qid != f"{parent}{OTHER_SUFFIX}":
                found.append(
                    Violation(
                        "C2-companion",
                        f"depends on {parent!r} but is not its companion {parent}{OTHER_SUFFIX}",
                        qid,
                    )
                )
            elif parent not in by_id:
                found.append(
                    Violation("C2-companion", f"depends on {parent!r}, which this turn lacks", qid)
                )
    return found


def _check_question(qid: str, q: dict[str, Any], other: str) -> list[Violation]:
    found: list[Violation] = []
    qtype = q.get("type")
    if qtype not in _TYPES:
        found.append(Violation("C2-question", f"has type {qtype!r}", qid))
    text = q.get("question")
    if not isinstance(text, str) or not text.strip():
        found.append(Violation("C2-question", "has no question text", qid))
    options = q.get("options")
    if qtype in _CHOICE_TYPES:
        if not is_sequence(options) or not options or not all(isinstance(o, str) for o in options):
            found.append(Violation("C2-question", "is a choice without text options", qid))
            return found
        if options[-1] != other:
            found.append(
                Violation("C2-other-last", f"ends with {options[-1]!r}, not {other!r}", qid)
            )
        if options.count(other) > 1 or any(clean_text(o) == "other" for o in options):
            found.append(Violation("C2-other-last", f"lists another spelling of {other!r}", qid))
        if len({clean_text(o) for o in options}) != len(options):
            found.append(Violation("C2-question", "lists an option twice", qid))
    elif options is not None:
        found.append(Violation("C2-question", f"is {qtype} but lists options", qid))
    return found


def _check_companion(qid: str, companion: dict[str, Any] | None, other: str) -> list[Violation]:
    name = f"{qid}{OTHER_SUFFIX}"
    if companion is None:
        return [Violation("C2-companion", f"has no {name} companion in the same turn", qid)]
    expected = {
        "type": "free_text",
        "optional": True,
        "depends_on_question_id": qid,
        "depends_on_value": other,
    }
    return [
        Violation("C2-companion", f"{key} is {companion.get(key)!r}, not {value!r}", name)
        for key, value in expected.items()
        if companion.get(key) != value
    ]


def _check_missing_info(
    questions: list[dict[str, Any]], missing: tuple[str, ...]
) -> list[Violation]:
    found: list[Violation] = []
    for key in missing:
        if key.endswith(OTHER_SUFFIX):
            found.append(Violation("C7-missing-info", "is an __other key", key))
    for key in sorted({k for k in missing if missing.count(k) > 1}):
        found.append(Violation("C7-missing-info", "is listed twice", key))
    if not questions:
        if len(missing) > 1:
            found.append(
                Violation(
                    "C7-missing-info",
                    "names several gaps but the turn asks nothing; a session that stops "
                    "without a patch names the one key it stopped on",
                    ", ".join(missing),
                )
            )
        return found
    expected = [
        base_key(str(q.get("id")))
        for q in questions
        if q.get("depends_on_question_id") is None and not q.get("optional", False)
    ]
    for key in expected:
        if key not in missing:
            found.append(
                Violation("C7-missing-info", "is asked as a required question but not listed", key)
            )
    for key in dict.fromkeys(missing):
        if key not in expected and not key.endswith(OTHER_SUFFIX):
            found.append(
                Violation(
                    "C7-missing-info", "is listed but no visible required question asks it", key
                )
            )
    return found


def _asks_category(questions: list[dict[str, Any]], missing: tuple[str, ...], flow: Flow) -> bool:
    names = {c.name.casefold() for c in flow.categories}
    if flow.category_question.id in missing:
        return True
    for q in questions:
        if base_key(str(q.get("id"))) == flow.category_question.id:
            return True
        options = q.get("options")
        if q.get("type") in _CHOICE_TYPES and is_sequence(options):
            listed = {clean_text(str(o)) for o in options if o != OTHER_OPTION}
            if len(listed) >= 2 and listed <= names:
                return True
    return False


def _check_progress(
    progress: object,
    questions: list[dict[str, Any]],
    missing: tuple[str, ...],
    present: bool,
    flow: Flow,
) -> list[Violation]:
    if not present:
        return []
    if isinstance(progress, bool) or not isinstance(progress, int | float):
        return [Violation("shape", f"is {progress!r}, not a number", "progress")]
    value = float(progress)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return [Violation("C7-progress", f"is {progress!r}, outside [0, 1]", "progress")]
    if value == 1.0 and missing:
        return [Violation("C7-progress", "is 1.0 but missing_info is not empty", "progress")]
    if value != 1.0 and not missing:
        return [
            Violation(
                "C7-progress",
                f"is {progress!r} but missing_info is empty: it must be 1.0 (spec §8)",
                "progress",
            )
        ]
    if value != 0.0 and _asks_category(questions, missing, flow):
        return [
            Violation(
                "C7-progress",
                f"is {progress!r} while the category is still asked: it must be 0.0 (spec §8)",
                "progress",
            )
        ]
    return []


def _check_against_state(questions: list[dict[str, Any]], state: object) -> list[Violation]:
    data = as_dict(state)
    answered = data.get("answered_questions") if data is not None else None
    if not is_sequence(answered):
        return [Violation("shape", "has no answered_questions list", "session_state")]
    done = {str(a) for a in answered}
    return [
        Violation("C5-reasked", "was already answered in this session", str(q.get("id")))
        for q in questions
        if q.get("id") in done
    ]
