"""The flow as plain, immutable data: what the engine runs on (C2, C4, C9, C10; D276).

Named tuples mirroring ``flow.py``'s models field for field (same names, order and defaults;
``tests/test_flow_data.py`` holds each pair equal), the default flow's tables, and what the
engine reads off a flow: its fingerprints, its answer ids, a category by name. Nothing here
validates: a :class:`FlowData` is the default flow below or the plain form of a validated
:class:`~preflight_fsm.flow.Flow` (``Flow.plain``), never built from input. Importing this module
imports no pydantic, so a command that runs the default flow builds no model (issue 32).
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, get_args

__all__ = [
    "DEFAULT_FLOW",
    "DEFAULT_FLOW_FILE",
    "HINTS",
    "OTHER_OPTION",
    "OTHER_SUFFIX",
    "PLACEHOLDERS",
    "CategoryData",
    "CategoryQuestionData",
    "ChoiceQuestionData",
    "FlowData",
    "Hint",
    "LimitsData",
    "OtherCategoryData",
    "SecondaryFieldData",
    "flow_json",
    "other_text_question",
    "plain_dict",
]

OTHER_OPTION: Final = "Other (specify)"
"""The canonical "Other (specify)" (C2): the value every question lists, answers record and
snapshots keep, whatever label a flow's ``other_option`` shows a person."""

OTHER_SUFFIX: Final = "__other"
"""Suffix of the free-text companion of a choice question (``auth_strategy__other``)."""


def other_text_question(question: str) -> str:
    """What the companion asks after "Other (specify)" (C2): ``Please specify (<question>):``."""
    return f"Please specify ({question}):"


Hint = Literal["task", "adr", "unsure"]
HINTS: Final[tuple[Hint, ...]] = get_args(Hint)
"""The decision hints (C7), in the order the contract lists them."""

PLACEHOLDERS: Final = ("tbd", "todo", "tba", "n/a", "na", "null", "unknown", "?", "-", "...", "…")
"""The answers a flow takes for no answer at all by default (C5)."""


class ChoiceQuestionData(NamedTuple):
    """:class:`~preflight_fsm.flow.ChoiceQuestion` as plain data."""

    id: str
    text: str
    options: tuple[str, ...]
    field: str


class SecondaryFieldData(NamedTuple):
    """:class:`~preflight_fsm.flow.SecondaryField` as plain data."""

    id: str
    field: str


class CategoryData(NamedTuple):
    """:class:`~preflight_fsm.flow.Category` as plain data."""

    name: str
    hint: Hint
    question: ChoiceQuestionData
    secondary: tuple[SecondaryFieldData, ...] = ()
    keywords: tuple[str, ...] = ()


class CategoryQuestionData(NamedTuple):
    """:class:`~preflight_fsm.flow.CategoryQuestion` as plain data."""

    id: str = "change_category"
    text: str = "What type of change is this?"


class OtherCategoryData(NamedTuple):
    """:class:`~preflight_fsm.flow.OtherCategory` as plain data."""

    name: str = "Other"
    description_id: str = "description"
    field: str = "Description"
    hint: Hint = "unsure"


class LimitsData(NamedTuple):
    """:class:`~preflight_fsm.flow.Limits` as plain data."""

    max_turns: int = 3
    max_intention_chars: int = 2000
    max_answer_chars: int = 500
    max_answers_per_step: int = 32


class _FlowFields(NamedTuple):
    name: str = "default"
    other_option: str = OTHER_OPTION
    category_question: CategoryQuestionData = CategoryQuestionData()
    other_category: OtherCategoryData = OtherCategoryData()
    categories: tuple[CategoryData, ...] = ()
    placeholders: tuple[str, ...] = PLACEHOLDERS
    limits: LimitsData = LimitsData()


class FlowData(_FlowFields):
    """:class:`~preflight_fsm.flow.Flow` as plain data, with what the engine reads off a flow
    computed once (a subclass of the named tuple, so it can cache)."""

    @cached_property
    def fingerprint(self) -> str:
        """A short, stable digest of what replaying a session on the flow depends on (C9, C10,
        D261): everything but the wording of its questions (see ``Flow.fingerprint``)."""
        return hashlib.sha256(b"replay\0" + flow_json(self, wording=False)).hexdigest()[:16]

    @cached_property
    def content_fingerprint(self) -> str:
        """A digest of the flow's whole content, wording included (see
        ``Flow.content_fingerprint``): the key of the flow's engine."""
        return hashlib.sha256(flow_json(self)).hexdigest()[:16]

    @property
    def fingerprints(self) -> tuple[str, str]:
        """Every fingerprint the flow answers to: :attr:`fingerprint`, then the legacy
        :attr:`content_fingerprint`."""
        return self.fingerprint, self.content_fingerprint

    @cached_property
    def answer_ids(self) -> frozenset[str]:
        """Every answer id the flow reads: its questions, their companions, volunteered fields."""
        choices = [self.category_question.id] + [c.question.id for c in self.categories]
        ids = set(choices) | {f"{qid}{OTHER_SUFFIX}" for qid in choices}
        ids.add(self.other_category.description_id)
        ids.update(s.id for c in self.categories for s in c.secondary)
        return frozenset(ids)

    def category(self, name: str) -> CategoryData | None:
        """The category called ``name`` (exact name), or None."""
        for category in self.categories:
            if category.name == name:
                return category
        return None


def plain_dict(data: tuple[Any, ...]) -> dict[str, Any]:
    """A flow (or any part of it) as the dict its model dumps: nested parts as dicts, tuples as
    lists, keys in field order; what the fingerprints digest and the model is validated from."""
    return {name: _plain(value) for name, value in zip(data._fields, data, strict=True)}  # type: ignore[attr-defined]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return plain_dict(value) if hasattr(value, "_fields") else [_plain(v) for v in value]
    return value


def flow_json(flow: FlowData, *, wording: bool = True) -> bytes:
    """The flow as the JSON text its model's ``model_dump_json()`` writes, byte for byte
    (compact, UTF-8 as is; ``tests/test_flow_data.py`` holds the two equal on any valid flow),
    what the fingerprints digest. Without ``wording``, the questions' texts are left out: what a
    person reads but replay never compares (D261)."""
    data = plain_dict(flow)
    if not wording:
        del data["category_question"]["text"]
        for category in data["categories"]:
            del category["question"]["text"]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _category(
    name: str,
    hint: Hint,
    keywords: tuple[str, ...],
    question: tuple[str, str, tuple[str, ...], str],
    secondary: tuple[str, str],
) -> CategoryData:
    return CategoryData(
        name, hint, ChoiceQuestionData(*question), (SecondaryFieldData(*secondary),), keywords
    )


DEFAULT_FLOW: Final = FlowData(
    categories=(
        _category(
            "Frontend", "task", ("frontend", "front end", "ui", "react", "component"),
            ("frontend_framework", "Which framework?", ("React", "Vue", "Svelte"), "Framework"),
            ("styling", "Styling"),
        ),
        _category(
            "Backend", "adr", ("api", "endpoint", "backend", "back end"),
            ("backend_api_style", "Which API style?", ("REST", "GraphQL", "gRPC"), "API_Style"),
            ("backend_framework", "Framework"),
        ),
        _category(
            "Database", "adr", ("database", "db", "postgres", "postgresql", "mysql"),
            ("db_type", "Which database type?", ("PostgreSQL", "MySQL", "MongoDB"), "Type"),
            ("db_orm", "ORM"),
        ),
        _category(
            "Authentication", "adr",
            ("auth", "authentication", "authenticate", "authorization", "authorisation", "login",
             "oauth", "oauth2", "jwt"),
            ("auth_strategy", "Which authentication approach?",
             ("OAuth", "Email/Password", "Magic Link"), "Strategy"),
            ("auth_library", "Library"),
        ),
        _category(
            "Infra", "adr",
            ("deploy", "deployment", "docker", "dockerfile", "ci", "infra", "infrastructure"),
            ("infra_hosting", "Which hosting approach?", ("Cloud", "Self-hosted", "Serverless"),
             "Hosting"),
            ("infra_ci_cd", "CI_CD"),
        ),
    )
)  # fmt: skip
"""The spec's flow (spec §3 to §9) as C2 and C4 refine it: its tables, held here once.
``flows/default.toml`` is the same flow as a commented flow file (a test holds the two equal);
``default_flow()`` is its model."""

DEFAULT_FLOW_FILE: Final = Path(__file__).with_name("flows") / "default.toml"
"""The shipped default flow as a flow file: a complete, commented example of the format, the
same flow as :data:`DEFAULT_FLOW`."""
