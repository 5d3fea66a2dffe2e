"""Answer normalisation, validation and the structured feedback of InvalidAnswers (C5).

:class:`AnswerRules` is compiled once per flow. :meth:`AnswerRules.merge` turns one step's raw
answers into the session's new record of answers, or raises :class:`InvalidAnswers` having
changed nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from preflight_fsm import text as _text
from preflight_fsm.errors import InvalidAnswers, InvalidIntention
from preflight_fsm.flow_data import OTHER_OPTION, OTHER_SUFFIX, FlowData

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow

__all__ = ["AnswerRules", "Merge", "described"]


Merge = tuple[dict[str, str], bool, dict[str, str | None]]
"""What one step's answers do: the new record, whether the user declined, and the step's answers
as normalised (None for blank), which the session keeps as its input (C9). A plain tuple: a step
unpacks it at once."""


class AnswerRules:
    """Which ids a flow knows, what each accepts, and the limits (C5)."""

    __slots__ = (
        "category_qid",
        "choice_options",
        "companion_of",
        "free_text",
        "known",
        "limits",
        "option_names",
        "other",
        "other_names",
        "placeholder_skeletons",
        "placeholders",
        "requirement",
    )

    def __init__(self, flow: FlowData) -> None:
        # C2: the canonical value, whatever label the flow shows; the label is accepted as it.
        self.other = OTHER_OPTION
        label = flow.other_option
        self.category_qid = flow.category_question.id
        self.other_names = frozenset({_text.match_key(self.other), "other", _text.match_key(label)})
        self.limits = flow.limits
        self.placeholders = frozenset(_text.match_key(p) for p in flow.placeholders)
        self.placeholder_skeletons = frozenset(
            key for p in flow.placeholders for key in _text.confusable_keys(p)
        )
        choices: dict[str, tuple[str, ...]] = {
            flow.category_question.id: tuple(c.name for c in flow.categories),
        }
        for category in flow.categories:
            choices[category.question.id] = category.question.options
        self.choice_options: dict[str, dict[str, str]] = {}
        self.option_names: dict[str, tuple[str, ...]] = {}  # as written, for look-alike checks
        for qid, options in choices.items():
            table = {_text.match_key(o): o for o in options}
            table.update(dict.fromkeys(self.other_names, self.other))
            self.choice_options[qid] = table
            self.option_names[qid] = tuple(dict.fromkeys((*options, label, self.other)))
        self.companion_of = {f"{qid}{OTHER_SUFFIX}": qid for qid in choices}
        for companion, base in self.companion_of.items():
            # A text for "Other (specify)" that only looks like one of the options is refused.
            self.option_names[companion] = self.option_names[base]
        self.free_text = frozenset(
            [flow.other_category.description_id]
            + [s.id for c in flow.categories for s in c.secondary]
        )
        self.known = flow.answer_ids
        max_chars = self.limits.max_answer_chars
        self.requirement: dict[str, str] = {}
        for qid, options in choices.items():
            listed = ", ".join((*options, label))
            self.requirement[qid] = f"one of: {listed} (or your own text, as for {label})"
        for qid in self.companion_of:
            self.requirement[qid] = f"the text for {label}, at most {max_chars} characters"
        for qid in self.free_text:
            self.requirement[qid] = f"text of at most {max_chars} characters"

    # -- single values ---------------------------------------------------------------------------

    def normalise(self, qid: str, raw: object) -> tuple[str | None, str, str | None]:
        """(concrete value or None for blank, its match key, problem or None) for one raw
        answer value: NFC, refused code points, white space collapsed, limits, look-alikes (C5).
        The match key is computed once here; every later comparison reads it."""
        if type(raw) is not str:  # text is the common case: the other checks only when not
            if raw is None:
                return None, "", None
            if isinstance(raw, list | tuple):
                if not all(isinstance(item, str) for item in raw):
                    return None, "", "a list may hold only strings"
                if len(raw) > 1:
                    kind = "a single choice" if qid in self.choice_options else "a free-text answer"
                    return None, "", f"several values ({len(raw)}) for {kind}"
                if not raw:
                    return None, "", None
                raw = raw[0]
            if not isinstance(raw, str):
                return None, "", f"must be text, not {type(raw).__name__}"
        unified = _text.normalise(raw)
        names = _text.refused(unified)
        if names:
            return None, "", _text.describe_refused(names)
        value = " ".join(unified.split())
        limit = self.limits.max_answer_chars
        if len(value) > limit:
            return None, "", f"is {len(value)} characters long; the limit is {limit}"
        key = _text.match_key(value)
        if qid not in self.choice_options and key in self.other_names:
            # Spec §5.2 Rule 2: the option is never a value; its text is what is asked for.
            return None, "", f"is the option {self.other!r} itself, not the text it stands for"
        deceptive = _text.lookalike(value, self.option_names.get(qid, ()))
        if deceptive is not None:
            return None, "", deceptive.problem
        if not value or self._is_placeholder(value, key):  # C5: blank or placeholder: no answer
            return None, "", None
        return value, key, None

    def _is_placeholder(self, text: str, key: str) -> bool:
        """True for a placeholder (C5), or a look-alike of one in other letters (Greek "TBA")."""
        # ASCII text is tested here, not only in confusable_with: a call saved per answer.
        return key in self.placeholders or (
            not text.isascii() and _text.confusable_with(text, self.placeholder_skeletons)
        )

    def check_intention(self, intention: object) -> str:
        """The cleaned intention, or InvalidIntention saying what to send instead (C5)."""
        if not isinstance(intention, str):
            raise InvalidIntention(
                f"the intention must be text, not {type(intention).__name__}; "
                "send one sentence describing the change"
            )
        unified = _text.normalise(intention)
        names = _text.refused(unified)
        if names:
            raise InvalidIntention(f"the intention {_text.describe_refused(names)}")
        text = unified.strip()
        limit = self.limits.max_intention_chars
        if not text or self._is_placeholder(text, _text.match_key(text)):
            raise InvalidIntention(
                f"the intention {text!r} says nothing; send one sentence describing the change"
            )
        if len(text) > limit:
            raise InvalidIntention(
                f"the intention is {len(text)} characters long; the limit is {limit}: "
                "send a shorter summary of the change"
            )
        deceptive = _text.lookalike(text, self.option_names[self.category_qid])
        if deceptive is not None:
            raise InvalidIntention(f"the intention {deceptive.problem}")
        return text

    def merge(
        self,
        recorded: dict[str, str],
        pending: str,
        answers: object,
        shortcut_category: str | None = None,
    ) -> Merge:
        """Validate one step's answers against the record; the record itself is not touched.

        ``shortcut_category`` is the category the intention resolved (C4), if it did: an
        answer to the category question must then name the same one (C5).
        """
        invalid: list[dict[str, Any]] = []
        missing: list[dict[str, str]] = []
        unknown: list[str] = []

        if type(answers) is not dict and not isinstance(answers, Mapping):
            invalid.append(
                _issue("answers", type(answers).__name__, "is not an object", _OBJECT_REQUIREMENT)
            )
            raise InvalidAnswers(self._feedback(pending, invalid, missing, unknown))
        if len(answers) > self.limits.max_answers_per_step:
            invalid.append(
                _issue(
                    "answers",
                    f"{len(answers)} answers",
                    "holds too many answers",
                    f"at most {self.limits.max_answers_per_step} answers in one step",
                )
            )
            raise InvalidAnswers(self._feedback(pending, invalid, missing, unknown))

        values: dict[str, str | None] = {}
        match_keys: dict[str, str] = {}
        for key, raw in answers.items():
            if key in self.known:
                value, match_key, problem = self.normalise(key, raw)
                if problem:
                    invalid.append(_issue(key, _shown(raw), problem, self.requirement[key]))
                else:
                    values[key] = value
                    match_keys[key] = match_key
            elif isinstance(key, str):
                unknown.append(key)
            else:
                invalid.append(
                    _issue("answers", repr(key), "has a key that is not text", _OBJECT_REQUIREMENT)
                )
        if pending not in answers:
            missing.append({"field": pending, "requirement": self.requirement[pending]})

        updates: dict[str, str] = {}
        for key, value in values.items():
            if value is None or key in self.companion_of:
                continue
            if key == self.category_qid and shortcut_category is not None:
                self._check_shortcut(match_keys[key], value, shortcut_category, invalid)
                continue
            options = self.choice_options.get(key)
            if options is None:
                _record(recorded, updates, key, value, value, invalid)
                continue
            canonical = options.get(match_keys[key])
            if canonical is not None:
                _record(recorded, updates, key, canonical, value, invalid)
                continue
            # A value that is no option is a custom value: "Other (specify)" with that text.
            companion = f"{key}{OTHER_SUFFIX}"
            given = values.get(companion)
            if given is not None and given != value:
                invalid.append(
                    _issue(
                        companion,
                        given,
                        f"differs from the custom value {value!r} given for {key}",
                        f"send the custom text once, as {key} or as {companion}",
                    )
                )
                continue
            _record(recorded, updates, key, self.other, value, invalid)
            _record(recorded, updates, companion, value, value, invalid)

        for companion, value in values.items():
            base = self.companion_of.get(companion)
            if base is None or value is None:
                continue
            # C5: a companion counts only when its question is "Other (specify)".
            if updates.get(base, recorded.get(base)) == self.other:
                _record(recorded, updates, companion, value, value, invalid)

        if invalid or missing or unknown:
            raise InvalidAnswers(self._feedback(pending, invalid, missing, unknown))
        return (
            {**recorded, **updates} if updates else recorded,
            values.get(pending, "") is None,
            values,
        )

    def _check_shortcut(
        self, match_key: str, value: str, category: str, invalid: list[dict[str, Any]]
    ) -> None:
        """C5: after the keyword shortcut the category is resolved; naming it again is fine."""
        if self.choice_options[self.category_qid].get(match_key) == category:
            return
        invalid.append(
            _issue(
                self.category_qid,
                value,
                f"conflicts with the category the intention already resolved: {category!r}",
                f"leave {self.category_qid} out, or send {category!r}; "
                "to file the change under another category, start a session whose "
                "intention names it",
            )
        )

    def _unknown_shown(self, key: str) -> str:
        """``key`` as the action names it, with the id it nearly spells (``change_categroy``:
        did you mean 'change_category'?); the answer is not taken for it (C5)."""
        from preflight_fsm.suggest import nearest

        near = nearest(key, sorted(self.known)) if len(key) <= _SUGGESTED_UP_TO else None
        return repr(key) if near is None else f"{key!r}: did you mean {near!r}?"

    def _feedback(
        self,
        pending: str,
        invalid: list[dict[str, Any]],
        missing: list[dict[str, str]],
        unknown: list[str],
    ) -> dict[str, Any]:
        actions: list[str] = []
        if invalid:
            fields = ", ".join(dict.fromkeys(i["field"] for i in invalid))
            actions.append(f"correct {fields} as each issue's requirement says")
        if missing:
            actions.append(f"include {pending} ({self.requirement[pending]})")
        if unknown:
            actions.append(
                "leave out ids this flow does not know ("
                + ", ".join(self._unknown_shown(u) for u in unknown)
                + ")"
            )
        action = (
            f"Send this turn's answers as an object of question id to text, with {pending!r}: "
            + "; ".join(actions)
            + ". Nothing was recorded."
        )
        return {
            "result": "validation_failed",
            "issues": {"invalid": invalid, "missing": missing, "unknown": unknown},
            "issue_count": len(invalid) + len(missing) + len(unknown),
            "action": action,
        }


def described(flow: Flow | FlowData, answers: Mapping[str, Any]) -> dict[str, Any]:
    """``answers`` with the text typed for a custom category also as the Other description.

    For the front ends (chat, pf, Preflights' tools; docs/decisions.md): an Other decision is
    described by what the person typed for the category rather than by the intention (C6 takes
    a ``description`` answer first). When the text names a category the engine ignores it; a
    text over the limit is left to the engine to refuse once, under its own id.
    """
    category = flow.category_question.id
    named = {_text.match_key(c.name) for c in flow.categories}
    named |= {_text.match_key(flow.other_option), "other"}
    key = flow.other_category.description_id
    for qid in (f"{category}{OTHER_SUFFIX}", category):
        typed = answers.get(qid)
        if key in answers or not isinstance(typed, str):
            continue
        text = " ".join(typed.split())
        fits = 0 < len(text) <= flow.limits.max_answer_chars
        if fits and _text.match_key(text) not in named:
            return {**answers, key: typed}
    return dict(answers)


_SUGGESTED_UP_TO = 100  # characters: a longer unknown key is no typo of an id, and costs to compare
_OBJECT_REQUIREMENT = "an object mapping question ids (text) to text, a list of text, or null"


def _issue(field: str, provided: str, problem: str, requirement: str) -> dict[str, Any]:
    return {"field": field, "provided": provided, "problem": problem, "requirement": requirement}


def _record(
    recorded: Mapping[str, str],
    updates: dict[str, str],
    key: str,
    value: str,
    provided: str,
    invalid: list[dict[str, Any]],
) -> None:
    """Record ``value`` under ``key`` in ``updates``, or an issue if it changes a recorded one."""
    before = recorded.get(key, updates.get(key))
    if before is None:
        updates[key] = value
    elif before != value:
        invalid.append(
            _issue(
                key,
                provided,
                f"conflicts with the recorded answer {before!r}",
                f"send {before!r} again or leave {key} out; an answer cannot change once recorded",
            )
        )


def _shown(raw: object) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."
