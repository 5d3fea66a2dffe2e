"""preflight-fsm: the Preflights clarification engine as an explicit finite-state machine.

The public names are imported on first use (PEP 562 ``__getattr__``), not with the package: every
command of the CLI imports ``preflight_fsm`` first, and ``preflight-fsm --help`` or ``start``
should not pay for the LLM adapter, the contract checks or the tables they never use (issue 14,
D160). ``from preflight_fsm import X`` works as before; so do ``dir()`` and ``__all__``. The
names are written out three times, for three readers (mypy's imports, the lazy map, ``__all__``),
and ``tests/test_exported_members.py`` holds them equal; nothing is read from this file at run
time, so an install that ships bytecode only works the same.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the public names as mypy reads them (`X as X`: re-exported)
    from preflight_fsm.adapter import MockLLMAdapter as MockLLMAdapter
    from preflight_fsm.answered_by import AnsweredBy as AnsweredBy
    from preflight_fsm.errors import InvalidAnswers as InvalidAnswers
    from preflight_fsm.errors import InvalidFlow as InvalidFlow
    from preflight_fsm.errors import InvalidIntention as InvalidIntention
    from preflight_fsm.errors import InvalidSeal as InvalidSeal
    from preflight_fsm.errors import InvalidSnapshot as InvalidSnapshot
    from preflight_fsm.errors import PreflightFsmError as PreflightFsmError
    from preflight_fsm.errors import SessionFinished as SessionFinished
    from preflight_fsm.errors import SnapshotFlowMismatch as SnapshotFlowMismatch
    from preflight_fsm.errors import SnapshotVersionError as SnapshotVersionError
    from preflight_fsm.flow import Flow as Flow
    from preflight_fsm.flow import default_flow as default_flow
    from preflight_fsm.flow import load_flow as load_flow
    from preflight_fsm.flow_registry import FlowRegistry as FlowRegistry
    from preflight_fsm.flow_registry import load_registry as load_registry
    from preflight_fsm.machine import ClarificationMachine as ClarificationMachine
    from preflight_fsm.machine import Migration as Migration
    from preflight_fsm.migration import Divergence as Divergence
    from preflight_fsm.patch import DecisionPatch as DecisionPatch
    from preflight_fsm.proof import PasskeyProof as PasskeyProof
    from preflight_fsm.snapshot import SealKeys as SealKeys
    from preflight_fsm.snapshot import SessionSnapshot as SessionSnapshot
    from preflight_fsm.snapshot import TraceStep as TraceStep
    from preflight_fsm.table import Edge as Edge
    from preflight_fsm.table import transition_table as transition_table
    from preflight_fsm.turn import LLMResponse as LLMResponse
    from preflight_fsm.turn import Question as Question
    from preflight_fsm.turn import Turn as Turn

__version__ = "0.2.0"
"""The one place the version is written: pyproject.toml's hatch reads it from here."""


_HOMES: dict[str, str] = {
    "AnsweredBy": "answered_by",
    "ClarificationMachine": "machine",
    "DecisionPatch": "patch",
    "Divergence": "migration",
    "Edge": "table",
    "Flow": "flow",
    "FlowRegistry": "flow_registry",
    "InvalidAnswers": "errors",
    "InvalidFlow": "errors",
    "InvalidIntention": "errors",
    "InvalidSeal": "errors",
    "InvalidSnapshot": "errors",
    "LLMResponse": "turn",
    "Migration": "machine",
    "MockLLMAdapter": "adapter",
    "PasskeyProof": "proof",
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
    "load_registry": "flow_registry",
    "transition_table": "table",
}
"""Public name -> its module under ``preflight_fsm``, imported on first use; the same names as
the imports above (which mypy reads) and ``__all__`` (``tests/test_exported_members.py``)."""

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
    "PasskeyProof",
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
