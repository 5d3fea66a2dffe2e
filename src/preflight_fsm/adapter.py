"""MockLLMAdapter: the spec §9 API on top of the machine, stateless and pure (C8)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from preflight_fsm.contract import within_schema
from preflight_fsm.engine import engine_for
from preflight_fsm.errors import InvalidIntention, InvalidSnapshot, PreflightFsmError
from preflight_fsm.flow import Flow, default_flow
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.snapshot import SessionSnapshot, parse_snapshot
from preflight_fsm.states import ASKING_CATEGORY
from preflight_fsm.turn import LLMResponse, questions_of

__all__ = ["MockLLMAdapter"]

_log = logging.getLogger(__name__)


class MockLLMAdapter:
    """The deterministic reference of spec §9: same inputs, same outputs; no state kept.

    >>> adapter = MockLLMAdapter()
    >>> [q.id for q in adapter.generate_questions("Add OAuth login").questions]
    ['auth_strategy', 'auth_strategy__other']
    >>> adapter.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"})
    DecisionPatch(category='Authentication', fields=(('Strategy', 'OAuth'),), references=())
    """

    __slots__ = ("_flow",)

    def __init__(self, flow: Flow | None = None) -> None:
        self._flow = flow or default_flow()

    def generate_questions(
        self,
        intention: str,
        heuristics_config: Any = None,
        context: Any = None,
        session_state: Any = None,
        **_: Any,
    ) -> LLMResponse:
        """Turn 1 without ``session_state``; with one, the turn that snapshot stands at.

        ``session_state`` may be a SessionSnapshot, its JSON or dict, or any object with
        Preflights' four snapshot attributes. Never raises for its input, as an LLM port must
        not (D41): an intention it cannot take is asked its category; a session state it
        refuses is logged and answered with turn 1 of the intention.
        """
        if session_state is not None:
            data = _snapshot_data(session_state)
            try:
                return ClarificationMachine.from_snapshot(data, self._flow).turn.to_llm_response()
            except InvalidSnapshot as exc:
                if _complete(data, self._flow):
                    # C9: a four-field snapshot with nothing missing is complete: nothing to ask.
                    return LLMResponse(
                        questions=(), missing_info=(), decision_hint="unsure", progress=1.0
                    )
                _log.warning("session_state refused, answering turn 1 instead: %s", exc)
        try:
            return ClarificationMachine(intention, self._flow).turn.to_llm_response()
        except InvalidIntention as exc:
            _log.warning("intention refused, asking its category: %s", exc)
            engine = engine_for(self._flow)
            return LLMResponse(
                questions=questions_of(engine.questions(ASKING_CATEGORY)),
                missing_info=(engine.category_qid,),
                decision_hint=self._flow.other_category.hint,
                progress=0.0,
            )

    def extract_decision_patch(
        self,
        intention: str,
        answers: Mapping[str, Any],
        heuristics_config: Any = None,
        **_: Any,
    ) -> DecisionPatch | None:
        """The patch the answers lead to on a fresh machine, or None; never raises for input.

        Answers to ids the flow does not know are ignored (Preflights passes every answer it
        holds). With ``heuristics_config``, a patch outside its schema becomes None.
        """
        try:
            machine = ClarificationMachine(intention, self._flow)
            known = self._flow.answer_ids
            turn = machine.step({k: v for k, v in dict(answers).items() if k in known})
        except (PreflightFsmError, TypeError, ValueError):
            return None
        patch = turn.patch
        if patch is None or heuristics_config is None:
            return patch
        try:
            within = within_schema(patch, heuristics_config)
        except (AttributeError, LookupError, TypeError, ValueError) as exc:
            # Not a schema this adapter can read: no patch is known to be within it.
            _log.warning("heuristics_config unreadable (%s), no patch returned", exc)
            return None
        return patch if within else None


_FOUR_FIELDS = ("intention", "asked_questions", "answered_questions", "missing_info")


def _snapshot_data(state: Any) -> SessionSnapshot | str | bytes | dict[str, Any]:
    """``state`` as from_snapshot takes it: an object with Preflights' four attributes becomes
    their dict (a value of the wrong type stays as it is, for validation to refuse by name)."""
    if isinstance(state, SessionSnapshot | str | bytes | dict):
        return state
    if all(hasattr(state, name) for name in _FOUR_FIELDS):
        return {
            name: list(value) if isinstance(value, list | tuple) else value
            for name in _FOUR_FIELDS
            for value in (getattr(state, name),)
        }
    return state  # type: ignore[no-any-return]  # refused by from_snapshot, naming the type


def _complete(data: SessionSnapshot | str | bytes | dict[str, Any], flow: Flow) -> bool:
    """True for a valid four-field snapshot with nothing missing: a finished session (C9)."""
    try:
        snapshot = parse_snapshot(data, FlowRegistry(flow))
    except InvalidSnapshot:
        return False
    return snapshot.is_minimal and not snapshot.missing_info
