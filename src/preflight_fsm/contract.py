"""The structural contract of an LLM response and a DecisionPatch, checked (spec §14, Rule 3).

Real LLM adapters must produce outputs structurally compatible with the reference. These checks
say where one is not, for any response: ours, Preflights' own mock, or a real LLM's, as our
pydantic models, Preflights' dataclasses or plain dicts parsed from JSON. Each finding is a
:class:`Violation` naming its rule (see :data:`RULES`), what is wrong, and the offending
question, key or field.

>>> check_llm_response({"questions": [], "missing_info": [], "decision_hint": "adr",
...                     "progress": 0.5})
[Violation(rule='C7-progress', message='is 0.5 but missing_info is empty: ...', subject='progress')]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from pydantic import BaseModel

from preflight_fsm.flow import OTHER_OPTION, OTHER_SUFFIX, Flow, default_flow
from preflight_fsm.text import confusable_keys, confusable_with

__all__ = [
    "RULES",
    "Violation",
    "check_decision_patch",
    "check_llm_response",
    "flow_schema",
    "within_schema",
]

HINTS = ("task", "adr", "unsure")
MAX_QUESTIONS = 2
_CHOICE_TYPES = ("single_choice", "multi_choice")
_TYPES = (*_CHOICE_TYPES, "free_text")

RULES: dict[str, str] = {
    "shape": "the object has the fields and types of an LLMResponse or DecisionPatch (C8)",
    "C2-question": "each question has a unique id, a known type, text, and options iff a choice",
    "C2-other-last": 'every choice question ends with the canonical "Other (specify)" (spec §4.3)',
    "C2-companion": "every choice question is followed by its optional, conditional __other "
    "companion, and every conditional question is such a companion (C2, spec §4.3)",
    "C3-budget": "at most 2 questions per turn (C3, spec §2.2)",
    "C3-one-field": "at most one visible field question per turn (C3, spec §3.2 Decision #1)",
    "C5-reasked": "a turn never asks again a question the session already answered (spec §9.1)",
    "C7-missing-info": "one missing_info key per unanswered visible required question, "
    "never an __other key (C7, spec §7)",
    "C7-progress": "progress in [0, 1]; 1.0 exactly when missing_info is empty; 0.0 while the "
    "category is unknown (C7, spec §8)",
    "C7-hint": "decision_hint is task, adr or unsure (C7, spec §6)",
    "C6-fields": "a patch has at least one field, each a (name, value) pair named once (spec §5.3)",
    "C6-empty": "no empty category or field value (C6, spec §5.2)",
    "C6-placeholder": 'no placeholder value (TBD, n/a, ...) and no unresolved "Other (specify)" '
    "(C6, spec §5.2 Rules 1-2)",
    "C6-schema": "the category and every field are in the schema (C6, spec §9.2)",
    "C6-invented": "every value was given by the user: an answer, an __other text, or the "
    "intention itself (C6, spec §1.2)",
}
"""Every rule a :class:`Violation` can name, with what it requires and where the rule comes from."""


@dataclasses.dataclass(frozen=True, slots=True)
class Violation:
    """One breach of the contract: the rule (a key of RULES), what is wrong, and where."""

    rule: str
    message: str
    subject: str | None = None

    def __str__(self) -> str:
        where = f" [{self.subject}]" if self.subject is not None else ""
        return f"{self.rule}{where}: {self.message}"

    def to_dict(self) -> dict[str, str | None]:
        """The violation as JSON-ready data."""
        return {"rule": self.rule, "subject": self.subject, "message": self.message}


# -- reading any representation -----------------------------------------------------------------


def _as_dict(obj: object) -> dict[str, Any] | None:
    """A pydantic model, a dataclass instance or a mapping, as a plain dict; else None."""
    if isinstance(obj, BaseModel):
        return {name: getattr(obj, name) for name in type(obj).model_fields}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): v for k, v in obj.items()}
    return None


def _is_sequence(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


def _clean(text: str) -> str:
    return " ".join(text.split()).casefold()


def _base_key(qid: str) -> str:
    return qid.removesuffix(OTHER_SUFFIX)


# -- responses ------------------------------------------------------------------------------------


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
    data = _as_dict(response)
    if data is None:
        return [Violation("shape", f"is a {type(response).__name__}, not a response object")]
    found: list[Violation] = []
    for key in ("questions", "missing_info", "decision_hint", "progress"):
        if key not in data:
            found.append(Violation("shape", "is missing", key))
    raw_questions = data.get("questions", ())
    if not _is_sequence(raw_questions):
        found.append(Violation("shape", "must be a list of questions", "questions"))
        raw_questions = ()
    questions: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_questions):
        q = _as_dict(raw)
        if q is None:
            found.append(Violation("shape", "is not a question object", f"questions[{i}]"))
        else:
            questions.append(q)
    missing = data.get("missing_info", ())
    if not _is_sequence(missing) or not all(isinstance(k, str) for k in missing):
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
        if not _is_sequence(options) or not options or not all(isinstance(o, str) for o in options):
            found.append(Violation("C2-question", "is a choice without text options", qid))
            return found
        if options[-1] != other:
            found.append(
                Violation("C2-other-last", f"ends with {options[-1]!r}, not {other!r}", qid)
            )
        if options.count(other) > 1 or any(_clean(o) == "other" for o in options):
            found.append(Violation("C2-other-last", f"lists another spelling of {other!r}", qid))
        if len({_clean(o) for o in options}) != len(options):
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
        _base_key(str(q.get("id")))
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
        if _base_key(str(q.get("id"))) == flow.category_question.id:
            return True
        options = q.get("options")
        if q.get("type") in _CHOICE_TYPES and _is_sequence(options):
            listed = {_clean(str(o)) for o in options if o != OTHER_OPTION}
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
    data = _as_dict(state)
    answered = data.get("answered_questions") if data is not None else None
    if not _is_sequence(answered):
        return [Violation("shape", "has no answered_questions list", "session_state")]
    done = {str(a) for a in answered}
    return [
        Violation("C5-reasked", "was already answered in this session", str(q.get("id")))
        for q in questions
        if q.get("id") in done
    ]


# -- patches --------------------------------------------------------------------------------------


def flow_schema(flow: Flow | None = None) -> dict[str, tuple[str, ...]]:
    """The categories and patch fields a flow can produce: the checker's default schema.

    >>> flow_schema()["Authentication"]
    ('Strategy', 'Library')
    """
    flow = flow or default_flow()
    schema = {
        c.name: (c.question.field, *(s.field for s in c.secondary if s.field != c.question.field))
        for c in flow.categories
    }
    schema[flow.other_category.name] = (flow.other_category.field,)
    return schema


_Schema = dict[str, tuple[str, frozenset[str] | None]]


def _schema_lookup(schema: object, flow: Flow | None = None) -> _Schema:
    """casefolded category -> (its name, casefolded fields or None for Preflights' "*")."""
    if schema is None:
        schema = flow_schema(flow)
    elif isinstance(schema, Flow):
        schema = flow_schema(schema)
    inner = getattr(schema, "schema", None)  # a Preflights HeuristicsConfig
    if inner is not None and hasattr(inner, "categories"):
        schema = inner
    pairs = getattr(schema, "categories", schema)  # a Preflights SnapshotSchema
    if isinstance(pairs, Mapping):
        pairs = pairs.items()
    lookup: _Schema = {}
    if not isinstance(pairs, Iterable):
        raise TypeError(f"not a schema: {type(schema).__name__}")
    for name, fields in pairs:
        names = tuple(str(f) for f in fields)
        lookup[str(name).casefold()] = (
            str(name),
            None if "*" in names else frozenset(f.casefold() for f in names),
        )
    return lookup


def check_decision_patch(
    patch: object,
    schema: object = None,
    *,
    answers: Mapping[str, object] | None = None,
    intention: str | None = None,
    flow: Flow | None = None,
) -> list[Violation]:
    """Every way ``patch`` breaks the patch contract; an empty list when it keeps it.

    ``schema`` bounds the categories and fields: by default ``flow``'s (:func:`flow_schema`;
    the default flow unless given; ``flow`` also names the placeholders and "Other" option);
    else a Preflights ``SnapshotSchema`` or ``HeuristicsConfig``, a mapping of category to
    fields, or pairs. Names compare case-insensitively and ``"*"`` allows any field, as
    Preflights' core validates. With ``answers`` (and the ``intention``), a value nobody gave is
    reported as invented. ``None`` is a valid outcome (spec §11 Decision #2): no violations.
    """
    if patch is None:
        return []
    data = _as_dict(patch)
    if data is None:
        return [Violation("shape", f"is a {type(patch).__name__}, not a patch object")]
    found: list[Violation] = []
    category = data.get("category")
    if not isinstance(category, str):
        return [Violation("shape", f"is {category!r}, not text", "category")]
    raw_fields = data.get("fields")
    if not _is_sequence(raw_fields) or not all(
        _is_sequence(p) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in raw_fields
    ):
        return [Violation("shape", "must be a list of [name, value] text pairs", "fields")]
    fields = [(str(p[0]), str(p[1])) for p in raw_fields]
    references = data.get("references", ())
    if not _is_sequence(references):
        found.append(Violation("shape", "must be a list of pairs", "references"))
    if not category.strip():
        found.append(Violation("C6-empty", "is empty", "category"))
    if not fields:
        found.append(Violation("C6-fields", "holds no field; return None instead", "fields"))
    names = [_clean(name) for name, _ in fields]
    for name, _ in fields:
        if names.count(_clean(name)) > 1:
            found.append(Violation("C6-fields", "is named twice", name))
            names = [n for n in names if n != _clean(name)]
    flow = flow or default_flow()
    placeholders = {p.casefold() for p in flow.placeholders}
    look_alikes = frozenset(k for p in flow.placeholders for k in confusable_keys(p))  # C5
    for name, value in fields:
        if not name.strip():
            found.append(Violation("C6-empty", "a field has no name", repr(name)))
        if not value.strip():
            found.append(Violation("C6-empty", "has an empty value", name))
        elif _clean(value) in placeholders or confusable_with(value.strip(), look_alikes):
            found.append(Violation("C6-placeholder", f"holds the placeholder {value!r}", name))
        elif _clean(value) in (_clean(flow.other_option), _clean(OTHER_OPTION), "other"):
            found.append(
                Violation("C6-placeholder", f"holds {value!r} instead of the user's text", name)
            )
    found += _check_schema(category, fields, schema, flow)
    if answers is not None:
        found += _check_provenance(fields, answers, intention, OTHER_OPTION)
    return found


def within_schema(patch: Any, schema: object, flow: Flow | None = None) -> bool:
    """True when ``patch``'s category and every field are in ``schema`` (C6, C8): names compare
    case-insensitively and Preflights' ``"*"`` allows any field."""
    fields = [(str(name), str(value)) for name, value in patch.fields]
    return not _check_schema(str(patch.category), fields, schema, flow)


def _check_schema(
    category: str, fields: list[tuple[str, str]], schema: object, flow: Flow | None
) -> list[Violation]:
    lookup = _schema_lookup(schema, flow)
    entry = lookup.get(category.casefold())
    if entry is None:
        known = ", ".join(name for name, _ in lookup.values())
        return [Violation("C6-schema", f"is not a category of the schema ({known})", category)]
    name, allowed = entry
    if allowed is None:
        return []
    return [
        Violation("C6-schema", f"is not a field of {name}", field)
        for field, _ in fields
        if field.casefold() not in allowed
    ]


def _check_provenance(
    fields: list[tuple[str, str]],
    answers: Mapping[str, object],
    intention: str | None,
    other: str,
) -> list[Violation]:
    given: set[str] = set()
    for value in answers.values():
        values = value if _is_sequence(value) else (value,)
        given |= {_clean(v) for v in values if isinstance(v, str) and v != other}
    if intention is not None:
        given.add(_clean(intention))
    return [
        Violation("C6-invented", f"{value!r} is no answer the user gave", name)
        for name, value in fields
        if _clean(value) not in given
    ]
