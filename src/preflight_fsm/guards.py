"""The named, pure guards of the transition table, and the effect of each row (C3-C6).

A guard reads a session and returns a real bool; it changes nothing (transitions may run it to
check whether a trigger could fire). Its name is what the table lists and the diagrams print, so
it reads as the condition it tests. An effect runs when its row is taken, before the state
changes, and moves the session to the row's destination (``states.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from preflight_fsm.flow_data import OTHER_SUFFIX
from preflight_fsm.session import Session
from preflight_fsm.states import AskingField, AwaitingText, Decided, Stopped

__all__ = [
    "EFFECTS",
    "GUARDS",
    "Effect",
    "Guard",
    "answered_category",
    "choice_key",
    "pending_key",
]

Guard = Callable[[Session], bool]
Effect = Callable[[Session], None]

# -- what a position asks about ------------------------------------------------------------------


def choice_key(s: Session) -> str:
    """The choice question the position resolves: the category's, or the category's field."""
    return s.engine.choice_of[s.position.category]


def pending_key(s: Session) -> str:
    """The key this state waits for: the choice, or in NeedOther its free text (C5)."""
    if type(s.position) is AwaitingText:
        return s.engine.text_of[s.position.category]
    return s.engine.choice_of[s.position.category]


def answered_category(s: Session) -> str | None:
    """The known category the category answer names, by option or by its free text (C6)."""
    engine = s.engine
    value = s.answers.get(engine.category_qid)
    if value is None:
        return None
    if value != engine.rules.other:
        return value
    text = s.answers.get(engine.category_companion)
    if text is None:
        return None
    return engine.category_named(text)


# -- guards ----------------------------------------------------------------------------------------


def intention_names_one_category(s: Session) -> bool:
    """C4: the intention's words match exactly one category's keywords."""
    return s.named_category is not None


def pending_question_answered(s: Session) -> bool:
    """C3, the lock: the state's question has a recorded answer, or was declined in this step.

    Every ``answer`` row carries it, so a step moves on only through states whose question is
    already answered and stops at the first that is not: a turn never asks a second field.
    """
    return s.declined or pending_key(s) in s.answers


def category_is_known(s: Session) -> bool:
    """C6: the category answer names a known category (directly, or by its free text)."""
    return answered_category(s) is not None


def category_is_custom(s: Session) -> bool:
    """C6: "Other (specify)" with text that names no known category."""
    engine = s.engine
    return (
        s.answers.get(engine.category_qid) == engine.rules.other
        and engine.category_companion in s.answers
        and answered_category(s) is None
    )


def other_text_missing(s: Session) -> bool:
    """C5: "Other (specify)" was chosen but its text is still owed."""
    key = choice_key(s)
    return s.answers.get(key) == s.engine.rules.other and key + OTHER_SUFFIX not in s.answers


def budget_left(s: Session) -> bool:
    """C3: another question turn fits in the session's budget."""
    return s.turn < s.engine.flow_data.limits.max_turns


def field_is_concrete(s: Session) -> bool:
    """C6: the primary field holds an option, or "Other (specify)" with its text."""
    key = choice_key(s)
    value = s.answers.get(key)
    if value is None:
        return False
    return value != s.engine.rules.other or key + OTHER_SUFFIX in s.answers


def text_names_known_category(s: Session) -> bool:
    """C6: the text owed for the category names one known category."""
    return s.position.category is None and answered_category(s) is not None


def text_is_concrete(s: Session) -> bool:
    """C5: the free text NeedOther waits for was given."""
    return choice_key(s) + OTHER_SUFFIX in s.answers


GUARDS: Final[dict[str, Guard]] = {
    guard.__name__: guard
    for guard in (
        intention_names_one_category,
        pending_question_answered,
        category_is_known,
        category_is_custom,
        other_text_missing,
        budget_left,
        field_is_concrete,
        text_names_known_category,
        text_is_concrete,
    )
}
"""Every guard the table may name, by name."""

# -- effects: each moves the session to its row's destination ----------------------------------


def adopt_intention_category(s: Session) -> None:
    """C4: ask the field of the category the intention names."""
    assert s.named_category is not None  # the row's guard says so
    s.position = AskingField(s.named_category)


def adopt_answered_category(s: Session) -> None:
    """C6: ask the field of the category the answer (or its text) names."""
    category = answered_category(s)
    assert category is not None  # the row's guards say so
    s.position = AskingField(category)


def file_under_other(s: Session) -> None:
    """C6: a custom category: the Other patch."""
    s.position = Decided(s.engine.flow_data.other_category.name)


def await_other_text(s: Session) -> None:
    """C5: ask the text of the "Other (specify)" just chosen."""
    s.position = AwaitingText(s.position.category)


def accept_field(s: Session) -> None:
    """C6: the field is decided: the patch of the category."""
    category = s.position.category
    assert category is not None  # NeedPrimaryField always knows its category
    s.position = Decided(category)


def accept_other_text(s: Session) -> None:
    """C6: the owed text decides the field, or files the session under Other."""
    category = s.position.category
    s.position = Decided(category if category is not None else s.engine.other_category_name)


def give_up(s: Session) -> None:
    """C5: declined, or no budget left: stop with the question unresolved."""
    s.position = Stopped(s.position.category)


EFFECTS: Final[dict[str, Effect]] = {
    effect.__name__: effect
    for effect in (
        adopt_intention_category,
        adopt_answered_category,
        file_under_other,
        await_other_text,
        accept_field,
        accept_other_text,
        give_up,
    )
}
"""Every effect the table may name, by name."""
