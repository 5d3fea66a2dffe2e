"""Preflights' application on the engine: the whole hybrid flow, asked turn by turn.

Preflights 1.1.4's ``PreflightsApp`` asks its LLM port for questions only when a session starts;
once those are answered it wants a patch, and a ``None`` patch is ``PATCH_EXTRACTION_FAILED``.
So an intention without keywords is asked the category and then fails. :class:`FsmPreflightsApp`
is Preflights' own application with one change (the fix ``docs/preflights.md`` proposes): when the
asked questions are answered but the engine is not Done, it asks the engine for the next turn
(the field after the category, the text of an "Other (specify)") and answers
``needs_more_answers`` with it. Everything else — validation, Preflights' core, the ADR and task
files — is Preflights' own code, run unchanged through ``super()``.

Every round ends: a session the engine ends without a decision (NoPatch, C1) is closed and
reported as the stop :data:`NO_DECISION`, answers the engine refuses as
:data:`INVALID_ANSWER` with its feedback (nothing recorded), and a round that would ask again,
without new answers, what it just asked is :data:`AWAITING_ANSWER` — so Preflights' interactive
loop, which re-asks only what it can prompt, never spins.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from preflights.application.ports.clock import ClockPort
from preflights.application.ports.config import ConfigLoaderPort
from preflights.application.ports.file_context import FileContextBuilderPort
from preflights.application.ports.filesystem import FilesystemPort
from preflights.application.ports.session import SessionNotFoundError, SessionPort
from preflights.application.ports.uid import UIDProviderPort
from preflights.application.preflights_app import PreflightsApp
from preflights.application.question_filter import merge_answers
from preflights.application.types import (
    AppErrorCode,
    PreflightContinueResult,
    PreflightError,
    Session,
)

from preflight_fsm.answered_by import AnsweredBy, Provenance
from preflight_fsm.answers import described
from preflight_fsm.challenge import signing_challenge
from preflight_fsm.errors import InvalidAnswers
from preflight_fsm.flow import OTHER_OPTION, OTHER_SUFFIX, Flow
from preflight_fsm.integrations.preflights.adapter import FsmLLMAdapter
from preflight_fsm.integrations.preflights.position import Standing, log_position
from preflight_fsm.integrations.preflights.provenance import note_who_answered
from preflight_fsm.integrations.preflights.sessions import (
    OWNER,
    record_round,
    recorded_provenance,
    recorded_rounds,
)
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.states import DONE

__all__ = [
    "AWAITING_ANSWER",
    "INVALID_ANSWER",
    "NO_DECISION",
    "FsmPreflightsApp",
    "Stop",
]

NO_DECISION: Final = "NO_DECISION"
"""The session ended without a decision (NoPatch): declined, or out of turns. Nothing written."""
INVALID_ANSWER: Final = "INVALID_ANSWER"
"""Preflights' own code for answers refused; here with the engine's feedback (C5)."""
AWAITING_ANSWER: Final = "AWAITING_ANSWER"
"""A round without new answers would ask again what it just asked: the client cannot answer it."""
SESSION_NOT_FOUND: Final = str(AppErrorCode.SESSION_NOT_FOUND)
"""Preflights' own code for a session gone: also one gone between a round's read and write."""

Answers = dict[str, str | tuple[str, ...]]

_REMEMBERED: Final = 1024
"""How many stops, user-side errors and pending rounds an app remembers (oldest forgotten)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Stop:
    """A session the engine ended without a decision: where, and why."""

    session_id: str
    repo_path: str
    reason: str


class FsmPreflightsApp(PreflightsApp):
    """Preflights' application with the engine's next turn after each answered turn.

    ``llm_adapter`` must be an :class:`FsmLLMAdapter`: the app asks it where the session stands.
    ``stops`` lists the sessions that ended without a decision and ``user_errors`` the codes of
    rounds that ended on the user's side, for a caller (``preflight-fsm pf``) that tidies up after
    Preflights' command line and tells a user's error from a system error.
    """

    def __init__(
        self,
        session_adapter: SessionPort,
        llm_adapter: FsmLLMAdapter,
        filesystem_adapter: FilesystemPort,
        uid_provider: UIDProviderPort,
        clock_provider: ClockPort,
        file_context_builder: FileContextBuilderPort,
        config_loader: ConfigLoaderPort,
        answered_by: AnsweredBy = "api",
    ) -> None:
        super().__init__(
            session_adapter=session_adapter,
            llm_adapter=llm_adapter,
            filesystem_adapter=filesystem_adapter,
            uid_provider=uid_provider,
            clock_provider=clock_provider,
            file_context_builder=file_context_builder,
            config_loader=config_loader,
        )
        self._engine = llm_adapter
        # Who supplies this application's answers (C9): `pf` is `cli`, `mcp --preflights` the
        # agent's tool arguments; a caller that knows better sets it per round.
        self.answered_by: AnsweredBy = answered_by
        # pf takes --debug-llm on start only, then continues without it: set to keep it on.
        self.debug_every_round = False
        # Bounded, as a server keeps one app for its whole life; pf reads them after one command.
        self.stops: deque[Stop] = deque(maxlen=_REMEMBERED)
        # Codes of the rounds that ended on the user's side (a stop, refused or missing answers).
        self.user_errors: deque[str] = deque(maxlen=_REMEMBERED)
        # The question ids each session was last answered with needs_more_answers (this process).
        self._last_asked: dict[str, tuple[str, ...]] = {}
        self._asked_lock = threading.Lock()  # a server's requests share it, each on a thread
        # How a hint tells the person to answer a question: `preflight-fsm pf` sets its command;
        # an MCP agent answers in the `answers` of its next require_clarification call.
        self.answer_command: str | None = None

    def _described(self, session: Session, answers_delta: dict[str, Any]) -> dict[str, Any]:
        """This round's answers, with the text typed for a custom category also as the Other
        decision's description (D180): a front end's choice, so the engine and an LLM guard
        judge the same answers."""
        flow = self._engine.flow
        key = flow.other_category.description_id
        if key in answers_delta or key in session.answers:
            return answers_delta
        merged = {**session.answers, **answers_delta}
        found = described(flow, {k: v for k, v in merged.items() if isinstance(v, str)})
        return {**answers_delta, key: found[key]} if key in found else answers_delta

    @property
    def engine_flow(self) -> Flow:
        """The flow the engine runs (its limits bound what a prompt takes)."""
        return self._engine.flow

    def asked_last(self) -> tuple[str, ...]:
        """The question ids of the latest round answered with needs_more_answers, if any."""
        with self._asked_lock:
            return next(reversed(self._last_asked.values()), ())

    def continue_preflight(
        self,
        session_id: str,
        answers_delta: dict[str, str | list[str]],
        *,
        debug_llm: bool = False,
        answered_by: AnsweredBy | None = None,
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> PreflightContinueResult:
        """Preflights' ``continue_preflight``, asking the engine's next turn instead of failing;
        this round's answers supplied by ``answered_by`` (else the application's) through
        ``principal`` with ``proof`` (C9, as ``ClarificationMachine.step``). A session that
        expires or is removed between this round's read and its write is SESSION_NOT_FOUND,
        as one found gone at the read: nothing of the round was written."""
        try:
            return self._continue(
                session_id, answers_delta, debug_llm, answered_by, principal, proof
            )
        except SessionNotFoundError:
            return PreflightContinueResult(
                status="error",
                error=PreflightError(
                    code=SESSION_NOT_FOUND,
                    message=f"Session not found: {session_id} (it expired or was removed while "
                    "this round ran; nothing of the round was written)",
                    recovery_hint="Start a new session with the same intention.",
                ),
            )

    def step_challenge(
        self, session_id: str, answers_delta: dict[str, str | list[str]]
    ) -> bytes | None:
        """What a passkey signs for ``continue_preflight(session_id, answers_delta)`` to take
        its engine step (``passkeys.signing_challenge`` over the step as it would be recorded:
        what ``preflight-fsm verify`` recomputes), recording nothing; None when the round takes
        no engine step (Preflights' own follow-up rounds once the engine decided, a session
        gone). InvalidAnswers when the engine refuses the answers (C5)."""
        session = self._session.get(session_id)
        if session is None or session.is_expired(self._clock.now_unix()):
            return None
        if session.core_questions_asked:
            return None
        answers_delta = self._engine.engine_answers(answers_delta, session.asked_questions)
        answers_delta = self._described(session, answers_delta)
        rounds = recorded_rounds(session)
        sources = recorded_provenance(session)
        owner = getattr(session, OWNER, None)
        standings = [
            self._engine.position(
                session.intention, answers, rounds, "user_web", sources, owner, one_step=True
            )
            for answers in ({}, _merged(session, answers_delta))  # the rounds alone, then this
        ]
        before, after = (where.record for where in standings)
        if after is None:
            raise InvalidAnswers(standings[1].feedback or {})
        if before is None or len(after.steps) == len(before.steps):
            return None
        number = len(after.steps)
        return signing_challenge(session.id, number, after.steps[-1], after.flow.fingerprint)

    def _continue(
        self,
        session_id: str,
        answers_delta: dict[str, str | list[str]],
        debug_llm: bool,
        answered_by: AnsweredBy | None,
        principal: str | None,
        proof: PasskeyProof | None,
    ) -> PreflightContinueResult:
        debug_llm = debug_llm or self.debug_every_round
        source = Provenance(answered_by or self.answered_by, principal, proof)
        session = self._session.get(session_id)
        if session is None or session.is_expired(self._clock.now_unix()):
            return super().continue_preflight(session_id, answers_delta, debug_llm=debug_llm)
        # The option texts an LLM showed become the flow's options they name (a guard's turns).
        answers_delta = self._engine.engine_answers(answers_delta, session.asked_questions)
        answers_delta = self._described(session, answers_delta)
        if session.core_questions_asked:
            # The engine was Done: these rounds answer Preflights' core's own follow-ups.
            result = super().continue_preflight(session_id, answers_delta, debug_llm=debug_llm)
            self._note_who_answered(session, result, source)
            return self._bounded(session_id, answers_delta, result)
        merged = _merged(session, answers_delta)
        where = self._engine.position(
            session.intention,
            merged,
            recorded_rounds(session),
            source,
            recorded_provenance(session),
            getattr(session, OWNER, None),
        )
        if debug_llm:
            self._engine.write_debug("continue_preflight", where, session.repo_path)
        if where.turn is None:
            return self._refused(session, merged, where)
        if where.turn.state == DONE:
            self._forget_asked(session_id)
            # The deciding round is recorded before Preflights' core takes over, so that its
            # follow-up rounds (answered by whoever) never stand in for who decided.
            record_round(session, where.answers, source)
            self._session.update(session)
            result = super().continue_preflight(session_id, answers_delta, debug_llm=debug_llm)
            self._note_who_answered(session, result, source)
            return result
        if where.turn.finished:
            return self._stop(session, merged, where)
        return self._next_turn(session, merged, where, answers_delta, source)

    def _note_who_answered(
        self, session: Session, result: PreflightContinueResult, source: Provenance
    ) -> None:
        """The ADR and task a completed round wrote end with the decision record: who
        supplied each decided value and the attestation, rebuilt from the session's record."""
        artifacts = result.artifacts
        if result.status != "completed" or artifacts is None:
            return
        # The engine's answers were all given by now (Preflights' own follow-ups come after).
        where = self._engine.position(
            session.intention,
            _merged(session, {}),
            recorded_rounds(session),
            source,
            recorded_provenance(session),
            getattr(session, OWNER, None),
        )
        if where.record is None or where.record.turn.patch is None:
            return
        note_who_answered(
            session.repo_path,
            (artifacts.adr_path, artifacts.task_path),
            where.record,
            session_id=session.id,
            prefilled=set(session.prefilled_answers),
        )

    def _next_turn(
        self,
        session: Session,
        merged: Answers,
        where: Standing,
        answers_delta: Mapping[str, Any],
        source: Provenance,
    ) -> PreflightContinueResult:
        assert where.turn is not None
        asked = {q.id for q in session.asked_questions}
        shown = self._engine.turn_at(
            session.intention,
            where,
            self._config.load(session.repo_path),
            [q.id for q in session.asked_questions],
            merged,
        )
        questions = shown.questions
        # A NeedOther turn asks "<id>__other" again, alone; Preflights already holds it as the
        # companion, which it requires now that "<id>" is "Other (specify)". Keep one of each id.
        new = tuple(q for q in questions if q.id not in asked)
        session.answers = dict(merged)
        session.all_answers = dict(merged)
        record_round(session, where.answers, source)
        session.asked_questions = session.asked_questions + new
        session.missing_info = shown.missing_info
        session.decision_hint = shown.decision_hint
        self._session.update(session)
        result = PreflightContinueResult(status="needs_more_answers", questions=questions)
        return self._bounded(session.id, answers_delta, result)

    def _stop(self, session: Session, merged: Answers, where: Standing) -> PreflightContinueResult:
        assert where.turn is not None
        log_position("continue_preflight: stopped", where)
        key = where.turn.missing_info[0] if where.turn.missing_info else "change_category"
        given = merged.get(f"{key}{OTHER_SUFFIX}", merged.get(key))
        others = {self._engine.flow.other_option.casefold(), OTHER_OPTION.casefold(), "other"}
        if given is None or str(given).strip().casefold() in others:
            reason = f"the turn budget ran out before {key} was answered"
        else:
            reason = f"{key} was declined: {given!r} is no usable answer"
        self._session.delete(session.id)
        self._forget_asked(session.id)
        self.stops.append(Stop(session.id, session.repo_path, reason))
        self.user_errors.append(NO_DECISION)
        return PreflightContinueResult(
            status="error",
            error=PreflightError(
                code=NO_DECISION,
                message=f"Clarification stopped without a decision: {reason}. Nothing was written.",
                details=(("missing_info", key),),
                recovery_hint="Start a new session when you know what to choose.",
            ),
        )

    def _bounded(
        self, session_id: str, answers_delta: Mapping[str, Any], result: PreflightContinueResult
    ) -> PreflightContinueResult:
        """``result``, unless it asks again, without new answers, exactly what it just asked."""
        if result.status != "needs_more_answers":
            self._forget_asked(session_id)
            return result
        ids = tuple(q.id for q in result.questions or ())
        if answers_delta or self._last_asked.get(session_id) != ids:
            with self._asked_lock:  # two requests dropping the oldest at once: one KeyError
                self._last_asked.pop(session_id, None)
                self._last_asked[session_id] = ids
                while len(self._last_asked) > _REMEMBERED:  # sessions abandoned mid-way
                    del self._last_asked[next(iter(self._last_asked))]
            return result
        self._forget_asked(session_id)
        self.user_errors.append(AWAITING_ANSWER)
        wanted = ", ".join(ids)
        return PreflightContinueResult(
            status="error",
            error=PreflightError(
                code=AWAITING_ANSWER,
                message=f"Still waiting for {wanted}, and this round brought no answer to it.",
                details=tuple(("question_id", qid) for qid in ids),
                recovery_hint=f"Answer it: {self._how_to_answer(ids[0] if ids else None)}.",
            ),
        )

    def _forget_asked(self, session_id: str) -> None:
        with self._asked_lock:
            self._last_asked.pop(session_id, None)

    def _how_to_answer(self, question_id: str | None) -> str:
        """The command (pf) or the call (MCP) that answers ``question_id``."""
        qid = question_id or "QUESTION_ID"
        if self.answer_command is not None:
            return f'{self.answer_command} {qid}="..."'
        return f"give {qid} in the answers of the next require_clarification call"

    def _refused(
        self, session: Session, merged: Answers, where: Standing
    ) -> PreflightContinueResult:
        """The engine refused answers (C5): its feedback as Preflights' INVALID_ANSWER.

        The refused answers are not recorded (an answer they would replace stays); the round's
        other answers are, as Preflights records a round's answers, so resending the corrected
        ones alone completes the round. The round is no engine step until then.
        """
        feedback = where.feedback or {}
        log_position("continue_preflight: refused", where)
        issues = feedback.get("issues", {})
        refused = {str(issue.get("field")) for issue in issues.get("invalid", ())}
        kept = {k: v for k, v in merged.items() if k not in refused}
        kept.update({k: v for k, v in session.answers.items() if k in refused})  # as they were
        if kept != _merged(session, {}):  # a round that keeps nothing new writes nothing, so
            session.answers = dict(kept)  # it never makes a concurrent round conflict
            session.all_answers = dict(kept)
            self._session.update(session)
        self.user_errors.append(INVALID_ANSWER)
        details: list[tuple[str, str]] = []
        lines: list[str] = []
        for issue in issues.get("invalid", ()):
            details.append((str(issue.get("field")), str(issue.get("problem"))))
            field, problem = issue.get("field"), issue.get("problem")
            lines.append(f"{field}: {problem} ({issue.get('requirement')})")
        return PreflightContinueResult(
            status="error",
            error=PreflightError(
                code=INVALID_ANSWER,
                message="Answer refused, not recorded: " + "; ".join(lines or ["see details"]),
                details=tuple(details),
                recovery_hint="Send it again, corrected: "
                + self._how_to_answer(sorted(refused)[0] if refused else None)
                + "; the other answers were kept.",
            ),
        )


def _merged(session: Session, answers_delta: Mapping[str, Any]) -> Answers:
    """Preflights' own merge: pre-filled < recorded < this round (lists become tuples)."""
    delta: Answers = {k: tuple(v) if isinstance(v, list) else v for k, v in answers_delta.items()}
    return merge_answers(merge_answers(session.prefilled_answers, session.answers), delta)
