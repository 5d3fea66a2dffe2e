"""The tools: ``require_clarification`` (start, continue, elicit) and ``get_session``.

Every call ends in a result, never an exception: bad arguments, engine refusals and store
errors become ``error`` results (``errors.py``), and a failed step writes nothing. Store work
(load, restore, step, compare-and-set write) is blocking I/O, so it runs in a worker thread; two
calls stepping one session at once therefore race at the store, where exactly one write wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from preflight_fsm import (
    AnsweredBy,
    ClarificationMachine,
    InvalidAnswers,
    PreflightFsmError,
    Question,
)
from preflight_fsm.mcp.arguments import Answers, Intention, OptionalContext, SessionId, TurnNumber
from preflight_fsm.mcp.auth import current_caller
from preflight_fsm.mcp.elicitation import (
    ANSWER_KEY,
    answers_from,
    can_elicit,
    elicit_form,
    form_message,
    input_request,
)
from preflight_fsm.mcp.errors import failed, failure_of
from preflight_fsm.mcp.policy import NEED_USER_DECLINED, NEED_USER_NO_FORMS, AnswersFrom
from preflight_fsm.mcp.request_state import InvalidRoundState, RoundSealer, RoundState
from preflight_fsm.mcp.results import (
    ClarificationOutcome,
    Failed,
    SessionOutcome,
    SessionView,
    outcome_of,
    session_view,
    tool_result,
)
from preflight_fsm.store import SessionNotFound, Sessions, StoredSession

__all__ = ["MAX_FORM_RETRIES", "ClarificationTools"]

logger = logging.getLogger(__name__)

MAX_FORM_RETRIES = 3
"""Refused forms (C5) re-asked within one call before the call ends in invalid_answers."""

_T = TypeVar("_T")

REQUIRE_CLARIFICATION = (
    "Call before writing code for a change whose approach is not settled. Start with "
    "user_intention; the result is needs_clarification (ask the user the questions, then call "
    "again with session_id and answers), completed (the decision: category and fields), stopped "
    "(the user declined: no decision), or error (error.code, error.message, "
    "error.recovery_hint; nothing was changed). Clients that support elicitation get the "
    "questions as forms and the final result in one call."
)
GET_SESSION = (
    "Where a clarification session stands: its status, current questions or decision, answers, "
    "and every transition it took (trace). Changes nothing."
)


@dataclass(frozen=True, slots=True)
class _Position:
    """A stored session as loaded or written: its id, stored version, and machine."""

    session_id: str
    version: int
    machine: ClarificationMachine


def _text_problem(value: object, where: str) -> str | None:
    """Why ``value`` (any JSON) is not clean text: U+FFFD (undecodable bytes) or a surrogate."""
    if isinstance(value, str):
        for ch in value:
            if ch == "\ufffd" or "\ud800" <= ch <= "\udfff":
                kind = "U+FFFD, what undecodable bytes become" if ch == "\ufffd" else "a surrogate"
                return f"{where} holds {kind} (U+{ord(ch):04X})"
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            problem = _text_problem(key, f"{where} key") or _text_problem(item, f"{where}.{key}")
            if problem:
                return problem
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            problem = _text_problem(item, f"{where}[{i}]")
            if problem:
                return problem
    return None


def _optional_text(value: object, name: str) -> Failed | None:
    if value is None or isinstance(value, str):
        return None
    return failed("invalid_arguments", f"{name} must be a string, not {_json_type(value)}")


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    names |= {list: "an array", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


class ClarificationTools:
    """The tools over one :class:`~preflight_fsm.store.Sessions`; registered by ``server.py``."""

    def __init__(
        self,
        sessions: Sessions,
        sealer: RoundSealer,
        answers_from: AnswersFrom = "any",
        teams: Mapping[str, str] | None = None,
    ) -> None:
        self.sessions = sessions
        self.sealer = sealer
        self.answers_from = answers_from
        self.teams = dict(teams or {})

    # -- blocking store work, run in a worker thread -----------------------------------------

    async def _blocking(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await anyio.to_thread.run_sync(partial(fn, *args))

    # Run in worker threads, which see the request's context: current_caller is the caller.

    def _start(self, intention: str, answers: Mapping[str, Any] | None) -> _Position:
        owner = current_caller(self.teams).principal
        machine = ClarificationMachine(intention, self.sessions.flow, owner)
        if answers:
            machine.step(answers, "agent", principal=owner)  # refused: nothing stored (C5)
        record = self.sessions.create(machine)
        return _Position(record.id, record.version, machine)

    def _owned(self, session_id: str) -> tuple[ClarificationMachine, StoredSession]:
        """The session, if the caller may use it; else SessionNotFound, as for no session."""
        machine, record = self.sessions.load(session_id)
        if not current_caller(self.teams).may_use(machine.owner, self.teams):
            raise SessionNotFound(session_id)
        return machine, record

    def _load(self, session_id: str) -> _Position:
        machine, record = self._owned(session_id)
        return _Position(record.id, record.version, machine)

    def _step(
        self,
        session_id: str,
        answers: Mapping[str, Any],
        *,
        turn: int | None = None,
        version: int | None = None,
        answered_by: AnsweredBy = "agent",
    ) -> _Position:
        """One step, its answers supplied by ``answered_by``, written by compare-and-set on the
        version it loaded (or ``version``)."""
        position = self._load(session_id)
        machine = position.machine
        moved = (version is not None and position.version != version) or (
            turn is not None and (machine.turn.number != turn or machine.finished)
        )
        if moved:
            raise _MovedOn(position)
        machine.step(answers, answered_by, principal=current_caller(self.teams).principal)
        record = self.sessions.save(session_id, machine, position.version)
        return _Position(record.id, record.version, machine)

    def _view(self, session_id: str) -> SessionView:
        machine, record = self._owned(session_id)
        # The session's own expiry (kept with it), as `preflight-fsm show` reports it.
        return session_view(self.sessions.state_of(record, machine), machine.trace)

    # -- the tools ---------------------------------------------------------------------------

    async def require_clarification(
        self,
        ctx: Context,
        user_intention: Intention = None,
        session_id: SessionId = None,
        answers: Answers = None,
        optional_context: OptionalContext = None,
        turn: TurnNumber = None,
    ) -> Annotated[CallToolResult, ClarificationOutcome] | InputRequiredResult:
        """Start or continue a clarification session (see REQUIRE_CLARIFICATION)."""
        try:
            result = await self._require_clarification(
                ctx, user_intention, session_id, answers, optional_context, turn
            )
        except Exception as exc:  # the last guard: a result, never a traceback (issue 12)
            logger.error("require_clarification failed: %s: %s", type(exc).__name__, exc)
            result = failed("internal_error", f"the call failed: {type(exc).__name__}")
        return result if isinstance(result, InputRequiredResult) else tool_result(result)

    async def get_session(
        self, session_id: SessionId = None
    ) -> Annotated[CallToolResult, SessionOutcome]:
        """Where a session stands, with its trace (see GET_SESSION)."""
        if not isinstance(session_id, str):
            return tool_result(
                failed(
                    "invalid_arguments",
                    f"session_id must be a string, not {_json_type(session_id)}",
                    hint="Send the session_id a require_clarification result gave.",
                )
            )
        problem = _text_problem(session_id, "session_id")
        if problem:
            return tool_result(failed("undecodable_text", problem))
        try:
            return tool_result(await self._blocking(self._view, session_id))
        except PreflightFsmError as error:
            return tool_result(failure_of(error, session_id))
        except Exception as exc:
            logger.error("get_session failed: %s: %s", type(exc).__name__, exc)
            return tool_result(failed("internal_error", f"the call failed: {type(exc).__name__}"))

    # -- require_clarification, step by step ---------------------------------------------------

    async def _require_clarification(
        self,
        ctx: Context,
        user_intention: object,
        session_id: object,
        answers: object,
        optional_context: object,
        turn: object,
    ) -> Any:
        refusal = self._check_arguments(user_intention, session_id, answers, optional_context, turn)
        if refusal is not None:
            return refusal
        continuing = session_id if isinstance(session_id, str) else None
        if ctx.request_state is not None:  # a 2026-07-28 elicitation round coming back
            return await self._next_round(ctx, continuing)
        given = answers if isinstance(answers, Mapping) else None
        if given and self.answers_from == "user":
            return failed(
                "answers_need_user",
                "answers were passed as tool arguments, and this server takes answers only from "
                "the person, through forms (--answers-from user); nothing was recorded",
                session_id=continuing,
            )
        try:
            if continuing is None:
                assert isinstance(user_intention, str)
                intention = user_intention
                if isinstance(optional_context, str) and optional_context.strip():
                    intention = f"{user_intention}\n\nContext: {optional_context}"
                position = await self._blocking(self._start, intention, given)
            elif given:
                expected = turn if isinstance(turn, int) else None
                position = await self._blocking(
                    partial(self._step, continuing, given, turn=expected)
                )
            else:
                position = await self._blocking(self._load, continuing)
        except _MovedOn as moved:
            return self._conflict(moved.position)
        except PreflightFsmError as error:
            return failure_of(error, continuing)
        if position.machine.finished:
            return self._outcome(position)
        if not can_elicit(ctx):
            return self._unanswered(position, declined=False)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._round(position, retries=0, problem=None)
        return await self._elicit_in_place(ctx, position)

    def _check_arguments(
        self,
        user_intention: object,
        session_id: object,
        answers: object,
        optional_context: object,
        turn: object,
    ) -> Failed | None:
        for value, name in (
            (user_intention, "user_intention"),
            (session_id, "session_id"),
            (optional_context, "optional_context"),
        ):
            refusal = _optional_text(value, name)
            if refusal is not None:
                return refusal
        if session_id is None and user_intention is None:
            return failed(
                "invalid_arguments", "send user_intention to start a session, or session_id"
            )
        if answers is not None and not isinstance(answers, Mapping):
            return failed(
                "invalid_arguments",
                f"answers must be an object of question id to text, not {_json_type(answers)}",
            )
        if turn is not None and (type(turn) is not int or turn < 1):
            return failed(
                "invalid_arguments",
                f"turn must be a positive integer (a needs_clarification's turn), not {turn!r}"
                if isinstance(turn, int | float)
                else f"turn must be a positive integer, not {_json_type(turn)}",
            )
        for value, name in (
            (user_intention, "user_intention"),
            (session_id, "session_id"),
            (optional_context, "optional_context"),
            (answers, "answers"),
        ):
            problem = _text_problem(value, name)
            if problem:
                return failed("undecodable_text", problem)
        return None

    def _conflict(self, position: _Position) -> Failed:
        turn = position.machine.turn
        where = (
            f"it already ended in {turn.state}"
            if turn.state in ("Done", "NoPatch")
            else f"it now asks turn {turn.number}"
        )
        return failed(
            "session_conflict",
            f"session {position.session_id!r} moved on before these answers arrived ({where}, "
            f"version {position.version}); nothing was written",
            session_id=position.session_id,
        )

    @staticmethod
    def _outcome(position: _Position) -> Any:
        machine = position.machine
        return outcome_of(position.session_id, machine.turn, machine.decided_by)

    def _unanswered(self, position: _Position, *, declined: bool) -> Any:
        """A turn the person was not asked (no forms) or did not answer (a declined form).

        Under ``any`` the agent gets the questions, to ask in chat and send as answers. Under
        ``user`` that is what the policy forbids: the call ends in ``answers_need_user``, the
        session as it stood, and the hint says what the person can do instead.
        """
        if self.answers_from != "user":
            return self._outcome(position)
        if declined:
            why, hint = "the person declined or closed the form", NEED_USER_DECLINED
        else:
            why, hint = "this client cannot show forms", NEED_USER_NO_FORMS
        return failed(
            "answers_need_user",
            f"turn {position.machine.turn.number} was not answered: {why}, and this server takes "
            "answers only from the person, through forms (--answers-from user); nothing was "
            "recorded",
            session_id=position.session_id,
            hint=hint.format(session_id=position.session_id),
        )

    # -- elicitation ---------------------------------------------------------------------------

    def _round(self, position: _Position, retries: int, problem: str | None) -> InputRequiredResult:
        """A 2026-07-28 input-required round asking the session's current turn as a form."""
        machine = position.machine
        questions = machine.turn.questions
        message = form_message(machine.intention, questions, problem)
        state = RoundState(position.session_id, position.version, machine.turn.number, retries)
        return InputRequiredResult(
            input_requests={ANSWER_KEY: input_request(message, questions)},
            request_state=self.sealer.seal(state),
        )

    async def _next_round(self, ctx: Context, session_id: str | None) -> Any:
        """Continue a 2026-07-28 round: check the state, take the form, step, ask on or finish."""
        try:
            state = self.sealer.open(ctx.request_state)
        except InvalidRoundState as exc:
            logger.warning("refused a round state: %s", exc)
            return failed(
                "invalid_request_state",
                f"the request state sent back was refused ({exc}); nothing was changed",
                session_id=session_id,
            )
        try:
            position = await self._blocking(self._load, state.session_id)
        except PreflightFsmError as error:
            return failure_of(error, state.session_id)
        if position.version != state.version:
            return self._conflict(position)
        response = (ctx.input_responses or {}).get(ANSWER_KEY)
        if not isinstance(response, ElicitResult):
            return failed(
                "invalid_arguments",
                f"the retry carries no response to the form {ANSWER_KEY!r}",
                session_id=position.session_id,
            )
        if response.action != "accept":
            return self._unanswered(position, declined=True)
        return await self._take_form(position, response.content, state.retries)

    async def _form_step(self, position: _Position, answers: dict[str, str]) -> _Position:
        """The step of an accepted form: the person's answers (``user_form``), written only over
        the version the form was asked on."""
        step = partial(self._step, answered_by="user_form", version=position.version)
        return await self._blocking(step, position.session_id, answers)

    async def _take_form(self, position: _Position, content: object, retries: int) -> Any:
        questions = position.machine.turn.questions
        answers, problem = answers_from(questions, content)
        feedback: dict[str, Any] | None = None
        if problem is None:
            try:
                position = await self._form_step(position, answers)
            except _MovedOn as moved:
                return self._conflict(moved.position)
            except InvalidAnswers as error:
                problem, feedback = str(error), error.feedback
            except PreflightFsmError as error:
                return failure_of(error, position.session_id)
        if problem is not None:
            if retries + 1 >= MAX_FORM_RETRIES:
                return failed(
                    "invalid_answers",
                    f"the form was refused {MAX_FORM_RETRIES} times; last: {problem}",
                    session_id=position.session_id,
                    feedback=feedback,
                )
            return self._round(position, retries + 1, problem)
        if position.machine.finished:
            return self._outcome(position)
        return self._round(position, 0, None)

    async def _elicit_in_place(self, ctx: Context, position: _Position) -> Any:
        """Handshake-era clients: ``elicitation/create`` per turn until the session ends."""
        retries, problem = 0, None
        # Bounded: each accepted form is a step (at most the flow's turn budget), each refused
        # one counts towards MAX_FORM_RETRIES.
        while not position.machine.finished:
            machine = position.machine
            questions: tuple[Question, ...] = machine.turn.questions
            message = form_message(machine.intention, questions, problem)
            reply = await elicit_form(ctx, message, questions)
            if reply is None:  # the client could not show the form
                return self._unanswered(position, declined=False)
            if reply.action != "accept":
                return self._unanswered(position, declined=True)
            answers, problem = answers_from(questions, reply.content)
            feedback: dict[str, Any] | None = None
            if problem is None:
                try:
                    position = await self._form_step(position, answers)
                    retries = 0
                    continue
                except _MovedOn as moved:
                    return self._conflict(moved.position)
                except InvalidAnswers as error:
                    problem, feedback = str(error), error.feedback
                except PreflightFsmError as error:
                    return failure_of(error, position.session_id)
            retries += 1
            if retries >= MAX_FORM_RETRIES:
                return failed(
                    "invalid_answers",
                    f"the form was refused {MAX_FORM_RETRIES} times; last: {problem}",
                    session_id=position.session_id,
                    feedback=feedback,
                )
        return self._outcome(position)


class _MovedOn(Exception):
    """The session is no longer where the caller said it was (another step came first)."""

    def __init__(self, position: _Position) -> None:
        super().__init__(position.session_id)
        self.position = position
