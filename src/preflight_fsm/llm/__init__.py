"""Real LLMs held to the contract: the guard, recorded exchanges, injected faults, conformance.

- :class:`GuardedLLMAdapter` (``guard``): Preflights' ``LLMPort`` around any adapter, judged by
  the engine (``judge``), falling back to it on a breaking reply, an error or a missed deadline;
- :func:`provider_adapter` (``providers``): Preflights' own adapter for a provider, as
  ``pf --llm-provider`` chooses it;
- :class:`RecordingLLMAdapter` and :class:`ReplayLLMAdapter` (``recording``): a provider's
  exchanges to JSONL, and back with no network;
- :class:`FaultyLLMAdapter` (``faults``): seeded faults around any adapter;
- ``conformance``: an adapter driven through every path of the flow, agreement per rule.

See ``docs/llm.md``. Needs the ``preflights`` extra (and ``llm`` for the providers' SDKs).
"""

from __future__ import annotations

from preflight_fsm.llm.guard import (
    DEADLINE_ENV,
    DEFAULT_DEADLINE,
    REASONS,
    DeadlineClock,
    GuardedLLMAdapter,
    Replacement,
    SystemClock,
    deadline_from,
)
from preflight_fsm.llm.judge import AGREEMENT_RULES, Disagreement, judge_patch, judge_turn

__all__ = [
    "AGREEMENT_RULES",
    "DEADLINE_ENV",
    "DEFAULT_DEADLINE",
    "REASONS",
    "DeadlineClock",
    "Disagreement",
    "GuardedLLMAdapter",
    "Replacement",
    "SystemClock",
    "deadline_from",
    "judge_patch",
    "judge_turn",
]
