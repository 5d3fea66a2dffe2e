"""Who is calling (C9): the rule for a principal (a token's name, an OIDC ``sub``), a session's
owner and a person's name.

Each is recorded as it is given and then shown to people and written into files and decision
records, so it is refused, never cleaned (C5): one line, in NFC, no invisible, control or
look-alike characters, no white space at an end, bounded.
"""

from __future__ import annotations

from typing import Final

from preflight_fsm import text as _text
from preflight_fsm.errors import InvalidAnswers

__all__ = ["MAX_PRINCIPAL", "PRINCIPAL_REQUIREMENT", "check_principal", "principal_problem"]

MAX_PRINCIPAL: Final = 200
"""The longest principal or person name, in characters."""

PRINCIPAL_REQUIREMENT: Final = (
    f"one line of 1 to {MAX_PRINCIPAL} characters, in NFC, without white space at either end "
    "or invisible, control or look-alike characters"
)


def principal_problem(value: object) -> str | None:
    """Why ``value`` is no principal (or person name), or None when it is one."""
    if type(value) is not str:
        return f"must be text, not {type(value).__name__}"
    if not value or len(value) > MAX_PRINCIPAL:
        return f"is {len(value)} characters long; it must be 1 to {MAX_PRINCIPAL}"
    if value != value.strip():
        return "has white space at an end; send it stripped"
    if value.isascii() and value.isprintable():
        return None  # the common case: nothing below can refuse it
    if "\n" in value or "\t" in value:
        return "holds a newline or a tab; send one line"
    nfc = _text.normalise(value)
    names = _text.refused(nfc)
    if names:
        return _text.describe_refused(names)
    if value != nfc:
        return "is not in NFC; send it normalised"
    deceptive = _text.lookalike(value)
    return None if deceptive is None else deceptive.problem


def check_principal(value: object, field: str = "principal") -> str | None:
    """``value`` if it is None or a clean principal, else InvalidAnswers naming ``field``
    (``principal``, ``owner``) and saying what to send instead."""
    if value is None:
        return None
    problem = principal_problem(value)
    if problem is None:
        assert isinstance(value, str)  # principal_problem refuses anything else
        return value
    raise InvalidAnswers.of_field(field, value, problem, PRINCIPAL_REQUIREMENT + ", or null")
