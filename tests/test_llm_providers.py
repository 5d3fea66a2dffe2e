"""Preflights' real Anthropic and OpenAI adapters, on the official SDKs, under the guard.

The SDKs speak real HTTP to ``llm_server`` on 127.0.0.1 (their own base-URL variables point them
there): tool-use replies, 429, 500, 401, slow replies, text without a tool call, malformed tool
arguments. No mock of the adapters. Deadlines are half a second.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import installed

pytest.importorskip("preflights")

from preflights.core.types import default_v1_heuristics

from llm_server import WORDING, LLMServer, Reply
from preflight_fsm.llm import GuardedLLMAdapter, Replacement
from preflight_fsm.llm.providers import (
    ProviderUnavailable,
    chosen_provider,
    provider_adapter,
)

installed.require("anthropic", "openai")

CONFIG = default_v1_heuristics()
DEADLINE = 10.0  # generous: under load a compliant or failing reply still comes in time
SLOW_DEADLINE = 0.1  # a slow reply's: it never comes in time, so the test waits this long
# A slow reply's call outlives its test (the guard does not wait for it); Preflights' adapter would
# log its timeout later, into another test's output. The guard's replacements say it instead.
logging.getLogger("preflights.adapters").setLevel(logging.ERROR)
PROVIDERS = ("anthropic", "openai")


def guard_for(
    provider: str,
    provider_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    deadline: float = DEADLINE,
) -> tuple[GuardedLLMAdapter, list[Replacement]]:
    """Preflights' adapter for ``provider``, pointed at ``provider_server``, under the guard."""
    for name, value in provider_server.env(provider, deadline).items():
        monkeypatch.setenv(name, value)
    seen: list[Replacement] = []
    adapter = provider_adapter(provider, deadline=deadline)
    return GuardedLLMAdapter(adapter, deadline=deadline, on_replacement=seen.append), seen


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_compliant_provider_turn_reaches_the_user_in_its_wording(
    provider: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tool-use reply keeps the contract: shown as worded, companion completed."""
    guard, seen = guard_for(provider, provider_server, monkeypatch)
    turn = guard.generate_questions("Improve the checkout flow", CONFIG)
    assert ["change_category", "change_category__other"] == [q.id for q in turn.questions]
    assert turn.questions[0].question.startswith(WORDING), seen
    assert ([], [provider]) == (seen, [e.api for e in provider_server.exchanges])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_compliant_provider_patch_is_used(
    provider: str, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider's patch of exactly the answers is the decision."""
    guard, seen = guard_for(provider, provider_server, monkeypatch)
    answers: dict[str, str | tuple[str, ...]] = {"change_category": "Database", "db_type": "MySQL"}
    patch = guard.extract_decision_patch("Improve the checkout flow", answers, CONFIG)
    assert patch is not None
    assert ("Database", (("Type", "MySQL"),)) == (patch.category, patch.fields)
    assert [] == seen


# Each way a provider fails, by name: the reply the server sends, the reason the guard names.
FAILURES = {
    "429": (Reply("status", status=429), "rate_limit"),
    "500": (Reply("status", status=500), "provider_error"),
    "401": (Reply("status", status=401), "credentials"),
    "slow": (Reply(delay=2.0), "deadline"),
    "text": (Reply("text"), "invalid_response"),
    "malformed": (Reply("bad_arguments"), "invalid_response"),
    "breaking": (Reply("break"), "contract"),
}
# A patch call that is invalid or unauthorised is Preflights' None (asserted in test_llm_pf.py).
PATCH_FAILURES = ("429", "500", "slow", "breaking")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("reply", "reason"), FAILURES.values(), ids=FAILURES.keys())
def test_a_failing_provider_turn_is_the_engines_with_the_reason(
    provider: str,
    reply: Reply,
    reason: str,
    provider_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each way a provider fails on a turn: the engine's turn, one replacement naming why."""
    deadline = SLOW_DEADLINE if reply.delay else DEADLINE
    guard, seen = guard_for(provider, provider_server, monkeypatch, deadline)
    provider_server.default = reply
    turn = guard.generate_questions("Improve the checkout flow", CONFIG)
    assert "What type of change is this?" == turn.questions[0].question
    assert [reason] == [r.reason for r in seen]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("reply", "reason"), [FAILURES[name] for name in PATCH_FAILURES], ids=PATCH_FAILURES
)
def test_a_failing_provider_patch_is_the_engines(
    provider: str,
    reply: Reply,
    reason: str,
    provider_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Preflights raises or returns None here; under the guard the decision is the user's."""
    deadline = SLOW_DEADLINE if reply.delay else DEADLINE
    guard, seen = guard_for(provider, provider_server, monkeypatch, deadline)
    provider_server.default = reply
    answers: dict[str, str | tuple[str, ...]] = {"auth_strategy": "Magic Link"}
    patch = guard.extract_decision_patch("Add OAuth login", answers, CONFIG)
    assert patch is not None
    assert (("Strategy", "Magic Link"),) == patch.fields
    assert [reason] == [r.reason for r in seen]


def test_options_in_the_providers_words_name_the_flows(
    provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Use Database" is shown; the answer reaches the engine as Database."""
    guard, seen = guard_for("anthropic", provider_server, monkeypatch)
    provider_server.default = Reply(reword_options=True)
    turn = guard.generate_questions("Improve the checkout flow", CONFIG)
    assert "Use Database" in (turn.questions[0].options or ())
    assert {"change_category": "Database"} == guard.engine_answers(
        {"change_category": "Use Database"}
    )
    assert [] == seen


def test_a_provider_without_its_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key: the error names Preflights' variable and the provider's own."""
    with pytest.raises(ProviderUnavailable, match="PREFLIGHTS_OPENAI_API_KEY or OPENAI_API_KEY"):
        provider_adapter("openai", deadline=1, environ={})


def test_the_provider_comes_from_the_option_else_the_environment() -> None:
    """--llm-provider wins; PREFLIGHTS_LLM_PROVIDER otherwise; mock (the engine) by default."""
    environ = {"PREFLIGHTS_LLM_PROVIDER": "openai"}
    assert ("anthropic", "openai", "mock") == (
        chosen_provider("anthropic", environ),
        chosen_provider(None, environ),
        chosen_provider(None, {}),
    )


def test_an_unknown_provider_is_refused_with_the_known_ones() -> None:
    """The error lists the providers there are."""
    with pytest.raises(ProviderUnavailable, match="anthropic, openai, openrouter"):
        chosen_provider("gemini", {})


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_an_adapter_is_preflights_own_with_retries_off_on_the_deadline_client(
    provider: str,
) -> None:
    """Built without Preflights' __init__ (whose SDK client would load the CA bundle only to be
    replaced): the same class, configuration, SDK and client settings as Preflights' own, but
    for no retries and the HTTP client that keeps the deadline."""
    from preflight_fsm.llm.connection import _DeadlineBackend

    ours = provider_adapter(provider, deadline=2, environ={f"{provider.upper()}_API_KEY": "k"})
    assert f"preflights.adapters.{provider}_llm" == type(ours).__module__
    theirs = type(ours)(ours._config)  # Preflights' own construction
    mine = {name: value for name, value in vars(ours).items() if name != "_client"}
    assert {name: value for name, value in vars(theirs).items() if name != "_client"} == mine
    client, their_client = ours._client, theirs._client
    assert (their_client.api_key, their_client.base_url, their_client.timeout) == (
        client.api_key,
        client.base_url,
        client.timeout,
    )
    assert 0 == client.max_retries
    assert isinstance(client._client._transport._pool._network_backend, _DeadlineBackend)


def test_a_second_adapter_loads_no_ca_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's one TLS context serves every adapter: none loads the CA bundle again."""
    import httpcore2

    environ = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": "k"}
    provider_adapter("anthropic", deadline=2, environ=environ)
    loads: list[dict[str, Any]] = []
    test_thread = threading.current_thread()
    default_ssl_context = httpcore2.default_ssl_context

    def counted(**kwargs: Any) -> Any:
        if threading.current_thread() is test_thread:  # not an earlier test's call still running
            loads.append(kwargs)
        return default_ssl_context(**kwargs)

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    for provider in ("anthropic", "openai", "openrouter"):
        provider_adapter(provider, deadline=2, environ=environ)
    assert [] == loads
