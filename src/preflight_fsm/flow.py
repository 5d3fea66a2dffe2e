"""The clarification flow as frozen data: categories, questions, keywords, limits (C2, C4, C5).

The `transitions` wiring in ``machine.py`` reads a :class:`Flow`; nothing here runs a session.
A flow is either :func:`default_flow` (the spec's tables) or loaded from TOML by :func:`load_flow`.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Iterator
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.errors import InvalidFlow
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
    "FlowRegistry",
    "Hint",
    "Limits",
    "OtherCategory",
    "SecondaryField",
    "default_flow",
    "default_registry",
    "load_flow",
    "load_registry",
    "other_text_question",
]

MAX_FLOW_FILE_BYTES: Final = 1024 * 1024
"""A flow file is read up to this size (the default flow is about 6 KB); a larger one is refused."""

OTHER_OPTION: Final = "Other (specify)"
"""The canonical "Other (specify)" (C2): the value every question lists, answers record and
snapshots keep, whatever label a flow's ``other_option`` shows a person."""

OTHER_SUFFIX = "__other"
"""Suffix of the free-text companion of a choice question (``auth_strategy__other``)."""


def other_text_question(question: str) -> str:
    """What the companion asks after "Other (specify)" (C2): ``Please specify (<question>):``."""
    return f"Please specify ({question}):"


Hint = Literal["task", "adr", "unsure"]
HINTS: Final[tuple[Hint, ...]] = get_args(Hint)
"""The decision hints (C7), in the order the contract lists them."""
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


class CategoryQuestion(_Frozen):
    """The phase-1 question; its options are the category names, in flow order."""

    id: str = Field(default="change_category", pattern=_ID)
    text: str = Field(default="What type of change is this?", min_length=1)


class OtherCategory(_Frozen):
    """Where a custom category text that names no known category ends up (C6)."""

    name: str = Field(default="Other", min_length=1)
    description_id: str = Field(default="description", pattern=_ID)
    field: str = Field(default="Description", min_length=1)
    hint: Hint = "unsure"


class Limits(_Frozen):
    """Input limits (C5) and the turn budget (C3)."""

    max_turns: int = Field(default=3, ge=3, le=10)
    # At most what a snapshot holds (sizes.py's MAX_VALUE), checked by Flow.
    max_intention_chars: int = Field(default=2000, ge=1)
    max_answer_chars: int = Field(default=500, ge=1)
    max_answers_per_step: int = Field(default=32, ge=1, le=1_000)


_WORDING: Final[dict[str, Any]] = {
    "category_question": {"text": True},
    "categories": {"__all__": {"question": {"text": True}}},
}
"""What a person reads but replay never compares: the questions' wording, left out of
:attr:`Flow.fingerprint` (D261)."""

_PLACEHOLDERS = ("tbd", "todo", "tba", "n/a", "na", "null", "unknown", "?", "-", "...", "…")


class Flow(_Frozen):
    """A complete clarification flow. Checked when built: ids are unique, names do not clash."""

    name: str = Field(default="default", min_length=1)
    other_option: str = Field(default=OTHER_OPTION, min_length=1)
    """The label a person sees for "Other (specify)"; its value stays OTHER_OPTION (C2)."""
    category_question: CategoryQuestion = CategoryQuestion()
    other_category: OtherCategory = OtherCategory()
    categories: tuple[Category, ...] = ()
    placeholders: tuple[str, ...] = _PLACEHOLDERS
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
    def fingerprint(self) -> str:
        """A short, stable digest of what replaying a session on the flow depends on (C9, C10,
        D261): its name, ids, category names, options, fields, hints, keywords, placeholders,
        the "Other (specify)" label (answers that name it are taken as Other) and limits; not
        the wording of its questions. Snapshots, attestations and passkey challenges carry it,
        so rewording a question keeps every session running."""
        replayed = self.model_dump_json(exclude=_WORDING)
        return hashlib.sha256(b"replay\0" + replayed.encode()).hexdigest()[:16]

    @cached_property
    def content_fingerprint(self) -> str:
        """A digest of the flow's whole content, wording included: the fingerprint sessions,
        seals, passkey challenges and decision records made before D261 carry (a registry
        answers to it too), and the key of the flow's engine, whose questions show the
        wording."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

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

    def category(self, name: str) -> Category | None:
        """The category called ``name`` (exact name), or None."""
        for category in self.categories:
            if category.name == name:
                return category
        return None


DEFAULT_FLOW_FILE: Final = Path(__file__).with_name("flows") / "default.toml"
"""The shipped default flow: a complete, commented example of the flow file format."""


@cache
def default_flow() -> Flow:
    """The spec's flow (spec §3 to §9) as C2 and C4 refine it. Always the same object."""
    return load_flow(DEFAULT_FLOW_FILE)


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
        data = {**data, "categories": [c.model_dump() for c in default_flow().categories]}
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


# -- flow versions (C10) --------------------------------------------------------------------------


class FlowRegistry:
    """The current flow and the earlier ones sessions may still run on, by fingerprint (C10).

    New sessions start on ``current``; a restored session steps on the flow it started on.
    """

    __slots__ = ("_by_fingerprint", "_flows", "current")

    def __init__(self, current: Flow, earlier: Iterable[Flow] = ()) -> None:
        self.current = current
        flows = (*earlier, current)
        # The legacy content fingerprints first: a flow's own fingerprint wins, the current
        # flow's over an earlier version's that only words its questions otherwise (D261).
        self._by_fingerprint = {flow.content_fingerprint: flow for flow in flows}
        self._by_fingerprint.update((flow.fingerprint, flow) for flow in flows)
        self._flows = {flow.content_fingerprint: flow for flow in flows}

    def get(self, fingerprint: str) -> Flow | None:
        """The registered flow with this fingerprint (or legacy content fingerprint), or
        None. Versions that differ only in their questions' wording share a fingerprint: the
        current one, else the last kept, answers to it."""
        return self._by_fingerprint.get(fingerprint)

    def aliases(self, fingerprint: str) -> tuple[str, ...]:
        """Every fingerprint that names the same replay as ``fingerprint``: the flow's own and
        the legacy content fingerprints of each registered version that words it otherwise
        (a passkey signed any of them for the same steps, D261). Empty when not registered."""
        flow = self.get(fingerprint)
        if flow is None:
            return ()
        same = [f.content_fingerprint for f in self if f.fingerprint == flow.fingerprint]
        return tuple(dict.fromkeys((flow.fingerprint, *same)))

    def unregistered(self, fingerprint: str, name: str | None = None) -> str:
        """Why a session on ``fingerprint`` (of the flow called ``name``, when known) cannot run
        here, and what to do: the one wording of it, wherever a session is refused (C10)."""
        named = f"flow {name!r}" if name else "flow"
        return (
            f"the session runs on the {named} with fingerprint {fingerprint}, which is not "
            f"registered (registered: {self.describe()}); pass the file of the {named} it "
            "started on with --flow FILE, or keep that file in the current flow's FLOW.versions/ "
            "folder, to finish it"
        )

    def __iter__(self) -> Iterator[Flow]:
        """The registered flows: the current one first, then the earlier ones."""
        yield self.current
        yield from (f for f in self._flows.values() if f is not self.current)

    def __len__(self) -> int:
        return len(self._flows)

    def describe(self) -> str:
        """``name@fingerprint`` of each registered flow, the current one marked."""
        shown: dict[str, str] = {}  # versions that only word their questions otherwise: once
        for f in self:
            shown.setdefault(f.fingerprint, f"{f.name}@{f.fingerprint}")
        shown[self.current.fingerprint] += " (current)"
        return ", ".join(shown.values())


VERSIONS_SUFFIX = ".versions"
"""Earlier versions of ``team.toml`` are kept as ``team.versions/*.toml`` beside it (C10)."""


def load_registry(path: str | Path) -> FlowRegistry:
    """The flow file at ``path`` as the current flow, with every earlier version kept beside it
    in ``<name>.versions/*.toml`` (a missing directory means none)."""
    source = Path(path)
    return FlowRegistry(load_flow(source), _earlier_versions(source))


def _earlier_versions(source: Path) -> list[Flow]:
    """The flows kept in ``<name>.versions/*.toml`` beside ``source``, by file name."""
    versions = source.with_name(source.stem + VERSIONS_SUFFIX)
    return [load_flow(p) for p in sorted(versions.glob("*.toml"))] if versions.is_dir() else []


@cache
def default_registry() -> FlowRegistry:
    """The default flow, with its earlier versions from ``flows/default.versions/`` beside it
    (C10; none has shipped yet, and a missing folder means none)."""
    return FlowRegistry(default_flow(), _earlier_versions(DEFAULT_FLOW_FILE))
