"""Option texts in other words: which of the flow's options a shown option names.

An LLM may word a choice question's options its own way ("OAuth 2.0" for "OAuth"); the person
picks among the words shown, and the engine receives the flow's option each names. The judge
(``llm.judge``) refuses a reply whose options do not name one each; the Preflights adapter maps
the answers back (``integrations.preflights.adapter``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from preflight_fsm.flow import Flow

__all__ = ["as_flow_answers", "flow_options", "option_names", "shown_names"]


def flow_options(flow: Flow, qid: str) -> tuple[str, ...] | None:
    """The options the flow gives question ``qid`` ("Other (specify)" last); None if no choice."""
    if qid == flow.category_question.id:
        return (*(c.name for c in flow.categories), flow.other_option)
    for category in flow.categories:
        if category.question.id == qid:
            return (*category.question.options, flow.other_option)
    return None


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[^\W_]+", text.casefold()))


def option_names(shown: Sequence[str], options: Sequence[str], other: str) -> dict[str, str] | str:
    """Which of the flow's ``options`` each ``shown`` option names; a reason when not one each.

    A shown option names a flow option when it holds all of that option's words ("OAuth 2.0"
    names "OAuth", "Email and password" names "Email/Password"). Every shown option must name
    exactly one, no two the same, and "Other (specify)" must be shown as it is, last.

    >>> other = "Other (specify)"
    >>> names = option_names(["OAuth 2.0", "Email and password", "Magic link", other],
    ...                      ["OAuth", "Email/Password", "Magic Link", other], other)
    >>> names["OAuth 2.0"], names["Email and password"], names[other]
    ('OAuth', 'Email/Password', 'Other (specify)')
    """
    if len(shown) != len(options):
        return f"lists {len(shown)} options where the flow has {len(options)}"
    if not shown or shown[-1] != other:
        return f"does not end with {other!r}"
    named: dict[str, str] = {other: other}
    for text in shown[:-1]:
        words = set(_words(text))
        matches = [o for o in options[:-1] if _words(o) and set(_words(o)) <= words]
        exact = [o for o in matches if _words(o) == _words(text)]
        if exact:
            matches = exact
        if len(matches) != 1:
            which = "none" if not matches else "several"
            return (
                f"option {text!r} names {which} of the flow's options ({', '.join(options[:-1])})"
            )
        named[text] = matches[0]
    if len(set(named.values())) != len(named):
        return "two options name the same option of the flow"
    return named


def shown_names(questions: Iterable[Any], flow: Flow) -> dict[str, dict[str, str]]:
    """For each choice question shown in its own words: option text -> the flow's option."""
    names: dict[str, dict[str, str]] = {}
    for question in questions:
        options = flow_options(flow, question.id)
        shown = tuple(question.options or ())
        if shown and options and shown != options:
            found = option_names(shown, options, flow.other_option)
            if isinstance(found, dict):
                names[question.id] = found
    return names


def as_flow_answers(
    answers: Mapping[str, Any], names: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """``answers`` with each option text of ``names`` (:func:`shown_names`) as the flow's."""
    return {key: _named(value, names.get(key, {})) for key, value in answers.items()}


def _named(value: Any, names: Mapping[str, str]) -> Any:
    if isinstance(value, tuple | list):
        return type(value)(names.get(v, v) if isinstance(v, str) else v for v in value)
    return names.get(value, value) if isinstance(value, str) else value
