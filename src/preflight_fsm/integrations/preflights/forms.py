"""``mcp --preflights``: Preflights' questions asked as forms, and the ``--answers-from`` policy.

Preflights' own tool returns the questions for the agent to ask. Here, when the client shows
forms, ``require_clarification`` asks them itself, one form per round, in both protocol eras
(as the native server does, ``preflight_fsm.mcp.tools``): ``elicitation/create`` requests for
handshake-era clients, input-required rounds with sealed request state for 2026-07-28 clients.
An accepted form is a round answered by ``user_form``; answers passed as tool arguments are the
agent's. Under ``--answers-from user`` those are refused with ``ANSWERS_NEED_USER`` (Preflights'
codes are upper case), and a client without forms or a declined form ends in the same code with
a hint, never in questions for the agent to answer.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.mcp.elicitation import (
    ANSWER_KEY,
    answers_from,
    can_elicit,
    elicit_form,
    form_message,
    input_request,
)
from preflight_fsm.mcp.policy import (
    NEED_USER_ARGUMENTS,
    NEED_USER_DECLINED,
    NEED_USER_NO_FORMS,
    AnswersFrom,
)
from preflight_fsm.mcp.request_state import InvalidRoundState, RoundSealer, RoundState
from preflight_fsm.turn import Question

__all__ = ["ANSWERS_NEED_USER", "PreflightsForms"]

logger = logging.getLogger("preflight_fsm.integrations.preflights.agent_tools")

ANSWERS_NEED_USER: Final = "ANSWERS_NEED_USER"
MAX_FORM_RETRIES: Final = 3
_REMEMBERED: Final = 1024

Result = dict[str, Any]
Call = Callable[..., Result]  # PreflightsTools.require_clarification


def _error(code: str, message: str, hint: str, session_id: str | None = None) -> Result:
    error: Result = {"status": "error", "error": {"code": code, "message": message}}
    error["error"]["recovery_hint"] = hint
    if session_id is not None:
        error["session_id"] = session_id
    return error


class PreflightsForms:
    """The forms and the policy around Preflights' ``require_clarification`` (``call``)."""

    def __init__(self, call: Call, answers_from: AnswersFrom, sealer: RoundSealer) -> None:
        self.call = call
        self.answers_from = answers_from
        self.sealer = sealer
        # The questions each session was last asked in a form, by session id: a 2026-07-28
        # round coming back is judged against them, and a session asked again after a declined
        # form shows them again (Preflights would not ask the same round twice).
        self._asked: OrderedDict[str, tuple[str, Result]] = OrderedDict()

    async def require_clarification(
        self, ctx: Context[Any], **arguments: Any
    ) -> Result | InputRequiredResult:
        """Preflights' tool, with forms when the client shows them and the policy applied."""
        if ctx.request_state is not None:
            return await self._next_round(ctx)
        answers = arguments.get("answers")
        session_id = arguments.get("session_id")
        if answers:
            if self.answers_from == "user":
                return _error(
                    ANSWERS_NEED_USER,
                    "answers were passed as tool arguments, and this server takes answers only "
                    "from the person, through forms (--answers-from user); nothing was recorded",
                    NEED_USER_ARGUMENTS,
                    session_id,
                )
            result = await self._run(arguments, "agent")
        elif isinstance(session_id, str) and session_id in self._asked:
            result = self._asked[session_id][1]
        else:
            result = await self._run(arguments, "agent")
        intention = arguments.get("user_intention")
        return await self._ask(ctx, result, 0, None, intention if intention else None)

    async def _run(self, arguments: dict[str, Any], answered_by: AnsweredBy) -> Result:
        run = partial(self.call, **arguments, answered_by=answered_by)
        return await anyio.to_thread.run_sync(run)

    def _remember(self, result: Result, intention: str | None) -> str:
        """Keep ``result`` as the session's form; the intention it clarifies (the one kept when
        a continuing call does not repeat it)."""
        session_id = result["session_id"]
        kept = self._asked.pop(session_id, None)
        intention = intention or (kept[0] if kept else "this change")
        self._asked[session_id] = (intention, result)
        while len(self._asked) > _REMEMBERED:
            self._asked.popitem(last=False)
        return intention

    async def _ask(
        self,
        ctx: Context[Any],
        result: Result,
        retries: int,
        problem: str | None,
        intention: str | None = None,
    ) -> Result | InputRequiredResult:
        """Ask ``result``'s questions as a form, until the session completes or ends."""
        while result.get("status") == "needs_clarification":
            intention = self._remember(result, intention)
            if not can_elicit(ctx):
                return self._unanswered(result, declined=False)
            session_id = result["session_id"]
            questions = _questions(result)
            message = form_message(intention, questions, problem)
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return InputRequiredResult(
                    input_requests={ANSWER_KEY: input_request(message, questions)},
                    request_state=self.sealer.seal(RoundState(session_id, 0, 0, retries)),
                )
            reply = await elicit_form(ctx, message, questions)
            if reply is None:  # the client could not show the form
                return self._unanswered(result, declined=False)
            if reply.action != "accept":
                return self._unanswered(result, declined=True)
            result, retries, problem = await self._take(result, reply.content, retries)
            if problem is not None and retries >= MAX_FORM_RETRIES:
                return self._refused(result, problem)
        if result.get("session_id") is not None:
            self._asked.pop(result["session_id"], None)
        return result

    async def _take(
        self, result: Result, content: object, retries: int
    ) -> tuple[Result, int, str | None]:
        """One accepted form: the next result, or the same one with the problem to re-ask."""
        answers, problem = answers_from(_questions(result), content)
        if problem is not None:
            return result, retries + 1, problem
        following = await self._run(
            {"user_intention": "", "session_id": result["session_id"], "answers": answers},
            "user_form",
        )
        error = following.get("error") or {}
        if following.get("status") == "error" and error.get("code") == "INVALID_ANSWER":
            return result, retries + 1, str(error.get("message"))
        return following, 0, None

    async def _next_round(self, ctx: Context[Any]) -> Result | InputRequiredResult:
        """A 2026-07-28 round coming back: check its state, take the form, ask on or finish."""
        try:
            state = self.sealer.open(ctx.request_state)
        except InvalidRoundState as exc:
            logger.warning("refused a round state: %s", exc)
            return _error(
                "INVALID_REQUEST_STATE",
                f"the request state sent back was refused ({exc}); nothing was changed",
                "Call require_clarification with the session_id and no answers.",
            )
        asked = self._asked.get(state.session_id)
        if asked is None:  # asked by another process, or forgotten: ask again from here
            return _error(
                "INVALID_REQUEST_STATE",
                "this server no longer knows the form this round answered; nothing was changed",
                "Call require_clarification with the session_id and no answers.",
                state.session_id,
            )
        response = (ctx.input_responses or {}).get(ANSWER_KEY)
        if not isinstance(response, ElicitResult):
            return _error(
                "INVALID_ARGUMENTS",
                f"the retry carries no response to the form {ANSWER_KEY!r}",
                "Send the form's response with the request state.",
                state.session_id,
            )
        intention, result = asked
        if response.action != "accept":
            return self._unanswered(result, declined=True)
        result, retries, problem = await self._take(result, response.content, state.retries)
        if problem is not None and retries >= MAX_FORM_RETRIES:
            return self._refused(result, problem)
        return await self._ask(ctx, result, retries, problem, intention)

    def _unanswered(self, result: Result, *, declined: bool) -> Result:
        """Questions nobody answered in a form: for the agent under ``any``, else the policy's
        error, the session as it stood."""
        if self.answers_from != "user":
            return result
        session_id = result["session_id"]
        if declined:
            why, hint = "the person declined or closed the form", NEED_USER_DECLINED
        else:
            why, hint = "this client cannot show forms", NEED_USER_NO_FORMS
        return _error(
            ANSWERS_NEED_USER,
            f"the questions were not answered: {why}, and this server takes answers only from "
            "the person, through forms (--answers-from user); nothing was recorded",
            hint.format(session_id=session_id),
            session_id,
        )

    def _refused(self, result: Result, problem: str) -> Result:
        return _error(
            "INVALID_ANSWER",
            f"the form was refused {MAX_FORM_RETRIES} times; last: {problem}",
            "Call require_clarification with the session_id and no answers to ask again.",
            result["session_id"],
        )


def _questions(result: Result) -> tuple[Question, ...]:
    return tuple(Question.model_validate(q) for q in result.get("questions") or ())
