"""``mcp --preflights``: Preflights' questions asked as forms, and the ``--answers-from`` policy.

Preflights' own tool returns the questions for the agent to ask. Here, when the client shows
forms, ``require_clarification`` asks them itself, one form per round, in both protocol eras,
through the rounds both servers share (``preflight_fsm.mcp.rounds``); this module is their host:
it runs Preflights' tool, remembers what each session was asked, and names the errors in
Preflights' codes.
An accepted form is a round answered by ``user_form``; answers passed as tool arguments are the
agent's. Under ``--answers-from user`` those are refused with ``ANSWERS_NEED_USER`` (Preflights'
codes are upper case), and a client without forms or a declined form ends in the same code with
a hint (the answer page's link), never in questions for the agent to answer. Under
``--answers-from web`` every round is answered on the answer page (``page.py``, recorded
``user_web``; under ``person`` each engine step signed, ``signed_page.py``): this host also
keeps each session's current round and, once it ends, its outcome, for the page and for a later
call with the ``session_id``.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import InputRequiredResult

from preflight_fsm.answered_by import AnsweredBy, answered_through
from preflight_fsm.integrations.preflights.application import NO_DECISION
from preflight_fsm.mcp.policy import NEED_USER_ARGUMENTS, AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer, RoundState
from preflight_fsm.mcp.rounds import FormRounds, Refusal, Round, RoundFailure
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.turn import Question

__all__ = ["ANSWERS_NEED_USER", "PreflightsForms", "ended"]

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


def ended(result: Result) -> bool:
    """Whether ``result`` ends its session: completed, or stopped without a decision."""
    error = result.get("error") or {}
    return result.get("status") == "completed" or error.get("code") == NO_DECISION


@dataclass(frozen=True, slots=True)
class _Asked:
    """A session's current round: what it clarifies, Preflights' result listing the questions,
    its serial (a new one per round, so a page link names one round), its turn number and how
    the turn before it was recorded (``answered_through``; None for the first)."""

    intention: str
    result: Result
    serial: int
    turn: int
    before: str | None = None


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
        # back is judged against them, a session asked again of the person (after a declined
        # form) shows them again (Preflights would not ask the same round twice), and the page
        # shows them.
        self._asked: OrderedDict[str, _Asked] = OrderedDict()
        # How sessions ended (for the page and a later call with the session_id).
        self._ended: OrderedDict[str, Result] = OrderedDict()
        self._serials = itertools.count(1)
        self._lock = threading.Lock()  # the page steps sessions from its own threads

    async def require_clarification(
        self, ctx: Context[Any], **arguments: Any
    ) -> Result | InputRequiredResult:
        """Preflights' tool, with forms when the client shows them and the policy applied."""
        if ctx.request_state is not None:
            return await self.rounds.resume(ctx, None)
        answers = arguments.get("answers")
        session_id = arguments.get("session_id")
        if answers:
            if self.answers_from != "any":
                return self.rounds.refuse_arguments(session_id)
            result = await self._run(arguments, "agent")
        elif (
            isinstance(session_id, str)
            and (asked := self.current(session_id)) is not None
            and (self.answers_from == "user" or self.rounds.asks_the_person(ctx))
        ):
            result = asked.source  # asked again of the person
        elif isinstance(session_id, str) and self.rounds.page is not None:
            # Answered on the page meanwhile: how it ended (else Preflights judges the call).
            result = self.outcome(session_id) or await self._run(arguments, "agent")
        else:
            # An agent's empty call: Preflights' application judges it, as under pf, so the
            # same call twice is AWAITING_ANSWER, not the same questions again and again.
            result = await self._run(arguments, "agent")
        intention = arguments.get("user_intention")
        return await self.rounds.ask(ctx, self._round_of(result, intention or None))

    async def _run(self, arguments: dict[str, Any], answered_by: AnsweredBy) -> Result:
        run = partial(self.call, **arguments, answered_by=answered_by)
        return await anyio.to_thread.run_sync(run)

    def _round_of(
        self,
        result: Result,
        intention: str | None,
        session_id: str | None = None,
        before: str | None = None,
    ) -> Round | Result:
        """``result``'s questions as a round, remembered with the intention they clarify (the
        one kept when a continuing call does not repeat it) and how the turn before was
        recorded (``before``); any other result as it is, and as the outcome of ``session_id``
        when it ends the session."""
        if result.get("status") != "needs_clarification":
            # A failed round (a conflict, a store error) leaves the round waiting as it was.
            done = result.get("session_id") or (session_id if ended(result) else None)
            if done is not None:
                with self._lock:
                    self._asked.pop(done, None)
                    if ended(result):
                        _bounded_put(self._ended, done, result)
            return result
        session_id = result.get("session_id") or session_id
        assert session_id is not None
        with self._lock:
            kept = self._asked.pop(session_id, None)
            if kept is not None and kept.result is result:  # asked again, unchanged
                asked = kept
            else:
                turn = kept.turn + 1 if kept is not None else 1
                chosen = intention or (kept.intention if kept else "this change")
                asked = _Asked(chosen, result, next(self._serials), turn, before)
            _bounded_put(self._asked, session_id, asked)
        return _round(session_id, asked)

    # -- for the answer page -------------------------------------------------------------------

    def remember(self, result: Result, intention: str, session_id: str) -> Round | Result:
        """Take ``result`` (Preflights' own, of ``session_id``) as the session's current round,
        or as its outcome when it ended."""
        return self._round_of(result, intention, session_id)

    def current(self, session_id: str) -> Round | None:
        """The round ``session_id`` waits for (its serial as the version), if this host asked
        one."""
        with self._lock:
            asked = self._asked.get(session_id)
        return None if asked is None else _round(session_id, asked)

    def outcome(self, session_id: str) -> Result | None:
        """How ``session_id`` ended, if it ended here."""
        with self._lock:
            return self._ended.get(session_id)

    def step(
        self,
        asked: Round,
        answers: dict[str, object],
        answered_by: AnsweredBy,
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> Round | Result | Refusal:
        """Answer ``asked`` (blocking), signed with ``proof`` when it is given: the next round,
        the result ending the call, or the answers refused (nothing recorded)."""
        following = self.call(
            user_intention="",
            session_id=asked.session_id,
            answers=answers,
            answered_by=answered_by,
            principal=principal,
            proof=proof,
        )
        error = following.get("error") or {}
        if following.get("status") == "error" and error.get("code") == "INVALID_ANSWER":
            return Refusal(str(error.get("message")))
        before = answered_through(answered_by, proof)
        return self._round_of(following, None, asked.session_id, before)

    # -- the form rounds' host ---------------------------------------------------------------

    async def reopen(self, state: RoundState) -> Round | Result:
        asked = self.current(state.session_id)
        if asked is None:  # asked by another process, or forgotten: ask again from here
            return self.failure(
                "invalid_request_state",
                "this server no longer knows the form this round answered; nothing was changed",
                state.session_id,
            )
        return asked

    async def reopen_latest(self, session_id: str) -> Result:
        """The session as it stands: its outcome once ended, else its questions."""
        asked = self.current(session_id)
        if asked is not None:
            return self.questions(asked)
        found = self.outcome(session_id)
        if found is not None:
            return found
        return await self._run({"user_intention": "", "session_id": session_id}, "agent")

    async def submit(
        self, asked: Round, answers: dict[str, str], answered_by: AnsweredBy
    ) -> Round | Result | Refusal:
        return await anyio.to_thread.run_sync(partial(self.step, asked, dict(answers), answered_by))

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


def _round(session_id: str, asked: _Asked) -> Round:
    return Round(
        session_id,
        asked.serial,
        asked.turn,
        asked.intention,
        _questions(asked.result),
        source=asked.result,
        before=asked.before,
    )


def _bounded_put(kept: OrderedDict[str, Any], key: str, value: Any) -> None:
    kept[key] = value
    while len(kept) > _REMEMBERED:
        kept.popitem(last=False)
