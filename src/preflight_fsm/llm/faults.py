"""Seeded faults around any LLM adapter: what a real provider does on a bad day, on demand.

:class:`FaultyLLMAdapter` wraps an adapter with Preflights' ``LLMPort`` methods and, at each
call, draws one number from its own seeded generator: below the first rate it injects the first
fault, and so on in :data:`FAULTS` order; otherwise the wrapped adapter answers. The same seed
gives the same sequence of faults, call for call (``injected`` lists them).

The faults: ``timeout``, ``rate_limit``, ``provider_error``, ``invalid_response`` and
``credentials`` raise the exception Preflights' adapters raise for each; ``slow`` answers, but
only after ``delay`` seconds on the clock (a simulated clock just moves on); ``contract``
answers with the wrapped adapter's reply broken in one of the ways real LLMs break it (four
questions, a question the flow does not ask, no "Other (specify)", a progress of 1.0 while
something is missing; an invented field, a ``TBD`` value, another category).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any, Final

from preflights.adapters.llm_errors import (
    LLMCredentialsError,
    LLMInvalidResponseError,
    LLMProviderError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from preflights.application.types import LLMResponse as PfLLMResponse
from preflights.application.types import Question as PfQuestion
from preflights.core.types import DecisionPatch as PfDecisionPatch

from preflight_fsm.llm.guard import DeadlineClock, SystemClock

__all__ = ["FAULTS", "FaultyLLMAdapter"]

FAULTS: Final = (
    "timeout",
    "rate_limit",
    "provider_error",
    "invalid_response",
    "credentials",
    "slow",
    "contract",
)
"""Every fault, in the order rates are applied."""

_ERRORS: Final = {
    "timeout": (LLMTimeoutError, "injected: the provider timed out"),
    "rate_limit": (LLMRateLimitError, "injected: 429 rate limit exceeded"),
    "provider_error": (LLMProviderError, "injected: 500 internal server error"),
    "invalid_response": (LLMInvalidResponseError, "injected: no tool call in the reply"),
    "credentials": (LLMCredentialsError, "injected: invalid API key"),
}


class FaultyLLMAdapter:
    """``llm`` with seeded faults: ``rates`` maps faults of FAULTS to a probability each.

    >>> from preflights.adapters.mock_llm import MockLLMAdapter
    >>> faulty = FaultyLLMAdapter(MockLLMAdapter(), {"rate_limit": 0.5}, seed=7)
    >>> for _ in range(4):
    ...     try:
    ...         _ = faulty.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, None)
    ...     except Exception as exc:
    ...         print(type(exc).__name__)
    LLMRateLimitError
    LLMRateLimitError
    LLMRateLimitError
    >>> faulty.injected
    ['rate_limit', 'rate_limit', None, 'rate_limit']
    """

    def __init__(
        self,
        llm: Any,
        rates: Mapping[str, float],
        *,
        seed: int = 0,
        delay: float = 60.0,
        clock: DeadlineClock | None = None,
    ) -> None:
        unknown = sorted(set(rates) - set(FAULTS))
        if unknown:
            raise ValueError(f"unknown fault(s) {', '.join(unknown)}: use {', '.join(FAULTS)}")
        if any(not 0.0 <= r <= 1.0 for r in rates.values()) or sum(rates.values()) > 1.0:
            raise ValueError("each rate is in [0, 1] and together they are at most 1")
        self._llm = llm
        self._rates = [(name, float(rates.get(name, 0.0))) for name in FAULTS]
        self._random = random.Random(seed)
        self._delay = delay
        self._clock: DeadlineClock = clock or SystemClock()
        self.injected: list[str | None] = []
        """The fault injected at each call so far, None where the wrapped adapter answered."""
        self.provider: str = str(getattr(llm, "provider", "llm"))
        self._model: str | None = getattr(llm, "_model", None)

    def generate_questions(self, *args: Any, **kwargs: Any) -> PfLLMResponse:
        """The wrapped adapter's questions, or the fault drawn for this call."""
        fault = self._draw()
        reply = self._llm.generate_questions(*args, **kwargs)
        if fault == "contract":
            return self._broken_turn(reply)
        return reply  # type: ignore[no-any-return]

    def extract_decision_patch(self, *args: Any, **kwargs: Any) -> PfDecisionPatch | None:
        """The wrapped adapter's patch, or the fault drawn for this call."""
        fault = self._draw()
        reply = self._llm.extract_decision_patch(*args, **kwargs)
        if fault == "contract":
            return self._broken_patch(reply)
        return reply  # type: ignore[no-any-return]

    def _draw(self) -> str | None:
        """The fault for this call (raised or slept here), or None."""
        point = self._random.random()
        fault: str | None = None
        for name, rate in self._rates:
            if point < rate:
                fault = name
                break
            point -= rate
        self.injected.append(fault)
        if fault in _ERRORS:
            error, message = _ERRORS[fault]
            raise error(message)
        if fault == "slow":
            self._clock.sleep(self._delay)
        return fault

    def _broken_turn(self, reply: PfLLMResponse) -> PfLLMResponse:
        how = self._random.randrange(4)
        questions = tuple(reply.questions)
        if how == 0 or not questions:  # four questions, two of them fields
            extra = PfQuestion(
                id="auth_library",
                type="single_choice",
                question="Which library?",
                options=("next-auth", "passport", "Other (specify)"),
            )
            return dataclasses.replace(reply, questions=(*questions, extra, extra))
        first = questions[0]
        if how == 1:  # a question the flow does not ask here
            renamed = dataclasses.replace(first, id=f"{first.id}_details")
            return dataclasses.replace(reply, questions=(renamed, *questions[1:]))
        if how == 2 and first.options:  # "Other (specify)" dropped
            trimmed = dataclasses.replace(first, options=tuple(first.options[:-1]))
            return dataclasses.replace(reply, questions=(trimmed, *questions[1:]))
        return dataclasses.replace(reply, progress=1.0)  # done while something is missing

    def _broken_patch(self, reply: PfDecisionPatch | None) -> PfDecisionPatch:
        if reply is None:
            return PfDecisionPatch(category="Other", fields=(("Description", "TBD"),))
        how = self._random.randrange(3)
        if how == 0:  # an invented field
            return dataclasses.replace(reply, fields=(*reply.fields, ("Library", "next-auth")))
        if how == 1:  # a placeholder value
            name = reply.fields[0][0] if reply.fields else "Description"
            return dataclasses.replace(reply, fields=((name, "TBD"),))
        other = "Infra" if reply.category != "Infra" else "Backend"
        return dataclasses.replace(reply, category=other)
