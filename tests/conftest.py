"""Shared test settings."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
# `make fuzz`: the same properties, many more inputs (FUZZ_EXAMPLES each, 20,000 by default).
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

# Preflights' own suite runs in a venv of its own (`make preflights-suite`); its plugin routes
# Preflights' mock to the engine process-wide, so it is never imported (doctests) here.
collect_ignore = ["preflights_suite"]


@pytest.fixture(scope="module")
def llm_provider_server() -> Iterator[object]:
    """A local Anthropic/OpenAI-speaking server (``llm_server``) for a module's tests."""
    from llm_server import llm_server

    with llm_server() as server:
        yield server


@pytest.fixture
def provider_server(llm_provider_server: object) -> object:
    """The module's provider server, compliant again, its script and exchanges emptied."""
    from llm_server import LLMServer, Reply

    assert isinstance(llm_provider_server, LLMServer)
    llm_provider_server.script.clear()
    llm_provider_server.default = Reply()
    llm_provider_server.exchanges.clear()
    return llm_provider_server
