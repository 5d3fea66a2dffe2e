"""The Preflights drop-in: an ``LLMPort`` adapter on the machine, and the step loop in their types.

Two ways to use the engine from the real ``preflights`` package (extra ``preflights``):

- :class:`FsmLLMAdapter` implements Preflights' ``LLMPort`` exactly, with Preflights' own
  dataclasses, and offers what Preflights' tests use on their ``MockLLMAdapter``; pass it to
  ``PreflightsApp(llm_adapter=...)``.
- :class:`FsmSession` runs one session turn by turn (``machine.step(answers)``) and speaks
  Preflights' ``Question``, ``LLMResponse``, ``SessionSnapshot`` and ``DecisionPatch``: the loop a
  Preflights core would drive to get the full hybrid flow (see ``docs/preflights.md``).

Conversion is by field name (C8): our public models carry the names of Preflights' dataclasses.
The rest of the integration (``preflight_fsm.integrations.preflights``) builds on these:
``application`` (Preflights' application with the full hybrid flow), ``command_line``
(``preflight-fsm pf``), ``agent_tools`` (the MCP tools), ``sessions``, ``position`` and
``compat``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

try:
    from preflights.application.types import LLMContext
    from preflights.application.types import LLMResponse as PfLLMResponse
    from preflights.application.types import Question as PfQuestion
    from preflights.application.types import SessionSnapshot as PfSessionSnapshot
    from preflights.core.types import DecisionPatch as PfDecisionPatch
    from preflights.core.types import HeuristicsConfig
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from preflight_fsm.extras import install_hint

    raise ImportError(
        "preflight_fsm.integrations.preflights needs the 'preflights' package; install it "
        f"with: {install_hint('preflights')}"
    ) from exc

from preflights.adapters.llm_debug import write_llm_debug

from preflight_fsm.adapter import MockLLMAdapter
from preflight_fsm.answered_by import AnsweredBy, Provenance
from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.flow import OTHER_SUFFIX, Flow, default_flow
from preflight_fsm.integrations.preflights.position import (
    Standing,
    engine_intention,
    log_position,
    logger,
    position,
)
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.option_names import as_flow_answers, shown_names
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.snapshot import SessionSnapshot
from preflight_fsm.turn import LLMResponse, Question, Turn

__all__ = [
    "AnsweredSnapshot",
    "FsmLLMAdapter",
    "FsmSession",
    "from_preflights_patch",
    "from_preflights_question",
    "from_preflights_response",
    "to_preflights_patch",
    "to_preflights_question",
    "to_preflights_response",
    "to_preflights_snapshot",
]

Answers = Mapping[str, str | Sequence[str] | None]


# -- conversions by field name (C8) ----------------------------------------------------------------


def to_preflights_question(question: Question) -> PfQuestion:
    """Our Question as Preflights' ``application.types.Question``."""
    return PfQuestion(**question.model_dump())


def from_preflights_question(question: PfQuestion) -> Question:
    """Preflights' Question as ours (validated)."""
    return Question.model_validate(dataclasses.asdict(question))


def to_preflights_response(source: Turn | LLMResponse) -> PfLLMResponse:
    """A Turn or our LLMResponse as Preflights' ``LLMResponse``."""
    return PfLLMResponse(
        questions=tuple(to_preflights_question(q) for q in source.questions),
        missing_info=tuple(source.missing_info),
        decision_hint=source.decision_hint,
        progress=source.progress,
    )


def from_preflights_response(response: PfLLMResponse) -> LLMResponse:
    """Preflights' LLMResponse as ours (validated)."""
    return LLMResponse(
        questions=tuple(from_preflights_question(q) for q in response.questions),
        missing_info=tuple(response.missing_info),
        decision_hint=response.decision_hint,
        progress=response.progress,
    )


def to_preflights_patch(patch: DecisionPatch) -> PfDecisionPatch:
    """Our DecisionPatch as Preflights' ``core.types.DecisionPatch``."""
    return PfDecisionPatch(
        category=patch.category, fields=tuple(patch.fields), references=tuple(patch.references)
    )


def from_preflights_patch(patch: PfDecisionPatch) -> DecisionPatch:
    """Preflights' DecisionPatch as ours (validated)."""
    return DecisionPatch(
        category=patch.category, fields=tuple(patch.fields), references=tuple(patch.references)
    )


def to_preflights_snapshot(snapshot: SessionSnapshot) -> PfSessionSnapshot:
    """Preflights' four snapshot fields out of ours (a position, not an exact restore: C9)."""
    return PfSessionSnapshot(
        intention=snapshot.intention,
        asked_questions=tuple(snapshot.asked_questions),
        answered_questions=tuple(snapshot.answered_questions),
        missing_info=tuple(snapshot.missing_info),
    )


# -- the step loop in Preflights' types ---------------------------------------------------------


class FsmSession:
    """One clarification session, stepped turn by turn and shown in Preflights' types.

    >>> session = FsmSession("Improve the checkout flow")
    >>> [q.id for q in session.questions]
    ['change_category', 'change_category__other']
    >>> [q.id for q in session.step({"change_category": "Database"}).questions]
    ['db_type', 'db_type__other']
    >>> session.step({"db_type": "PostgreSQL"}).progress, session.patch
    (1.0, DecisionPatch(category='Database', fields=(('Type', 'PostgreSQL'),), references=()))
    """

    __slots__ = ("_machine",)

    def __init__(self, intention: str, flow: Flow | None = None) -> None:
        self._machine = ClarificationMachine(intention, flow)

    @classmethod
    def restore(
        cls, snapshot: SessionSnapshot | str | bytes | dict[str, Any], flow: Flow | None = None
    ) -> FsmSession:
        """A session restored from our snapshot (exactly, C9); raises InvalidSnapshot."""
        session = cls.__new__(cls)
        session._machine = ClarificationMachine.from_snapshot(snapshot, flow)
        return session

    @property
    def machine(self) -> ClarificationMachine:
        """The machine underneath, for its ``turn``, ``trace`` and ``snapshot()``."""
        return self._machine

    @property
    def response(self) -> PfLLMResponse:
        """This turn as the LLMResponse Preflights expects."""
        return to_preflights_response(self._machine.turn)

    @property
    def questions(self) -> tuple[PfQuestion, ...]:
        """The questions to show now; empty once the session has ended."""
        return tuple(self.response.questions)

    @property
    def finished(self) -> bool:
        """True once the session ended in Done or NoPatch."""
        return self._machine.finished

    @property
    def patch(self) -> PfDecisionPatch | None:
        """The decision, once the session is Done; else None (NoPatch is a valid outcome)."""
        patch = self._machine.turn.patch
        return to_preflights_patch(patch) if patch is not None else None

    @property
    def session_state(self) -> PfSessionSnapshot:
        """Preflights' SessionSnapshot of this session."""
        return to_preflights_snapshot(self._machine.snapshot())

    def step(self, answers: Answers) -> PfLLMResponse:
        """Record this turn's answers (Preflights' form: text or tuples) and show the next turn.

        Raises InvalidAnswers (with ``.feedback``) or SessionFinished; errors change nothing.
        """
        self._machine.step(answers)
        return self.response


# -- the LLMPort drop-in -------------------------------------------------------------------------


class FsmLLMAdapter:
    """Preflights' ``LLMPort`` on the machine: deterministic, stateless across sessions.

    It can stand in for Preflights' ``MockLLMAdapter``, test helpers included. It ignores answers
    to ids it does not know, honours ``session_state``, and returns None rather than a patch
    outside ``heuristics_config.schema``. It never raises for its input where Preflights' port
    does not (the reason is logged instead, ``position``). No prompt is ever sent
    anywhere: ``debug_llm`` with a ``repo_path`` writes the engine's account instead.

    >>> from preflights.core.types import default_v1_heuristics
    >>> adapter, config = FsmLLMAdapter(), default_v1_heuristics()
    >>> [q.id for q in adapter.generate_questions("Add login", config).questions]
    ['auth_strategy', 'auth_strategy__other']
    >>> adapter.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config)
    DecisionPatch(category='Authentication', fields=(('Strategy', 'OAuth'),), references=())
    """

    provider: str = "preflight-fsm"
    """What ``PreflightsApp`` records as ``llm_provider_used``."""

    def __init__(
        self,
        force_invalid_patch: bool = False,
        force_extraction_failure: bool = False,
        *,
        flow: Flow | None = None,
    ) -> None:
        self._flow = flow or default_flow()
        self._engine = MockLLMAdapter(self._flow)
        self._force_invalid_patch = force_invalid_patch
        self._force_extraction_failure = force_extraction_failure
        self._override_questions: tuple[PfQuestion, ...] | None = None
        self._is_fallback = False  # Preflights' factory sets it when the adapter is a fallback

    # -- what Preflights' tests use on their MockLLMAdapter ------------------------------------

    @property
    def flow(self) -> Flow:
        """The flow the adapter runs."""
        return self._flow

    @property
    def is_fallback(self) -> bool:
        """True when Preflights' factory installed this adapter as a fallback."""
        return self._is_fallback

    def set_questions(self, questions: Iterable[PfQuestion]) -> None:
        """Make every ``generate_questions`` answer with these questions (for tests)."""
        self._override_questions = tuple(questions)

    def clear_questions_override(self) -> None:
        """Undo ``set_questions``."""
        self._override_questions = None

    def force_invalid_patch(self, enabled: bool = True) -> None:
        """Make ``extract_decision_patch`` return a patch of an unknown category (for tests)."""
        self._force_invalid_patch = enabled

    def force_extraction_failure(self, enabled: bool = True) -> None:
        """Make ``extract_decision_patch`` return None (for tests)."""
        self._force_extraction_failure = enabled

    # -- LLMPort --------------------------------------------------------------------------------

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
        """Turn 1 without ``session_state``; with one, the turn the session stands at.

        A snapshot that also carries the answers' values (an ``answers`` attribute or key,
        mapping ids to values, or pairs — :class:`AnsweredSnapshot`) gets exactly the next turn:
        the answers are replayed and settled (``position``). Preflights' four fields
        alone give the position they describe (C9). Never raises for its input, as Preflights'
        port does not: an intention the engine refuses runs as the closest text it takes (the
        reason is logged), a snapshot it cannot place gives turn 1.
        """
        if self._override_questions is not None:
            return _override_response(self._override_questions)
        answers = _snapshot_answers(session_state) if session_state is not None else {}
        if session_state is None or answers:
            where = self.position(intention, answers)
            if debug_llm and repo_path:
                self.write_debug("generate_questions", where, repo_path)
            if where.turn is None:  # answers refused (C5): the turn they were given at stands
                log_position("generate_questions", where, level=logging.WARNING)
                where = self.position(intention, {})
            if where.intention.note:
                log_position("generate_questions", where, level=logging.WARNING)
            assert where.turn is not None  # no answers: nothing to refuse
            return to_preflights_response(where.turn)
        chosen = engine_intention(intention, self._flow)
        try:
            response = self._engine.generate_questions(chosen.text, session_state=session_state)
        except PreflightFsmError as exc:
            logger.warning("generate_questions: session_state not placed (%s): turn 1", exc)
            response = self.position(intention, {}).turn.to_llm_response()  # type: ignore[union-attr]
        return to_preflights_response(response)

    def extract_decision_patch(
        self,
        intention: str,
        answers: dict[str, str | tuple[str, ...]],
        heuristics_config: HeuristicsConfig,
        *,
        debug_llm: bool = False,
        repo_path: str | None = None,
    ) -> PfDecisionPatch | None:
        """The decision the answers lead to, or None while the session is not Done.

        Answers to ids the flow does not know are ignored. A patch outside
        ``heuristics_config.schema`` is None (compared as Preflights' core does: names
        case-insensitively, ``"*"`` allowing any field). Never raises: every None is logged with
        its reason (the engine's position or its structured feedback, C5).
        """
        if self._force_extraction_failure:
            return None
        if self._force_invalid_patch:
            return PfDecisionPatch(category="InvalidCategory", fields=(("Field", "Value"),))
        where = self.position(intention, answers)
        if debug_llm and repo_path:
            self.write_debug("extract_decision_patch", where, repo_path)
        if where.turn is None or where.turn.patch is None:
            log_position("extract_decision_patch: no patch", where)
            return None
        patch = self._engine.extract_decision_patch(
            where.intention.text, where.answers, heuristics_config
        )
        if patch is None:
            logger.info("extract_decision_patch: %s is outside the schema", where.turn.patch)
            return None
        return to_preflights_patch(patch)

    # -- beyond the port -------------------------------------------------------------------------

    def position(
        self,
        intention: str,
        answers: Mapping[str, Any],
        rounds: Sequence[Mapping[str, Any]] = (),
        answered_by: AnsweredBy | Provenance = "api",
        sources: Sequence[AnsweredBy | Provenance] = (),
        owner: object = None,
        *,
        one_step: bool = False,
    ) -> Standing:
        """Where a session (started by ``owner``) with these answers (and these accepted
        rounds, supplied by ``sources``) stands, its new answers supplied by ``answered_by``;
        never raises.

        See ``position.position``.
        """
        return position(
            intention, answers, self._flow, rounds, answered_by, sources, owner, one_step=one_step
        )

    def turn_at(
        self,
        intention: str,
        where: Standing,
        heuristics_config: HeuristicsConfig,
        asked: Sequence[str],
        answers: Mapping[str, Any],
    ) -> PfLLMResponse:
        """The turn ``FsmPreflightsApp`` shows at ``where``: the engine's own here; a guard
        (``preflight_fsm.llm``) asks its LLM first."""
        assert where.turn is not None
        return to_preflights_response(where.turn)

    def engine_answers(
        self, answers: Mapping[str, Any], shown: Iterable[PfQuestion] = ()
    ) -> dict[str, Any]:
        """``answers`` as the engine reads them: an option text shown in an LLM's words (in
        ``shown``, the questions a session stored; a guard also remembers its own) becomes the
        flow's option it names."""
        return as_flow_answers(answers, shown_names(shown, self._flow))

    def write_debug(self, operation: str, where: Standing, repo_path: str) -> None:
        """``debug_llm``: the engine's account where Preflights writes a real LLM's prompt.

        That is ``.preflights/debug/last_llm_prompt.md`` in the repository, the file Preflights'
        ``--debug-llm`` points to: what the engine ran on, where the session stands, and the
        structured feedback (C5) on answers it refused.
        """
        write_llm_debug(
            repo_path=repo_path,
            operation=operation,
            system_prompt=DEBUG_NOTE,
            user_message=json.dumps(where.describe(), indent=2, ensure_ascii=False),
            tools=[],
            model=self._flow.name,
            provider=self.provider,
        )


DEBUG_NOTE: Final = (
    "preflight-fsm sends no prompt: a deterministic state machine answered. Below, what it "
    "ran on and where the session stands, or its structured feedback (C5) on refused answers."
)
"""The debug file's first section: there is no prompt to show."""


@dataclasses.dataclass(frozen=True)
class AnsweredSnapshot(PfSessionSnapshot):
    """Preflights' SessionSnapshot plus the answers' values, so a port can give the next turn."""

    answers: tuple[tuple[str, str | tuple[str, ...]], ...] = ()


def _override_response(questions: tuple[PfQuestion, ...]) -> PfLLMResponse:
    """``set_questions``' answer, as Preflights' mock gives it but keeping C7.

    Preflights' mock lists every visible id and fixes progress at 0.5; here ``missing_info`` lists
    the visible required questions (no __other key) and progress is 1.0 when that is empty.
    """
    missing = tuple(
        dict.fromkeys(
            q.id.removesuffix(OTHER_SUFFIX)
            for q in questions
            if q.depends_on_question_id is None and not q.optional
        )
    )
    return PfLLMResponse(
        questions=questions,
        missing_info=missing,
        decision_hint="unsure",
        progress=0.5 if missing else 1.0,
    )


def _snapshot_answers(state: object) -> dict[str, Any]:
    """The answer values a session_state carries beyond Preflights' four fields, if any."""
    raw = state.get("answers") if isinstance(state, Mapping) else getattr(state, "answers", None)
    if isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    if isinstance(raw, list | tuple):
        return {
            str(pair[0]): pair[1]
            for pair in raw
            if isinstance(pair, list | tuple) and len(pair) == 2
        }
    return {}
