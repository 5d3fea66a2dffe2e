"""MockLLMAdapter: the spec §9 API on top of the machine, stateless and pure (C8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.flow import Flow, default_flow
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.snapshot import SessionSnapshot
from preflight_fsm.turn import LLMResponse

__all__ = ["MockLLMAdapter"]


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
        Preflights' four snapshot attributes. Raises InvalidIntention or InvalidSnapshot.
        """
        if session_state is None:
            return ClarificationMachine(intention, self._flow).turn.to_llm_response()
        data = _snapshot_data(session_state)
        if isinstance(data, dict) and "state" not in data and not data.get("missing_info"):
            # C9: a minimal snapshot with nothing missing is complete: nothing more to ask.
            return LLMResponse(questions=(), missing_info=(), decision_hint="unsure", progress=1.0)
        machine = ClarificationMachine.from_snapshot(data, self._flow)
        return machine.turn.to_llm_response()

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
        if patch is None or not _within_schema(patch, heuristics_config):
            return None
        return patch


def _snapshot_data(state: Any) -> SessionSnapshot | str | bytes | dict[str, Any]:
    if isinstance(state, SessionSnapshot | str | bytes | dict):
        return state
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {
            "intention": state.intention,  # type: ignore[attr-defined]
            "asked_questions": list(state.asked_questions),  # type: ignore[attr-defined]
            "answered_questions": list(state.answered_questions),  # type: ignore[attr-defined]
            "missing_info": list(state.missing_info),  # type: ignore[attr-defined]
        }
    return state  # type: ignore[no-any-return]


def _within_schema(patch: DecisionPatch, heuristics_config: Any) -> bool:
    """C8: a heuristics config only bounds the result, through its schema's categories.

    Read as Preflights' core validates patches: names compare case-insensitively and a field
    list holding ``"*"`` accepts any field (Preflights' catch-all ``Other``).
    """
    if heuristics_config is None:
        return True
    categories = {name.casefold(): fields for name, fields in heuristics_config.schema.categories}
    allowed = categories.get(patch.category.casefold())
    if allowed is None:
        return False
    if "*" in allowed:
        return True
    names = {field.casefold() for field in allowed}
    return all(name.casefold() in names for name, _ in patch.fields)
