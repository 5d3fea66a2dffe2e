"""Who may answer over MCP: the ``--answers-from`` policy of both servers (``docs/mcp.md``).

The levels, from the least to the most the server asks of an answer (:data:`LEVELS`):

- ``any`` (the default) takes answers from tool arguments and from forms, and records which
  (``agent``, ``user_form``);
- ``user`` takes them only from the person, through elicitation forms: answers passed as tool
  arguments are refused with ``answers_need_user`` and change nothing. A client that cannot show
  forms, and a form the person declined, end in the same code with the answer page's link in the
  hint (``page_rounds.py``): nothing is ever accepted from the agent in their place;
- ``web`` takes them only through the answer page (docs/web.md): no form, no tool argument,
  recorded ``user_web``;
- ``person`` takes them only through the answer page, each turn confirmed with a passkey the
  people file lists (``web/signing.py``), recorded ``user_passkey`` with the proof: an answer
  posted without the person's passkey records nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, Literal, get_args

__all__ = [
    "ANSWERS_FROM_ENV",
    "LEVELS",
    "NEED_USER_ARGUMENTS",
    "NEED_USER_DECLINED",
    "NEED_USER_DECLINED_NO_PAGE",
    "NEED_USER_NO_FORMS",
    "NEED_USER_NO_FORMS_NO_PAGE",
    "NEED_USER_ON_PAGE",
    "SIGNED",
    "AnswersFrom",
    "answers_from_setting",
    "arguments_hint",
    "arguments_refused",
    "on_page",
    "policy_note",
]

AnswersFrom = Literal["any", "user", "web", "person"]

LEVELS: Final[tuple[AnswersFrom, ...]] = get_args(AnswersFrom)
"""The policy's levels, in the order of what they ask of an answer."""

ANSWERS_FROM_ENV: Final = "PREFLIGHT_FSM_ANSWERS_FROM"
"""Environment variable for ``--answers-from`` (``any``, ``user``, ``web`` or ``person``) when
the option is absent."""

USER_ONLY_NOTE: Final = (
    " This server takes answers only from the user, through forms it shows via your client "
    "(--answers-from user): never send answers yourself (they are refused with "
    "answers_need_user); follow each error's recovery_hint."
)
"""Added to a tool's description and the server's instructions under ``user``."""

_PAGE_NOTE: Final = (
    " This server takes answers only from the user, on its answer page{signed} "
    "(--answers-from {level}): never send answers yourself (they are refused with "
    "answers_need_user); show the person the link an error's recovery_hint gives and follow it."
)

NEED_USER_ARGUMENTS: Final = (
    "This server takes answers only from the person, through forms (--answers-from user); "
    "nothing was recorded. Call require_clarification again with the session_id (or the "
    "user_intention) and no answers: the person is asked each question in a form."
)
# The templates below: ``.format(session_id=..., link=...)``.
NEED_USER_NO_FORMS: Final = (
    "This server takes answers only from the person (--answers-from user), and this client "
    "cannot show forms. Do not answer for the person: show them this link and ask them to open "
    "it in their browser (it is for them alone, works once and expires): {link} . Then call "
    "require_clarification with session_id {session_id!r} and no answers to read the outcome "
    "(or a fresh link while the session still waits)."
)
NEED_USER_DECLINED: Final = (
    "The person declined or closed the form, and this server takes answers only from the person "
    "(--answers-from user); nothing was recorded and the session still waits. Do not answer for "
    "them: call require_clarification with session_id {session_id!r} and no answers when they "
    "are ready to see the form again, or show them this link to answer in their browser "
    "(it works once and expires): {link}"
)
# Servers without an answer page (``mcp --preflights`` today) send the person to a terminal.
NEED_USER_NO_FORMS_NO_PAGE: Final = (
    "This server takes answers only from the person, through forms (--answers-from user), and "
    "this client cannot show forms. Do not answer for the person: ask them to run "
    "`preflight-fsm chat --session {session_id}` in a terminal, on the store this server uses "
    "(or to connect a client that shows MCP forms), then call get_session or "
    "require_clarification with the session_id and no answers to read the outcome."
)
NEED_USER_DECLINED_NO_PAGE: Final = (
    "The person declined or closed the form, and this server takes answers only from the person "
    "(--answers-from user); nothing was recorded and the session still waits. Do not answer for "
    "them: call require_clarification with the session_id and no answers when they are ready to "
    "see the form again, or let them answer with `preflight-fsm chat --session {session_id}`."
)
NEED_USER_ON_PAGE: Final = (
    "This server takes answers only from the person, on its answer page{signed} "
    "(--answers-from {level}). Show the person this link and ask them to open it in their "
    "browser (do not open it or answer yourself; it works once and expires): {link} . Then call "
    "require_clarification with session_id {session_id!r} and no answers: it returns the "
    "outcome once they have answered."
)
SIGNED: Final = ", each turn confirmed with their passkey"
"""What ``person`` adds to the page's messages (``{signed}`` in the templates)."""


def on_page(level: AnswersFrom) -> bool:
    """True when ``level`` takes answers only through the answer page."""
    return level in ("web", "person")


def policy_note(level: AnswersFrom) -> str:
    """What a tool's description and the server's instructions add under ``level``."""
    if level == "user":
        return USER_ONLY_NOTE
    if on_page(level):
        return _PAGE_NOTE.format(signed=SIGNED if level == "person" else "", level=level)
    return ""


def arguments_hint(level: AnswersFrom) -> str:
    """What an agent whose answers were refused under ``level`` does instead."""
    if not on_page(level):
        return NEED_USER_ARGUMENTS
    return (
        "Call require_clarification again with the session_id (or the user_intention) and no "
        "answers: the result gives the answer page's link for the person (or the client shows "
        "it to them)."
    )


def arguments_refused(level: AnswersFrom) -> str:
    """The message refusing answers an agent passed as tool arguments under ``level``."""
    where = "through forms" if level == "user" else "on the answer page"
    if level == "person":
        where += " confirmed with their passkey"
    return (
        f"answers were passed as tool arguments, and this server takes answers only from the "
        f"person, {where} (--answers-from {level}); nothing was recorded"
    )


def answers_from_setting(
    value: str | None, env: Mapping[str, str] = os.environ
) -> AnswersFrom | None:
    """The policy ``value`` names, else the environment's, else ``any``; None if not a policy."""
    chosen = (value if value is not None else env.get(ANSWERS_FROM_ENV) or "any").strip().lower()
    return next((level for level in LEVELS if level == chosen), None)
