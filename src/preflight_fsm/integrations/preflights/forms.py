"""``mcp --preflights``: Preflights' questions asked as forms, and the ``--answers-from`` policy.

Preflights' own tool returns the questions for the agent to ask. Here, when the client shows
forms, ``require_clarification`` asks them itself, one form per round, in both protocol eras,
through the rounds both servers share (``preflight_fsm.mcp.rounds``); this module is their host:
it runs Preflights' tool, remembers what each session was asked, and names the errors in
Preflights' codes.
An accepted form is a round answered by ``user_form``; answers passed as tool arguments are the
agent's. Under ``--answers-from user`` those are refused with ``ANSWERS_NEED_USER`` (Preflights'
codes are upper case), and a client without forms or a declined form ends in the same code with
a hint, never in questions for the agent to answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import InputRequiredResult

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.mcp.policy import NEED_USER_ARGUMENTS, AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer, RoundState
from preflight_fsm.mcp.rounds import FormRounds, Refusal, Round, RoundFailure
from preflight_fsm.turn import Question

__all__ = ["ANSWERS_NEED_USER", "PreflightsForms"]

ANSWERS_NEED_USER: Final = "ANSWERS_NEED_USER"
_REMEMBERED: Final = 1024

# Preflights' upper-case codes for the ways a round ends in an error, and their hints.
_FAILURES: Final[dict[RoundFailure, tuple[str, str]]] = {
    "invalid_request_state": (
        "INVALID_REQUEST_STATE",
        "Call require_clarification with the session_id and no answers.",
    ),
    "invalid_arguments": ("INVALID_ARGUMENTS", "Send the form's response with the request state."),
    "invalid_answers": (
        "INVALID_ANSWER",
        "Call require_clarification with the session_id and no answers to ask again.",
    ),
    "answers_need_user": (ANSWERS_NEED_USER, NEED_USER_ARGUMENTS),
}

Result = dict[str, Any]
Call = Callable[..., Result]  # PreflightsTools.require_clarification


def _error(code: str, message: str, hint: str, session_id: str | None = None) -> Result:
    error: Result = {"status": "error", "error": {"code": code, "message": message}}
    error["error"]["recovery_hint"] = hint
    if session_id is not None:
        error["session_id"] = session_id
    return error


class PreflightsForms:
    """The forms and the policy around Preflights' ``require_clarification`` (``call``); the
    host of its form rounds (:class:`~preflight_fsm.mcp.rounds.FormRounds`)."""

    def __init__(self, call: Call, answers_from: AnswersFrom, sealer: RoundSealer) -> None:
        self.call = call
        self.answers_from = answers_from
        self.rounds: FormRounds[Result] = FormRounds(self, sealer)
        # The questions each session was last asked, by session id: a 2026-07-28 round coming
        # back is judged against them, and a session asked again of the person (after a
        # declined form) shows them again (Preflights would not ask the same round twice).
        self._asked: OrderedDict[str, tuple[str, Result]] = OrderedDict()

    async def require_clarification(
        self, ctx: Context[Any], **arguments: Any
    ) -> Result | InputRequiredResult:
        """Preflights' tool, with forms when the client shows them and the policy applied."""
        if ctx.request_state is not None:
            return await self.rounds.resume(ctx, None)
        answers = arguments.get("answers")
        session_id = arguments.get("session_id")
        if answers:
            if self.answers_from == "user":
                return self.rounds.refuse_arguments(session_id)
            result = await self._run(arguments, "agent")
        elif (
            isinstance(session_id, str)
            and session_id in self._asked
            and (self.answers_from == "user" or self.rounds.asks_the_person(ctx))
        ):
            result = self._asked[session_id][1]  # asked again of the person
        else:
            # An agent's empty call: Preflights' application judges it, as under pf, so the
            # same call twice is AWAITING_ANSWER, not the same questions again and again.
            result = await self._run(arguments, "agent")
        intention = arguments.get("user_intention")
        return await self.rounds.ask(ctx, self._round_of(result, intention or None))

    async def _run(self, arguments: dict[str, Any], answered_by: AnsweredBy) -> Result:
        run = partial(self.call, **arguments, answered_by=answered_by)
        return await anyio.to_thread.run_sync(run)

    def _round_of(self, result: Result, intention: str | None) -> Round | Result:
        """``result``'s questions as a round, remembered with the intention they clarify (the
        one kept when a continuing call does not repeat it); any other result as it is."""
        if result.get("status") != "needs_clarification":
            if result.get("session_id") is not None:
                self._asked.pop(result["session_id"], None)
            return result
        session_id: str = result["session_id"]
        kept = self._asked.pop(session_id, None)
        intention = intention or (kept[0] if kept else "this change")
        self._asked[session_id] = (intention, result)
        while len(self._asked) > _REMEMBERED:
            self._asked.popitem(last=False)
        return Round(session_id, 0, 0, intention, _questions(result), source=result)

    # -- the form rounds' host ---------------------------------------------------------------

    async def reopen(self, state: RoundState) -> Round | Result:
        asked = self._asked.get(state.session_id)
        if asked is None:  # asked by another process, or forgotten: ask again from here
            return self.failure(
                "invalid_request_state",
                "this server no longer knows the form this round answered; nothing was changed",
                state.session_id,
            )
        intention, result = asked
        return Round(state.session_id, 0, 0, intention, _questions(result), source=result)

    async def submit(
        self, asked: Round, answers: dict[str, str], answered_by: AnsweredBy
    ) -> Round | Result | Refusal:
        following = await self._run(
            {"user_intention": "", "session_id": asked.session_id, "answers": answers},
            answered_by,
        )
        error = following.get("error") or {}
        if following.get("status") == "error" and error.get("code") == "INVALID_ANSWER":
            return Refusal(str(error.get("message")))
        return self._round_of(following, None)

    def questions(self, asked: Round) -> Result:
        result: Result = asked.source
        return result

    def failure(
        self,
        kind: RoundFailure,
        message: str,
        session_id: str | None,
        *,
        hint: str | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> Result:
        code, default_hint = _FAILURES[kind]
        return _error(code, message, hint or default_hint, session_id)


def _questions(result: Result) -> tuple[Question, ...]:
    return tuple(Question.model_validate(q) for q in result.get("questions") or ())
