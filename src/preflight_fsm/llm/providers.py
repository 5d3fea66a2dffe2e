"""Preflights' own LLM adapters, chosen as its ``pf`` chooses them, shaped for the guard.

The choice is Preflights': ``--llm-provider`` (or ``$PREFLIGHTS_LLM_PROVIDER``), the model in
``$PREFLIGHTS_LLM_MODEL``, the key in ``$PREFLIGHTS_<PROVIDER>_API_KEY`` or the provider's own
variable (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``OPENROUTER_API_KEY``). Two settings
differ, because the guard owns the time: the adapter's own retries are off (Preflights retries a
timeout twice at 15 s each, and the SDK retries again underneath), and its timeout is the
guard's deadline plus a second, and its connection ends by the guard's deadline
(``preflight_fsm.llm.connection``): a provider that drips bytes leaves no call behind. Past the
deadline the engine has answered already; a retry would only spend the user's quota.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from preflights.adapters.llm_errors import LLMError
from preflights.adapters.llm_factory import CREDENTIAL_ENV_VARS
from preflights.application.llm_config import DEFAULT_MODELS, LLMConfig

__all__ = ["PROVIDERS", "ProviderUnavailable", "chosen_provider", "provider_adapter"]

PROVIDERS: Final = ("anthropic", "openai", "openrouter")
"""The providers Preflights 1.1.4 has adapters for."""

_SDK: Final = {"anthropic": "anthropic", "openai": "openai", "openrouter": "openai"}


class ProviderUnavailable(ValueError):
    """No adapter can be made for the provider asked; the message says what to set."""


def chosen_provider(option: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The provider ``--llm``/``--llm-provider`` chooses: the option, else the environment's.

    ``mock`` (Preflights' default) means the engine alone. Raises ProviderUnavailable for a
    name Preflights has no adapter for.
    """
    environ = os.environ if environ is None else environ
    name = (option or environ.get("PREFLIGHTS_LLM_PROVIDER") or "mock").strip().lower()
    if name != "mock" and name not in PROVIDERS:
        raise ProviderUnavailable(
            f"unknown LLM provider {name!r}: use one of {', '.join(PROVIDERS)} "
            "(--llm-provider or PREFLIGHTS_LLM_PROVIDER)"
        )
    return name


def provider_adapter(
    provider: str, *, deadline: float, environ: Mapping[str, str] | None = None
) -> Any:
    """Preflights' adapter for ``provider`` (one of PROVIDERS), retries off, timeout bounded.

    Raises ProviderUnavailable when no API key is set or the provider's SDK is not installed.
    """
    environ = os.environ if environ is None else environ
    names = CREDENTIAL_ENV_VARS[provider]
    key = next((environ[name] for name in names if environ.get(name)), None)
    if key is None:
        raise ProviderUnavailable(f"no API key for {provider}: set {' or '.join(names)}")
    config = LLMConfig(
        provider=provider,  # type: ignore[arg-type]
        model=environ.get("PREFLIGHTS_LLM_MODEL") or DEFAULT_MODELS[provider],  # type: ignore[index]
        api_key=key,
        timeout_seconds=deadline + 1.0,
        max_retries=0,
    )
    try:
        if provider == "anthropic":
            from preflights.adapters.anthropic_llm import AnthropicLLMAdapter

            adapter: Any = AnthropicLLMAdapter(config)
        elif provider == "openai":
            from preflights.adapters.openai_llm import OpenAILLMAdapter

            adapter = OpenAILLMAdapter(config)
        else:
            from preflights.adapters.openrouter_llm import OpenRouterLLMAdapter

            adapter = OpenRouterLLMAdapter(config)
    except LLMError:
        from preflight_fsm.extras import install_hint

        raise ProviderUnavailable(
            f"{provider} needs the {_SDK[provider]} SDK, not installed here; install it with: "
            + install_hint("llm")
        ) from None
    client = getattr(adapter, "_client", None)
    if client is not None and hasattr(client, "with_options"):
        from preflight_fsm.llm.connection import deadline_http_client

        # The SDK's own retries (2, with back-off) would outlast the deadline too, and its
        # timeout bounds each read only: the guard's deadline ends the whole call.
        adapter._client = client.with_options(max_retries=0, http_client=deadline_http_client())
    return adapter
