"""preflight-fsm: the Preflights clarification engine as an explicit finite-state machine.

The public names are imported on first use (PEP 562 ``__getattr__``), not with the package: every
command of the CLI imports ``preflight_fsm`` first, and ``preflight-fsm --help`` or ``start``
should not pay for the LLM adapter, the contract checks or the tables they never use (issue 14,
D160). ``from preflight_fsm import X`` works as before; so do ``dir()`` and ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight_fsm.adapter import MockLLMAdapter
    from preflight_fsm.answered_by import AnsweredBy
    from preflight_fsm.errors import (
        InvalidAnswers,
        InvalidFlow,
        InvalidIntention,
        InvalidSeal,
        InvalidSnapshot,
        PreflightFsmError,
        SessionFinished,
        SnapshotFlowMismatch,
        SnapshotVersionError,
    )
    from preflight_fsm.flow import Flow, FlowRegistry, default_flow, load_flow, load_registry
    from preflight_fsm.machine import ClarificationMachine, Migration
    from preflight_fsm.migration import Divergence
    from preflight_fsm.patch import DecisionPatch
    from preflight_fsm.snapshot import SealKeys, SessionSnapshot, TraceStep
    from preflight_fsm.table import Edge, transition_table
    from preflight_fsm.turn import LLMResponse, Question, Turn

__all__ = [
    "AnsweredBy",
    "ClarificationMachine",
    "DecisionPatch",
    "Divergence",
    "Edge",
    "Flow",
    "FlowRegistry",
    "InvalidAnswers",
    "InvalidFlow",
    "InvalidIntention",
    "InvalidSeal",
    "InvalidSnapshot",
    "LLMResponse",
    "Migration",
    "MockLLMAdapter",
    "PreflightFsmError",
    "Question",
    "SealKeys",
    "SessionFinished",
    "SessionSnapshot",
    "SnapshotFlowMismatch",
    "SnapshotVersionError",
    "TraceStep",
    "Turn",
    "default_flow",
    "load_flow",
    "load_registry",
    "transition_table",
]

__version__ = "0.2.0"

_HOMES: dict[str, str] = {
    "AnsweredBy": "answered_by",
    "ClarificationMachine": "machine",
    "DecisionPatch": "patch",
    "Divergence": "migration",
    "Edge": "table",
    "Flow": "flow",
    "FlowRegistry": "flow",
    "InvalidAnswers": "errors",
    "InvalidFlow": "errors",
    "InvalidIntention": "errors",
    "InvalidSeal": "errors",
    "InvalidSnapshot": "errors",
    "LLMResponse": "turn",
    "Migration": "machine",
    "MockLLMAdapter": "adapter",
    "PreflightFsmError": "errors",
    "Question": "turn",
    "SealKeys": "snapshot",
    "SessionFinished": "errors",
    "SessionSnapshot": "snapshot",
    "SnapshotFlowMismatch": "errors",
    "SnapshotVersionError": "errors",
    "TraceStep": "snapshot",
    "Turn": "turn",
    "default_flow": "flow",
    "load_flow": "flow",
    "load_registry": "flow",
    "transition_table": "table",
}
"""Public name -> the module under ``preflight_fsm`` that defines it."""


if not TYPE_CHECKING:  # hidden from mypy, which types the names by the imports above; a
    # __getattr__ it saw would make any misspelt preflight_fsm.Name pass as Any.

    def __getattr__(name: str) -> Any:
        """Import a public name's module on first use, and keep the name here for the next."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
