"""The guard's deadline ends the provider's call too, not only the caller's wait.

Preflights' real Anthropic and OpenAI adapters, on the official SDKs, against ``llm_server`` on
127.0.0.1 answering with a drip: a byte every 50 ms, each well within the SDK's per-read timeout,
never a whole reply. Each guarded call is replaced at the deadline; once it is, no thread of the
guard and no connection to the provider is left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import pytest

import installed

pytest.importorskip("preflights")

from preflights.core.types import default_v1_heuristics

from llm_server import LLMServer, Reply
from preflight_fsm.llm import GuardedLLMAdapter, Replacement
from preflight_fsm.llm.providers import provider_adapter

installed.require("anthropic", "openai")

CONFIG = default_v1_heuristics()
DEADLINE = 0.1  # each of the CALLS waits it out
CALLS = 10
# How long a thread or connection may take to end once its deadline passed: generous, for load.
GRACE = 10.0
logging.getLogger("preflights.adapters").setLevel(logging.ERROR)


def guard_threads() -> int:
    """The threads the guard started that are still running."""
    return sum(t.name == "preflight-fsm-llm" for t in threading.enumerate())


def eventually(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds within GRACE seconds."""
    end = time.monotonic() + GRACE
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_dripping_provider_leaves_no_thread_or_connection_after_the_deadline(
    provider: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten calls to a provider that drips are ten replacements, and nothing left running."""
    for name, value in provider_server.env(provider, DEADLINE).items():
        monkeypatch.setenv(name, value)
    provider_server.default = Reply("drip")
    seen: list[Replacement] = []
    guard = GuardedLLMAdapter(
        provider_adapter(provider, deadline=DEADLINE), deadline=DEADLINE, on_replacement=seen.append
    )
    assert eventually(lambda: guard_threads() == 0)
    for _ in range(CALLS):
        guard.generate_questions("Improve the checkout flow", CONFIG)
    assert ["deadline"] * CALLS == [r.reason for r in seen]
    assert eventually(lambda: (0, 0) == (guard_threads(), provider_server.dripping)), (
        f"{guard_threads()} threads and {provider_server.dripping} connections left"
    )
