"""The tools: ``require_clarification`` (start, continue, elicit) and ``get_session``.

Every call ends in a result, never an exception: bad arguments, engine refusals and store
errors become ``error`` results (``errors.py``), and a failed step writes nothing. Store work
(load, restore, step, compare-and-set write) runs where ``store_work.py`` says: on the event loop
while the store need not wait, else in a worker thread; two calls stepping one session at once
race at the store, where exactly one write wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, InputRequiredResult

from preflight_fsm import (
    AnsweredBy,
    ClarificationMachine,
    InvalidAnswers,
    PreflightFsmError,
)
from preflight_fsm.answered_by import answered_through
from preflight_fsm.mcp.arguments import Answers, Intention, OptionalContext, SessionId, TurnNumber
from preflight_fsm.mcp.auth import current_caller
from preflight_fsm.mcp.errors import failed, failure_of
from preflight_fsm.mcp.page_rounds import PageRounds
from preflight_fsm.mcp.policy import AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer, RoundState
from preflight_fsm.mcp.results import (
    ClarificationOutcome,
    Failed,
    SessionOutcome,
    SessionView,
    outcome_of,
    session_view,
    tool_result,
)
from preflight_fsm.mcp.rounds import FormRounds, Refusal, Round, RoundFailure
from preflight_fsm.mcp.store_work import store_work
from preflight_fsm.states import TERMINAL_STATES
from preflight_fsm.store import SessionNotFound, Sessions, StoredSession

__all__ = ["ClarificationTools"]

logger = logging.getLogger(__name__)

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
class _Stored:
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
        page: PageRounds | None = None,
    ) -> None:
        self.sessions = sessions
        self.sealer = sealer
        self.answers_from = answers_from
        self.teams = dict(teams or {})
        self.rounds: FormRounds[Any] = FormRounds(self, sealer, page=page)

    # -- store work, run by store_work.py (on the loop or in a worker thread) -------------------

    async def _store_work(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await store_work(self.sessions.store, partial(fn, *args))

    # Worker threads see the request's context too: current_caller is the caller.

    def _start(self, intention: str, answers: Mapping[str, Any] | None) -> _Stored:
        owner = current_caller(self.teams).principal
        machine = ClarificationMachine(intention, self.sessions.flow, owner)
        if answers:
            machine.step(answers, "agent", principal=owner)  # refused: nothing stored (C5)
        record = self.sessions.create(machine)
        return _Stored(record.id, record.version, machine)

    def _owned(self, session_id: str) -> tuple[ClarificationMachine, StoredSession]:
        """The session, if the caller may use it; else SessionNotFound, as for no session."""
        machine, record = self.sessions.load(session_id)
        if not current_caller(self.teams).may_use(machine.owner, self.teams):
            raise SessionNotFound(session_id)
        return machine, record

    def _load(self, session_id: str) -> _Stored:
        machine, record = self._owned(session_id)
        return _Stored(record.id, record.version, machine)

    def _step(
        self,
        session_id: str,
        answers: Mapping[str, Any],
        *,
        turn: int | None = None,
        version: int | None = None,
        answered_by: AnsweredBy = "agent",
    ) -> _Stored:
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
        return _Stored(record.id, record.version, machine)

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
            return tool_result(await self._store_work(self._view, session_id))
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
            return await self.rounds.resume(ctx, continuing)
        given = answers if isinstance(answers, Mapping) else None
        if given and self.answers_from != "any":
            return self.rounds.refuse_arguments(continuing)
        try:
            if continuing is None:
                assert isinstance(user_intention, str)
                intention = user_intention
                if isinstance(optional_context, str) and optional_context.strip():
                    intention = f"{user_intention}\n\nContext: {optional_context}"
                position = await self._store_work(self._start, intention, given)
            elif given:
                expected = turn if isinstance(turn, int) else None
                position = await self._store_work(
                    partial(self._step, continuing, given, turn=expected)
                )
            else:
                position = await self._store_work(self._load, continuing)
        except _MovedOn as moved:
            return self._conflict(moved.position)
        except PreflightFsmError as error:
            return failure_of(error, continuing)
        return await self.rounds.ask(ctx, self._round_of(position))

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

    def _conflict(self, position: _Stored) -> Failed:
        turn = position.machine.turn
        where = (
            f"it already ended in {turn.state}"
            if turn.state in TERMINAL_STATES
            else f"it now asks turn {turn.number}"
        )
        return failed(
            "session_conflict",
            f"session {position.session_id!r} moved on before these answers arrived ({where}, "
            f"version {position.version}); nothing was written",
            session_id=position.session_id,
        )

    @staticmethod
    def _outcome(position: _Stored) -> Any:
        machine = position.machine
        return outcome_of(position.session_id, machine.turn, machine.decided_by)

    # -- the form rounds' host (``rounds.py`` asks them) ----------------------------------------

    def _round_of(self, position: _Stored) -> Round | Any:
        """The session's current turn as a round, or its outcome once it has ended."""
        machine = position.machine
        if machine.finished:
            return self._outcome(position)
        turn = machine.turn
        return Round(
            position.session_id,
            position.version,
            turn.number,
            machine.intention,
            turn.questions,
            source=position,
            before=_last_step(machine),
        )

    async def reopen(self, state: RoundState) -> Round | Any:
        try:
            position = await self._store_work(self._load, state.session_id)
        except PreflightFsmError as error:
            return failure_of(error, state.session_id)
        if position.version != state.version:
            return self._conflict(position)
        return self._round_of(position)

    async def submit(
        self, asked: Round, answers: dict[str, str], answered_by: AnsweredBy
    ) -> Round | Any | Refusal:
        """A form's step, written only over the version the round was asked on."""
        step = partial(self._step, answered_by=answered_by, version=asked.version)
        try:
            position = await self._store_work(step, asked.session_id, answers)
        except _MovedOn as moved:
            return self._conflict(moved.position)
        except InvalidAnswers as error:
            return Refusal(str(error), error.feedback)
        except PreflightFsmError as error:
            return failure_of(error, asked.session_id)
        return self._round_of(position)

    async def reopen_latest(self, session_id: str) -> Any:
        """The session as it stands now: its outcome, or its current questions."""
        try:
            position = await self._store_work(self._load, session_id)
        except PreflightFsmError as error:
            return failure_of(error, session_id)
        return self._outcome(position)

    def questions(self, asked: Round) -> Any:
        position: _Stored = asked.source
        return self._outcome(position)

    def failure(
        self,
        kind: RoundFailure,
        message: str,
        session_id: str | None,
        *,
        hint: str | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> Failed:
        return failed(kind, message, session_id=session_id, hint=hint, feedback=feedback)


class _MovedOn(Exception):
    """The session is no longer where the caller said it was (another step came first)."""

    def __init__(self, position: _Stored) -> None:
        super().__init__(position.session_id)
        self.position = position


def _last_step(machine: ClarificationMachine) -> str | None:
    """How the session's last recorded step was answered (None before its first)."""
    if not machine.answered_by:
        return None
    return answered_through(machine.answered_by[-1], machine.proofs[-1])
