"""Who may answer over MCP: the ``--answers-from`` policy of both servers (``docs/mcp.md``).

``any`` (the default) takes answers from tool arguments and from forms, and records which
(``agent``, ``user_form``). ``user`` takes them only from the person, through elicitation forms:
answers passed as tool arguments are refused with ``answers_need_user`` and change nothing. A
client that cannot show forms, and a form the person declined, end in the same code with a hint
saying what the person can do: nothing is ever accepted from the agent in their place.
``web`` takes them only through the answer page (``page_rounds.py``, docs/web.md): no form, no
tool argument, recorded ``user_web``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, Literal

__all__ = [
    "ANSWERS_FROM_ENV",
    "NEED_USER_ARGUMENTS",
    "NEED_USER_DECLINED",
    "NEED_USER_NO_FORMS",
    "NEED_USER_ON_PAGE",
    "AnswersFrom",
    "answers_from_setting",
]

AnswersFrom = Literal["user", "any", "web"]

ANSWERS_FROM_ENV: Final = "PREFLIGHT_FSM_ANSWERS_FROM"
"""Environment variable for ``--answers-from`` (``user``, ``any`` or ``web``) when the option is
absent."""

USER_ONLY_NOTE: Final = (
    " This server takes answers only from the user, through forms it shows via your client "
    "(--answers-from user): never send answers yourself (they are refused with "
    "answers_need_user); follow each error's recovery_hint."
)
"""Added to a tool's description and the server's instructions under ``user``."""

NEED_USER_ARGUMENTS: Final = (
    "This server takes answers only from the person, through forms (--answers-from user); "
    "nothing was recorded. Call require_clarification again with the session_id (or the "
    "user_intention) and no answers: the person is asked each question in a form."
)
# The last two are templates: ``.format(session_id=...)``.
NEED_USER_NO_FORMS: Final = (
    "This server takes answers only from the person, through forms (--answers-from user), and "
    "this client cannot show forms. Do not answer for the person: ask them to run "
    "`preflight-fsm chat --session {session_id}` in a terminal, on the store this server uses "
    "(or to connect a client that shows MCP forms), then call get_session or "
    "require_clarification with the session_id and no answers to read the outcome."
)
NEED_USER_DECLINED: Final = (
    "The person declined or closed the form, and this server takes answers only from the person "
    "(--answers-from user); nothing was recorded and the session still waits. Do not answer for "
    "them: call require_clarification with the session_id and no answers when they are ready to "
    "see the form again, or let them answer with `preflight-fsm chat --session {session_id}`."
)


NEED_USER_ON_PAGE: Final = (
    "This server takes answers only from the person, on its answer page (--answers-from web). "
    "Show the person this link and ask them to open it in their browser (do not open it or "
    "answer yourself; it works once and expires): {link} . Then call require_clarification with "
    "session_id {session_id!r} and no answers: it returns the outcome once they have answered."
)


def answers_from_setting(
    value: str | None, env: Mapping[str, str] = os.environ
) -> AnswersFrom | None:
    """The policy ``value`` names, else the environment's, else ``any``; None if not a policy."""
    chosen = (value if value is not None else env.get(ANSWERS_FROM_ENV) or "any").strip().lower()
    if chosen == "user":
        return "user"
    if chosen == "any":
        return "any"
    if chosen == "web":
        return "web"
    return None
