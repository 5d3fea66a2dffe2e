"""The contract's rules and the :class:`Violation` naming one; reading any representation."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeGuard

from pydantic import BaseModel

from preflight_fsm.flow import OTHER_SUFFIX

__all__ = ["RULES", "Violation", "as_dict", "base_key", "clean_text", "is_sequence"]

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


def as_dict(obj: object) -> dict[str, Any] | None:
    """A pydantic model, a dataclass instance or a mapping, as a plain dict; else None."""
    if isinstance(obj, BaseModel):
        return {name: getattr(obj, name) for name in type(obj).model_fields}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): v for k, v in obj.items()}
    return None


def is_sequence(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    """A JSON array as parsed (list) or as a model holds it (tuple)."""
    return isinstance(value, list | tuple)


def clean_text(text: str) -> str:
    """Text compared as the user meant it: white space collapsed, case folded."""
    return " ".join(text.split()).casefold()


def base_key(qid: str) -> str:
    """The choice question a companion id belongs to (itself for any other id)."""
    return qid.removesuffix(OTHER_SUFFIX)
