"""Preflights (PyPI ``preflights``) on the engine, one module per concept.

- ``adapter``: the ``LLMPort`` drop-in (:class:`FsmLLMAdapter`) and the turn loop in Preflights'
  types (:class:`FsmSession`), re-exported here;
- ``application``: Preflights' application asking the whole hybrid flow;
- ``command_line``, ``hints``, ``prompts``, ``llm_options``: ``preflight-fsm pf``;
- ``agent_tools`` and ``forms``: ``mcp --preflights``, Preflights' MCP tools;
- ``sessions``, ``position``: sessions kept between processes, and where one stands;
- ``provenance``: who answered, written into the ADR and task;
- ``compat``: the Preflights internals relied on, checked.
"""

from preflight_fsm.integrations.preflights.adapter import (
    AnsweredSnapshot,
    FsmLLMAdapter,
    FsmSession,
    from_preflights_patch,
    from_preflights_question,
    from_preflights_response,
    to_preflights_patch,
    to_preflights_question,
    to_preflights_response,
    to_preflights_snapshot,
)

__all__ = [
    "AnsweredSnapshot",
    "FsmLLMAdapter",
    "FsmSession",
    "from_preflights_patch",
    "from_preflights_question",
    "from_preflights_response",
    "to_preflights_patch",
    "to_preflights_question",
    "to_preflights_response",
    "to_preflights_snapshot",
]
