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

import importlib
import os
from collections.abc import Mapping
from typing import Any, Final

from preflights.adapters.llm_factory import CREDENTIAL_ENV_VARS
from preflights.application.llm_config import DEFAULT_MODELS, LLMConfig

__all__ = ["PROVIDERS", "ProviderUnavailable", "chosen_provider", "provider_adapter"]

PROVIDERS: Final = ("anthropic", "openai", "openrouter")
"""The providers Preflights 1.1.4 has adapters for."""

_SDK: Final = {"anthropic": "anthropic", "openai": "openai", "openrouter": "openai"}
_CLIENTS: Final = {"anthropic": "Anthropic", "openai": "OpenAI"}
_ADAPTERS: Final = {
    "anthropic": ("preflights.adapters.anthropic_llm", "AnthropicLLMAdapter"),
    "openai": ("preflights.adapters.openai_llm", "OpenAILLMAdapter"),
    "openrouter": ("preflights.adapters.openrouter_llm", "OpenRouterLLMAdapter"),
}
"""Preflights' adapter of each provider; each keeps its SDK as ``_<sdk>`` and its client as
``_client`` (1.1.4, the release the ``preflights`` extra pins; held equal to Preflights' own
construction by tests/test_llm_providers.py)."""


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
        sdk = importlib.import_module(_SDK[provider])
    except ImportError:
        from preflight_fsm.extras import install_hint

        raise ProviderUnavailable(
            f"{provider} needs the {_SDK[provider]} SDK, not installed here; install it with: "
            + install_hint("llm")
        ) from None
    from preflights.adapters.llm_base import BaseLLMAdapter
    from preflights.adapters.openrouter_llm import OPENROUTER_BASE_URL

    from preflight_fsm.llm.connection import deadline_http_client

    module, name = _ADAPTERS[provider]
    adapter_class = getattr(importlib.import_module(module), name)
    # What Preflights' __init__ does, but its SDK client is built here once, retries off, on the
    # deadline's HTTP client (D320): Preflights' own would sit on the SDK's default HTTP client,
    # whose TLS context loads the CA bundle (about 30 ms of CPU), only to be replaced. The SDK's
    # retries (2, with back-off) would outlast the deadline, and its timeout bounds each read
    # only: the guard's deadline ends the whole call.
    adapter = adapter_class.__new__(adapter_class)
    BaseLLMAdapter.__init__(adapter, config)
    setattr(adapter, f"_{_SDK[provider]}", sdk)
    adapter._client = getattr(sdk, _CLIENTS[_SDK[provider]])(
        api_key=key,
        timeout=config.timeout_seconds,
        max_retries=0,
        http_client=deadline_http_client(),
        **({"base_url": OPENROUTER_BASE_URL} if provider == "openrouter" else {}),
    )
    return adapter
