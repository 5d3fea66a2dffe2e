"""The structural contract of an LLM response and a DecisionPatch, checked (spec §14, Rule 3).

Real LLM adapters must produce outputs structurally compatible with the reference. These checks
say where one is not, for any response: ours, Preflights' own mock, or a real LLM's, as our
pydantic models, Preflights' dataclasses or plain dicts parsed from JSON. Each finding is a
:class:`Violation` naming its rule (see :data:`RULES`), what is wrong, and the offending
question, key or field.

>>> check_llm_response({"questions": [], "missing_info": [], "decision_hint": "adr",
...                     "progress": 0.5})
[Violation(rule='C7-progress', message='is 0.5 but missing_info is empty: ...', subject='progress')]
"""

from __future__ import annotations

from preflight_fsm.contract.patch import check_decision_patch, flow_schema, within_schema
from preflight_fsm.contract.response import check_llm_response
from preflight_fsm.contract.rules import RULES, Violation

__all__ = [
    "RULES",
    "Violation",
    "check_decision_patch",
    "check_llm_response",
    "flow_schema",
    "within_schema",
]
