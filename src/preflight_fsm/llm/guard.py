"""The guard: any Preflights LLM adapter, held to the contract by the engine, with fallback.

:class:`GuardedLLMAdapter` is Preflights' ``LLMPort`` around another adapter (Anthropic, OpenAI,
OpenRouter, a replay, anything with the port's two methods). Each call is asked of that
adapter and judged against the engine's own answer for the same position (``judge``): a reply
that keeps the contract is returned as it is, so the LLM's wording reaches the user; a reply
that breaks it, an error of the provider, or a reply slower than the deadline is replaced by the
engine's answer, and the replacement is reported (:class:`Replacement`, through
``on_replacement``). A session always goes on, and a decision never holds a value the user did
not give.

It is an :class:`FsmLLMAdapter` too, so Preflights' application on the engine
(``FsmPreflightsApp``) asks it for every turn of the hybrid flow, not only the first.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

from preflights.adapters.llm_errors import (
    LLMCredentialsError,
    LLMInvalidResponseError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from preflights.application.types import LLMContext
from preflights.application.types import LLMResponse as PfLLMResponse
from preflights.application.types import Question as PfQuestion
from preflights.application.types import SessionSnapshot as PfSessionSnapshot
from preflights.core.types import DecisionPatch as PfDecisionPatch
from preflights.core.types import HeuristicsConfig

from preflight_fsm.flow import OTHER_SUFFIX, Flow
from preflight_fsm.integrations.preflights import (
    AnsweredSnapshot,
    FsmLLMAdapter,
    to_preflights_response,
)
from preflight_fsm.integrations.preflights.position import Standing
from preflight_fsm.llm.deadline import call_deadline
from preflight_fsm.llm.judge import judge_patch, judge_turn
from preflight_fsm.llm.shown_text import c5_problems, patch_texts, turn_texts
from preflight_fsm.option_names import as_flow_answers, shown_names

__all__ = [
    "DEADLINE_ENV",
    "DEFAULT_DEADLINE",
    "REASONS",
    "DeadlineClock",
    "GuardedLLMAdapter",
    "Replacement",
    "SystemClock",
    "complete_turn",
    "deadline_from",
]

DEADLINE_ENV: Final = "PREFLIGHT_FSM_LLM_DEADLINE"
"""The environment variable giving the deadline in seconds."""
DEFAULT_DEADLINE: Final = 10.0
"""Seconds an LLM has to answer before the engine answers instead."""

REASONS: Final = {
    "contract": "its reply breaks the contract",
    "deadline": "it did not answer within the deadline",
    "timeout": "the provider timed out",
    "rate_limit": "the provider's rate limit was hit",
    "provider_error": "the provider returned an error",
    "invalid_response": "the provider's reply was not a valid tool call",
    "credentials": "the provider refused the credentials",
}
"""Why a reply was replaced: each reason and how a user reads it."""

_REMEMBERED: Final = 1024


class DeadlineClock(Protocol):
    """Where the guard reads time (seconds, any origin) and how a simulated delay waits."""

    def monotonic(self) -> float:
        """Seconds since any fixed point; never goes back."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a simulated clock only moves on)."""
        ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """``time.sleep(seconds)``."""
        time.sleep(seconds)


def deadline_from(value: str | float | None = None) -> float:
    """The deadline: ``value`` if given, else ``$PREFLIGHT_FSM_LLM_DEADLINE``, else 10 seconds.

    Raises ValueError naming what to send when it is no positive number of seconds.
    """
    if value is None:
        value = os.environ.get(DEADLINE_ENV) or DEFAULT_DEADLINE
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(
            f"the LLM deadline is {value!r}: send a positive number of seconds, e.g. 10 "
            f"(--llm-deadline or {DEADLINE_ENV})"
        )
    return seconds


@dataclasses.dataclass(frozen=True, slots=True)
class Replacement:
    """One LLM reply the engine replaced: for which call, why (a key of REASONS), and what."""

    operation: str
    reason: str
    detail: str

    def line(self) -> str:
        """The one line pf prints: what was replaced and why."""
        what = "questions" if self.operation == "generate_questions" else "decision"
        return (
            f"preflight-fsm: the engine answered instead of the LLM ({what}): "
            f"{REASONS.get(self.reason, self.reason)}: {self.detail}"
        )


class _Failed(Exception):
    """The LLM gave no usable reply: a reason of REASONS and what happened."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class GuardedLLMAdapter(FsmLLMAdapter):
    """Preflights' ``LLMPort`` around ``llm``, judged by the engine, falling back to it.

    ``deadline`` (seconds; :func:`deadline_from` by default) bounds every call, measured on
    ``clock``; ``on_replacement`` is called with each :class:`Replacement` (``replacements``
    keeps the last ones too).

    >>> from preflights.adapters.mock_llm import MockLLMAdapter
    >>> from preflights.core.types import default_v1_heuristics
    >>> guard = GuardedLLMAdapter(MockLLMAdapter(), deadline=5)
    >>> turn = guard.generate_questions("Add OAuth login", default_v1_heuristics())
    >>> [q.id for q in turn.questions]
    ['auth_strategy', 'auth_strategy__other']
    >>> guard.replacements[-1].reason
    'contract'
    """

    def __init__(
        self,
        llm: Any,
        *,
        flow: Flow | None = None,
        deadline: float | str | None = None,
        clock: DeadlineClock | None = None,
        on_replacement: Callable[[Replacement], None] | None = None,
    ) -> None:
        super().__init__(flow=flow)
        self._llm = llm
        self._deadline = deadline_from(deadline)
        self._clock: DeadlineClock = clock or SystemClock()
        self._on_replacement = on_replacement
        self.replacements: deque[Replacement] = deque(maxlen=_REMEMBERED)
        # What Preflights' CLI shows as "LLM: <provider> (<model>)".
        self._model: str | None = getattr(llm, "_model", None)
        # The option texts this guard showed, per question id: what each names in the flow.
        self._shown: dict[str, dict[str, str]] = {}

    @property
    def provider(self) -> str:  # type: ignore[override]
        """The wrapped adapter's provider, as Preflights records it."""
        return str(getattr(self._llm, "provider", "llm"))

    @property
    def llm(self) -> Any:
        """The adapter being guarded."""
        return self._llm

    @property
    def deadline(self) -> float:
        """Seconds each call may take."""
        return self._deadline

    # -- LLMPort ------------------------------------------------------------------------------

    def generate_questions(
        self,
        intention: str,
        heuristics_config: HeuristicsConfig,
        context: LLMContext | None = None,
        session_state: PfSessionSnapshot | None = None,
        *,
        debug_llm: bool = False,
        repo_path: str | None = None,
    ) -> PfLLMResponse:
        """The LLM's questions if they keep the contract at this position; else the engine's."""
        if isinstance(session_state, AnsweredSnapshot) and session_state.answers:
            answers = self.engine_answers(dict(session_state.answers))
            session_state = dataclasses.replace(session_state, answers=tuple(answers.items()))
        reference = super().generate_questions(intention, heuristics_config, context, session_state)
        return self._judged_turn(
            reference,
            lambda: self._llm.generate_questions(
                intention,
                heuristics_config,
                context,
                session_state,
                debug_llm=debug_llm,
                repo_path=repo_path,
            ),
        )

    def extract_decision_patch(
        self,
        intention: str,
        answers: dict[str, str | tuple[str, ...]],
        heuristics_config: HeuristicsConfig,
        *,
        debug_llm: bool = False,
        repo_path: str | None = None,
    ) -> PfDecisionPatch | None:
        """The LLM's patch if it equals the engine's from the same answers, in the engine's words
        (the judge compares names case-insensitively and values without the spaces at their
        ends); else the engine's."""
        answers = self.engine_answers(answers)
        reference = super().extract_decision_patch(intention, answers, heuristics_config)
        try:
            reply = self._ask(
                lambda: self._llm.extract_decision_patch(
                    intention, answers, heuristics_config, debug_llm=debug_llm, repo_path=repo_path
                )
            )
        except _Failed as failed:
            self._replace("extract_decision_patch", failed.reason, failed.detail)
            return reference
        disagreements = c5_problems(patch_texts(reply)) or judge_patch(
            reply, reference, answers=answers
        )
        if disagreements:
            self._replace("extract_decision_patch", "contract", _summary(disagreements))
            return reference
        if isinstance(reply, PfDecisionPatch) and reference is not None:
            # The same decision: written as the engine writes it (no "MySQL\t" or "type" where
            # the user chose Type=MySQL), with the LLM's references.
            return dataclasses.replace(reply, category=reference.category, fields=reference.fields)
        return reply  # type: ignore[return-value]

    # -- what FsmPreflightsApp asks beyond the port ---------------------------------------------

    def turn_at(
        self,
        intention: str,
        where: Standing,
        heuristics_config: HeuristicsConfig,
        asked: Sequence[str],
        answers: Mapping[str, Any],
    ) -> PfLLMResponse:
        """The turn to show at ``where``: the LLM's, asked with the session so far, if it keeps
        the contract there; else the engine's."""
        assert where.turn is not None
        state = AnsweredSnapshot(
            intention=intention,
            asked_questions=tuple(asked),
            answered_questions=tuple(answers),
            missing_info=tuple(where.turn.missing_info),
            answers=tuple((k, v) for k, v in where.answers.items()),
        )
        return self._judged_turn(
            to_preflights_response(where.turn),
            lambda: self._llm.generate_questions(intention, heuristics_config, None, state),
        )

    def engine_answers(
        self, answers: Mapping[str, Any], shown: Iterable[PfQuestion] = ()
    ) -> dict[str, Any]:
        """``answers`` with each option text the LLM showed replaced by the flow's option it names.

        ``shown`` adds questions shown elsewhere (a session's stored ones, in another process).
        """
        return as_flow_answers(answers, {**self._shown, **shown_names(shown, self.flow)})

    # -- judging ------------------------------------------------------------------------------

    def _judged_turn(self, reference: PfLLMResponse, call: Callable[[], object]) -> PfLLMResponse:
        try:
            reply = complete_turn(self._ask(call), reference)
        except _Failed as failed:
            self._replace("generate_questions", failed.reason, failed.detail)
            return reference
        except LLMInvalidResponseError as exc:
            self._replace("generate_questions", "invalid_response", str(exc))
            return reference
        options = [o for q in reference.questions for o in q.options or ()]
        disagreements = c5_problems(turn_texts(reply), options) or judge_turn(
            reply, reference, self.flow
        )
        if disagreements:
            self._replace("generate_questions", "contract", _summary(disagreements))
            return reference
        self._shown.update(shown_names(reply.questions, self.flow))
        return reply

    def _ask(self, call: Callable[[], object]) -> object:
        """``call()``'s result within the deadline; raises _Failed naming why there is none."""
        start = self._clock.monotonic()
        box: dict[str, object] = {}
        done = threading.Event()

        def run() -> None:
            try:
                # The provider's connection ends by the deadline too: no call outlives it.
                with call_deadline(self._deadline):
                    box["value"] = call()
            except BaseException as exc:  # any failure of the LLM is replaced
                box["error"] = exc
            finally:
                done.set()

        # A daemon thread: a provider that never answers must not keep the process alive.
        threading.Thread(target=run, name="preflight-fsm-llm", daemon=True).start()
        finished = done.wait(self._deadline)
        if not finished or self._clock.monotonic() - start > self._deadline:
            raise _Failed("deadline", f"no reply within {self._deadline:g} s")
        if "error" in box:
            raise _classified(box["error"])  # type: ignore[arg-type]
        return box.get("value")

    def _replace(self, operation: str, reason: str, detail: str) -> None:
        replacement = Replacement(operation, reason, detail)
        self.replacements.append(replacement)
        if self._on_replacement is not None:
            self._on_replacement(replacement)


def _classified(exc: BaseException) -> _Failed:
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    cause = exc.__cause__
    if isinstance(exc, LLMCredentialsError) or getattr(cause, "status_code", None) in (401, 403):
        return _Failed("credentials", detail)
    if isinstance(exc, LLMTimeoutError):
        return _Failed("timeout", detail)
    if isinstance(exc, LLMRateLimitError):
        return _Failed("rate_limit", detail)
    if isinstance(exc, LLMInvalidResponseError):
        return _Failed("invalid_response", detail)
    return _Failed("provider_error", f"{type(exc).__name__}: {detail}")


def complete_turn(reply: object, reference: PfLLMResponse) -> PfLLMResponse:
    """``reply`` as Preflights' LLMResponse with the ``__other`` companions of the engine's turn.

    Preflights' tool schema cannot express a companion (its adapters drop ``depends_on_*``): a
    reply lacking one gets the engine's, and one sent as a plain optional question is shown as
    the companion it is, in the LLM's wording. Raises LLMInvalidResponseError for an object
    that is no LLMResponse.
    """
    questions = getattr(reply, "questions", None)
    if not isinstance(questions, tuple | list) or not all(
        isinstance(q, PfQuestion) for q in questions
    ):
        raise LLMInvalidResponseError(f"a {type(reply).__name__}, not an LLMResponse")
    companions = {q.id: q for q in reference.questions if q.depends_on_question_id}
    ids = {q.id for q in questions}
    filled: list[PfQuestion] = []
    for question in questions:
        companion = companions.get(question.id)
        if companion is not None and question.depends_on_question_id is None:
            question = dataclasses.replace(
                companion, question=question.question or companion.question
            )
        filled.append(question)
        companion = companions.get(f"{question.id}{OTHER_SUFFIX}")
        if companion is not None and companion.id not in ids:
            filled.append(companion)
    return PfLLMResponse(
        questions=tuple(filled),
        missing_info=tuple(getattr(reply, "missing_info", ())),
        decision_hint=getattr(reply, "decision_hint", "unsure"),
        progress=getattr(reply, "progress", -1.0),
    )


def _summary(disagreements: Sequence[object]) -> str:
    shown = "; ".join(str(d) for d in disagreements[:2])
    more = len(disagreements) - 2
    return shown + (f" (and {more} more)" if more > 0 else "")
