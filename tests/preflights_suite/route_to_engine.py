"""Pytest plugin: Preflights' own test suite with its mock routed to preflight-fsm.

Loaded with ``-p route_to_engine`` before Preflights' tests import anything, it makes
``preflights.adapters.mock_llm.MockLLMAdapter`` the engine's ``FsmLLMAdapter`` (every app the
tests build gets it), and makes the app ``pf`` builds for itself (``_get_default_app``) the one
``preflight-fsm pf`` runs, unless a test configured a real LLM provider.
"""

from __future__ import annotations

import preflights.adapters.mock_llm as mock_llm
import preflights.application as application
from preflights.application.preflights_app import PreflightsApp

from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.integrations.preflights.command_line import build_pf_app

mock_llm.MockLLMAdapter = FsmLLMAdapter  # type: ignore[misc, assignment]  # the swap is the plugin's point
_stock_default_app = application._get_default_app


def _default_app() -> PreflightsApp:
    if application._default_app is None and application._configured_llm_provider is None:
        application._default_app = build_pf_app()
    return _stock_default_app()


application._get_default_app = _default_app
