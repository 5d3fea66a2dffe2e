"""What a person's typed answer means, the same in ``chat`` and in ``answer KEY=VALUE``.

- A number picks that option of a choice question, counted from 1 as ``chat`` shows them; a
  number that is no option is refused, never sent as text (``answer --text`` sends it as typed).
- ``skip`` declines the question (C5: the session then ends without a patch). An empty answer
  never declines by itself: ``chat`` asks for a confirmation, ``answer`` refuses it, naming the
  key (an unset shell variable must not end a session for good).
- One character that is no option (a stray ``n`` left from a yes/no question) is refused at a
  choice question, never recorded as a custom value.
- Anything else is sent as typed; the engine matches options and takes other text as a custom
  value (C5). A near miss of an option (``Databse``) carries that option as ``suggestion``, for
  ``chat`` to ask "did you mean" before sending anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from preflight_fsm.cli.render import visible_question

if TYPE_CHECKING:
    from preflight_fsm.turn import Question, Turn
    from preflight_fsm.turn_data import QuestionData, TurnData

__all__ = [
    "DECLINE_WORD",
    "ChoiceOutOfRange",
    "EmptyAnswer",
    "RefusedReply",
    "Reply",
    "answers_from_pairs",
    "choice_value",
    "parse_reply",
]

DECLINE_WORD: Final = "skip"
"""Typed as an answer, declines the question."""

_NUMBER = re.compile(r"[+-]?[0-9]+")
_OTHER_ALIAS = "other"  # C5: the engine reads "other" as the "Other (specify)" option too


class RefusedReply(ValueError):
    """Typed input that cannot be an answer; the message says what to type instead."""


class ChoiceOutOfRange(RefusedReply):
    """A number picks none of the options; the message says which numbers do."""


class EmptyAnswer(RefusedReply):
    """An empty value where an answer was expected; the message names the key."""


class MisspelledKey(RefusedReply):
    """A key the flow does not know that nearly spells one of the turn's question ids."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one line of input answers.

    ``follow_up`` is a question to ask in the same turn before stepping (the text of "Other
    (specify)", C2); its answer joins ``answers`` under its id. ``confirm_decline`` means the
    line was empty: declining needs a confirmation first. ``suggestion`` is the option the typed
    text nearly spells, to offer before sending the text as typed.
    """

    answers: dict[str, str]
    follow_up: Question | QuestionData | None = None
    confirm_decline: bool = False
    suggestion: str | None = None


def choice_value(question: Question | QuestionData, typed: str) -> str:
    """``typed`` for ``question``: the option a number picks, else the text as typed.

    Raises ChoiceOutOfRange for a number that is no option.
    """
    options = question.options
    text = typed.strip()
    if not options or not _NUMBER.fullmatch(text):
        return typed
    number = int(text)
    if not 1 <= number <= len(options):
        raise ChoiceOutOfRange(
            f"There is no option {text}: choose a number from 1 to {len(options)}, "
            "or type your answer."
        )
    return options[number - 1]


def parse_reply(turn: Turn | TurnData, text: str, label: str | None = None) -> Reply:
    """The answers one line of input gives the turn's visible question (module docstring).

    Picking "Other (specify)", by number, by name or by the flow's ``label`` for it, asks its
    companion next (C2). Raises RefusedReply (ChoiceOutOfRange for a number that is no option).
    """
    question = visible_question(turn)
    _check_decodable(text)
    typed = text.strip()
    if not typed:
        return Reply({question.id: ""}, confirm_decline=True)
    if typed.casefold() == DECLINE_WORD:
        return Reply({question.id: ""})  # C5: a blank pending answer is a decline
    value = choice_value(question, text)
    if question.options and value == text:
        _check_not_stray(question.options, typed)
    companion = _companion(turn, question)
    if companion is not None and companion.depends_on_value is not None:
        other = companion.depends_on_value
        names = {other.casefold(), _OTHER_ALIAS, (label or other).casefold()}
        if value.strip().casefold() in names:
            return Reply({question.id: other}, follow_up=companion)
    if question.options and value == text:  # typed, not picked by number
        from preflight_fsm.suggest import nearest

        other_option = companion.depends_on_value if companion is not None else None
        named = [o for o in question.options if o != other_option]
        return Reply({question.id: value}, suggestion=nearest(value, named))
    return Reply({question.id: value})


def answers_from_pairs(
    turn: Turn | TurnData,
    pairs: list[tuple[str, str]],
    *,
    literal: bool = False,
    known: frozenset[str] | None = None,
) -> dict[str, Any]:
    """One step's answers from ``key=value`` pairs, read as ``chat`` reads a typed line.

    A number picks an option of the turn's choice question of that key, ``skip`` declines, an
    empty value raises EmptyAnswer naming the key; ``literal`` sends non-empty values as typed.
    A key given twice collects its values in a list (the engine refuses several values for a
    single choice, C5). A key outside ``known`` (the flow's answer ids) that nearly spells one of
    the turn's question ids raises MisspelledKey naming it; any other unknown key is the
    engine's to refuse.
    """
    choices = {q.id: q for q in turn.questions if q.options}
    answers: dict[str, Any] = {}
    for key, raw in pairs:
        if known is not None and key not in known:
            from preflight_fsm.suggest import nearest

            near = nearest(key, [q.id for q in turn.questions])
            if near is not None:
                raise MisspelledKey(
                    f"{key}= is no question of this flow: did you mean {near}={raw.strip()}?"
                )
        if not raw.strip():
            raise EmptyAnswer(
                f"{key}= has an empty value (an unset shell variable?): give an answer, or "
                f"{key}={DECLINE_WORD} to decline the question"
            )
        value = raw
        if not literal:
            if raw.strip().casefold() == DECLINE_WORD:
                value = ""
            elif key in choices:
                try:
                    value = choice_value(choices[key], raw)
                except ChoiceOutOfRange:
                    count = len(choices[key].options or ())
                    raise ChoiceOutOfRange(
                        f"{key}={raw.strip()}: there is no option {raw.strip()}; choose a number "
                        f"from 1 to {count}, or give the answer as text (--text sends numbers "
                        "as text)"
                    ) from None
        if key in answers:
            previous = answers[key]
            answers[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            answers[key] = value
    return answers


def _check_not_stray(options: tuple[str, ...], typed: str) -> None:
    # An invisible or control character is the engine's to refuse and name (C5), never echoed.
    if len(typed) != 1 or not typed.isprintable():
        return
    if typed.casefold() not in {o.casefold() for o in options}:
        raise RefusedReply(
            f'There is no option "{typed}", and one character is taken for a stray key: choose '
            f"a number from 1 to {len(options)}, or type your answer in full."
        )


def _check_decodable(text: str) -> None:
    if any("\ud800" <= char <= "\udfff" for char in text):
        raise RefusedReply("That line holds bytes that are not UTF-8 text; type it again.")


def _companion(
    turn: Turn | TurnData, question: Question | QuestionData
) -> Question | QuestionData | None:
    for candidate in turn.questions:
        if candidate.depends_on_question_id == question.id:
            return candidate
    return None
