"""The clarification flow as frozen, validated data: categories, questions, keywords, limits
(C2, C4, C5).

A flow is either :func:`default_flow` (the spec's tables) or loaded from TOML by :func:`load_flow`;
nothing here runs a session. The engine runs on a flow's plain form (:attr:`Flow.plain`,
``flow_data.py``), so the command path, which runs the default flow, never builds these models.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.errors import InvalidFlow
from preflight_fsm.flow_data import (
    DEFAULT_FLOW,
    DEFAULT_FLOW_FILE,
    HINTS,
    OTHER_OPTION,
    OTHER_SUFFIX,
    PLACEHOLDERS,
    CategoryData,
    CategoryQuestionData,
    ChoiceQuestionData,
    FlowData,
    Hint,
    LimitsData,
    OtherCategoryData,
    SecondaryFieldData,
    other_text_question,
    plain_dict,
)
from preflight_fsm.sizes import MAX_SNAPSHOT_BYTES, MAX_TEXT, MAX_VALUE, worst_snapshot_bytes
from preflight_fsm.text import match_key, refused

__all__ = [
    "DEFAULT_FLOW_FILE",
    "HINTS",
    "OTHER_OPTION",
    "OTHER_SUFFIX",
    "Category",
    "CategoryQuestion",
    "ChoiceQuestion",
    "Flow",
    "Hint",
    "Limits",
    "OtherCategory",
    "SecondaryField",
    "default_flow",
    "flow_model",
    "load_flow",
    "other_text_question",
]

MAX_FLOW_FILE_BYTES: Final = 1024 * 1024
"""A flow file is read up to this size (the default flow is about 6 KB); a larger one is refused."""

_ID = r"^[a-z][a-z0-9_]*$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class ChoiceQuestion(_Frozen):
    """A category's primary question: asked as ``single_choice``, fills one patch field."""

    id: str = Field(pattern=_ID)
    text: str = Field(min_length=1)
    options: tuple[str, ...] = Field(min_length=1)
    field: str = Field(min_length=1)


class SecondaryField(_Frozen):
    """A field never asked but accepted when volunteered (C2)."""

    id: str = Field(pattern=_ID)
    field: str = Field(min_length=1)


class Category(_Frozen):
    """One routable category: its primary question, volunteered fields, hint and keywords."""

    name: str = Field(min_length=1)
    hint: Hint
    question: ChoiceQuestion
    secondary: tuple[SecondaryField, ...] = ()
    keywords: tuple[str, ...] = ()


# The defaults are flow_data.py's: each model mirrors its plain form, defaults included.
_CATEGORY_QUESTION: Final = CategoryQuestionData()
_OTHER_CATEGORY: Final = OtherCategoryData()
_LIMITS: Final = LimitsData()
_FLOW: Final = FlowData()


class CategoryQuestion(_Frozen):
    """The phase-1 question; its options are the category names, in flow order."""

    id: str = Field(default=_CATEGORY_QUESTION.id, pattern=_ID)
    text: str = Field(default=_CATEGORY_QUESTION.text, min_length=1)


class OtherCategory(_Frozen):
    """Where a custom category text that names no known category ends up (C6)."""

    name: str = Field(default=_OTHER_CATEGORY.name, min_length=1)
    description_id: str = Field(default=_OTHER_CATEGORY.description_id, pattern=_ID)
    field: str = Field(default=_OTHER_CATEGORY.field, min_length=1)
    hint: Hint = _OTHER_CATEGORY.hint


class Limits(_Frozen):
    """Input limits (C5) and the turn budget (C3)."""

    max_turns: int = Field(default=_LIMITS.max_turns, ge=3, le=10)
    # At most what a snapshot holds (sizes.py's MAX_VALUE), checked by Flow.
    max_intention_chars: int = Field(default=_LIMITS.max_intention_chars, ge=1)
    max_answer_chars: int = Field(default=_LIMITS.max_answer_chars, ge=1)
    max_answers_per_step: int = Field(default=_LIMITS.max_answers_per_step, ge=1, le=1_000)


class Flow(_Frozen):
    """A complete clarification flow. Checked when built: ids are unique, names do not clash."""

    name: str = Field(default=_FLOW.name, min_length=1)
    other_option: str = Field(default=_FLOW.other_option, min_length=1)
    """The label a person sees for "Other (specify)"; its value stays OTHER_OPTION (C2)."""
    category_question: CategoryQuestion = CategoryQuestion()
    other_category: OtherCategory = OtherCategory()
    categories: tuple[Category, ...] = ()
    placeholders: tuple[str, ...] = PLACEHOLDERS
    limits: Limits = Limits()

    @model_validator(mode="after")
    def _check_consistency(self) -> Flow:
        problems, offending = self._beyond_snapshots()

        ids = [self.category_question.id, self.other_category.description_id]
        for category in self.categories:
            ids.append(category.question.id)
            ids.extend(s.id for s in category.secondary)
        companions = [f"{self.category_question.id}{OTHER_SUFFIX}"]
        companions += [f"{c.question.id}{OTHER_SUFFIX}" for c in self.categories]
        duplicates = sorted({i for i in ids + companions if (ids + companions).count(i) > 1})
        if duplicates:
            problems.append("question ids are not unique: " + ", ".join(duplicates))
            offending += duplicates
        for qid in ids:
            if qid.endswith(OTHER_SUFFIX):
                problems.append(f"question id {qid!r} ends with the reserved {OTHER_SUFFIX!r}")
                offending.append(qid)

        names = [c.name for c in self.categories] + [self.other_category.name]
        lowered = [match_key(n) for n in names]
        clashing = sorted({n for n in names if lowered.count(match_key(n)) > 1})
        if clashing:
            problems.append("category names are not unique: " + ", ".join(clashing))
            offending += clashing

        others = {match_key(self.other_option), match_key(OTHER_OPTION), "other"}
        for category in self.categories:
            options = [match_key(o) for o in category.question.options]
            bad = sorted({o for o in category.question.options if options.count(match_key(o)) > 1})
            if bad:
                problems.append(f"{category.question.id}: options are not unique: {', '.join(bad)}")
                offending.append(category.question.id)
            if others.intersection(options):
                problems.append(
                    f"{category.question.id}: lists {self.other_option!r} itself; "
                    "it is appended to every choice question"
                )
                offending.append(category.question.id)
            blank = [k for k in category.keywords if not k.strip()]
            if blank:
                problems.append(f"{category.name}: empty keyword")
                offending.append(category.name)
        if problems:
            raise InvalidFlow("; ".join(problems), ids=tuple(dict.fromkeys(offending)))
        return self

    def _texts(self) -> Iterator[tuple[str, str]]:
        """(where, text) for every name, id, text, option and keyword: what snapshots, diagrams
        and prompts show (placeholders are only compared with)."""
        yield "name", self.name
        yield "other_option", self.other_option
        yield "category_question.id", self.category_question.id
        yield "category_question.text", self.category_question.text
        for key in ("name", "description_id", "field"):
            yield f"other_category.{key}", getattr(self.other_category, key)
        for category in self.categories:
            question = category.question
            yield "category name", category.name
            yield f"{category.name}: question id", question.id
            yield f"{question.id}: text", question.text
            yield f"{question.id}: field", question.field
            yield from ((f"{question.id}: option", o) for o in question.options)
            for secondary in category.secondary:
                yield f"{category.name}: secondary id", secondary.id
                yield f"{secondary.id}: field", secondary.field
            yield from ((f"{category.name}: keyword", k) for k in category.keywords)

    def _beyond_snapshots(self) -> tuple[list[str], list[str]]:
        """(problems, offending texts): what a session could not snapshot or would print out of
        place: a text longer than a snapshot's names, a line break or other control character
        (it would break a diagram's line or a prompt's), a limit above a snapshot's values."""
        problems: list[str] = []
        offending: list[str] = []
        for where, text in self._texts():
            if len(text) > MAX_TEXT:
                problems.append(
                    f"{where} {text[:40]!r}... is {len(text)} characters long; "
                    f"at most {MAX_TEXT} fit in a snapshot"
                )
                offending.append(text[:MAX_TEXT])
            unsafe = [c for c in text if c in "\t\n" or refused(c)]
            if unsafe:
                names = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(unsafe))
                problems.append(
                    f"{where} {text!r} holds a line break or an invisible or control character "
                    f"({names}); write it as one line of visible text"
                )
                offending.append(text)
        for key in ("max_intention_chars", "max_answer_chars"):
            value = getattr(self.limits, key)
            if value > MAX_VALUE:
                problems.append(
                    f"limits.{key} is {value:,}; a snapshot holds texts of at most {MAX_VALUE:,} "
                    "characters"
                )
                offending.append(f"limits.{key}")
        if not problems:
            problems += self._beyond_snapshot_bytes()
            offending += ["limits.max_intention_chars", "limits.max_answer_chars"][: len(problems)]
        return problems, offending

    def _beyond_snapshot_bytes(self) -> list[str]:
        """A refusal if a session within the limits could reach a snapshot too large to store:
        acknowledged, then unreadable (issue 30)."""
        names = (*(c.name for c in self.categories), self.other_category.name)
        choices = {self.category_question.id: names}
        choices.update((c.question.id, c.question.options) for c in self.categories)
        longest = {
            key: max(map(len, (*choices[key], self.other_option, OTHER_OPTION)))
            if key in choices
            else self.limits.max_answer_chars
            for key in self.answer_ids
        }
        worst = worst_snapshot_bytes(
            self.limits.max_intention_chars, longest, self.limits.max_turns
        )
        if worst <= MAX_SNAPSHOT_BYTES:
            return []
        return [
            f"limits.max_intention_chars ({self.limits.max_intention_chars:,}) and "
            f"limits.max_answer_chars ({self.limits.max_answer_chars:,}) let a session reach a "
            f"snapshot of up to {worst:,} bytes; a stored snapshot holds at most "
            f"{MAX_SNAPSHOT_BYTES:,}: lower them (each answer counts once per turn, 4 bytes a "
            "character)"
        ]

    @cached_property
    def plain(self) -> FlowData:
        """The flow as plain data (``flow_data.py``): what its engine runs on, field for field
        this model's values."""
        return _plain_of(self, FlowData)  # type: ignore[no-any-return]

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Flow:
        """A copy (pydantic's), which computes its own :attr:`plain` form: a copy with other
        fields must not run on this flow's engine."""
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("plain", None)
        return copied

    @property
    def fingerprint(self) -> str:
        """A short, stable digest of what replaying a session on the flow depends on (C9, C10,
        D261): its name, ids, category names, options, fields, hints, keywords, placeholders,
        the "Other (specify)" label (answers that name it are taken as Other) and limits; not
        the wording of its questions. Snapshots, attestations and passkey challenges carry it,
        so rewording a question keeps every session running. Computed from :attr:`plain`."""
        return self.plain.fingerprint

    @property
    def content_fingerprint(self) -> str:
        """A digest of the flow's whole content, wording included: the fingerprint sessions,
        seals, passkey challenges and decision records made before D261 carry (a registry
        answers to it too), and the key of the flow's engine, whose questions show the
        wording. Computed from :attr:`plain`."""
        return self.plain.content_fingerprint

    @property
    def fingerprints(self) -> tuple[str, str]:
        """Every fingerprint the flow answers to: :attr:`fingerprint`, then the legacy
        :attr:`content_fingerprint`."""
        return self.plain.fingerprints

    @property
    def answer_ids(self) -> frozenset[str]:
        """Every answer id the flow reads: its questions, their companions, volunteered fields."""
        return self.plain.answer_ids

    def category(self, name: str) -> Category | None:
        """The category called ``name`` (exact name), or None."""
        for category in self.categories:
            if category.name == name:
                return category
        return None


@cache
def default_flow() -> Flow:
    """The spec's flow (spec §3 to §9) as C2 and C4 refine it: ``flow_data.DEFAULT_FLOW``
    validated into its model. Always the same object."""
    return Flow.model_validate(plain_dict(DEFAULT_FLOW))


def flow_model(data: FlowData) -> Flow:
    """The model of a flow's plain form: :func:`default_flow` for the default flow, else
    ``data`` validated (it is the plain form of a valid flow, so this never raises)."""
    if data is DEFAULT_FLOW:
        return default_flow()
    return Flow.model_validate(plain_dict(data))


_PLAIN_FORMS: Final[dict[type[BaseModel], type[tuple[Any, ...]]]] = {
    ChoiceQuestion: ChoiceQuestionData,
    SecondaryField: SecondaryFieldData,
    Category: CategoryData,
    CategoryQuestion: CategoryQuestionData,
    OtherCategory: OtherCategoryData,
    Limits: LimitsData,
    Flow: FlowData,
}
"""Each model of a flow and the named tuple of ``flow_data.py`` that mirrors it."""


def _plain_of(value: Any, kind: type[tuple[Any, ...]] | None = None) -> Any:
    """A model (of ``kind``'s plain form) or a tuple of models as plain data, recursively."""
    if isinstance(value, BaseModel):
        plain = kind or _PLAIN_FORMS[type(value)]
        return plain(*(_plain_of(getattr(value, name)) for name in plain._fields))  # type: ignore[attr-defined]
    if isinstance(value, tuple):
        return tuple(_plain_of(v) for v in value)
    return value


def load_flow(path: str | Path) -> Flow:
    """Load a flow from a TOML file; unknown keys and broken definitions raise InvalidFlow.

    Keys left out take the default flow's values, except ``categories``, which a file that names
    any category replaces whole.
    """
    source = Path(path)
    try:
        data = tomllib.loads(read_bounded(source, MAX_FLOW_FILE_BYTES).decode("utf-8"))
    except OSError as exc:
        raise InvalidFlow(f"cannot read flow file {source}: {exc.strerror}") from None
    except Unreadable as exc:
        raise InvalidFlow(f"flow file {source} {exc.problem}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidFlow(f"{source} is not valid TOML: {exc}") from None
    return flow_from_data(data, source=str(source))


def flow_from_data(data: dict[str, Any], *, source: str = "flow") -> Flow:
    """Build a flow from plain data (as parsed from TOML), refusing unknown keys by name."""
    if "categories" not in data:
        data = {**data, "categories": plain_dict(DEFAULT_FLOW)["categories"]}
    try:
        return Flow.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            cause = error.get("ctx", {}).get("error")
            if isinstance(cause, InvalidFlow):
                raise InvalidFlow(f"{source}: {cause}", ids=cause.ids) from None
        unknown = [_dotted(e["loc"]) for e in exc.errors() if e["type"] == "extra_forbidden"]
        other = [
            f"{_dotted(e['loc'])}: {e['msg']}"
            for e in exc.errors()
            if e["type"] != "extra_forbidden"
        ]
        parts = []
        if unknown:
            parts.append("unknown keys: " + ", ".join(_with_suggestion(key) for key in unknown))
        parts += other
        raise InvalidFlow(f"{source}: " + "; ".join(parts), ids=tuple(unknown)) from None


def _with_suggestion(dotted: str) -> str:
    """An unknown key as shown, with the flow key it nearly spells (``keyword``: keywords)."""
    from preflight_fsm.suggest import nearest

    last = dotted.rsplit(".", 1)[-1]
    near = nearest(last, _flow_keys(Flow))
    return f"{dotted} (did you mean {near}?)" if near is not None else dotted


def _flow_keys(model: type[BaseModel], seen: frozenset[type] = frozenset()) -> set[str]:
    """Every key a flow file may hold, at any depth (the models' field names and aliases)."""
    import typing

    keys: set[str] = set()
    for name, field in model.model_fields.items():
        keys.add(field.alias or name)
        pending = [field.annotation]
        while pending:
            kind = pending.pop()
            pending.extend(typing.get_args(kind))
            if isinstance(kind, type) and issubclass(kind, BaseModel) and kind not in seen:
                keys |= _flow_keys(kind, seen | {model, kind})
    return keys


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)
