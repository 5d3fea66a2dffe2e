"""preflight-fsm: the Preflights clarification engine as an explicit finite-state machine.

The public names are imported on first use (PEP 562 ``__getattr__``), not with the package: every
command of the CLI imports ``preflight_fsm`` first, and ``preflight-fsm --help`` or ``start``
should not pay for the LLM adapter, the contract checks or the tables they never use (issue 14,
D160). ``from preflight_fsm import X`` works as before; so do ``dir()`` and ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the one list of public names (`X as X`: re-exported), read below
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
    from preflight_fsm.flow import FlowRegistry as FlowRegistry
    from preflight_fsm.flow import default_flow as default_flow
    from preflight_fsm.flow import load_flow as load_flow
    from preflight_fsm.flow import load_registry as load_registry
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


def _homes() -> dict[str, str]:
    """Public name -> its module under ``preflight_fsm``, read from the imports above.

    The names are written once, as the imports mypy reads; the interpreter skips those, so this
    reads them from the source (as lazy_loader reads a stub) instead of a second list.
    """
    with open(__file__, encoding="utf-8") as file:
        block = file.read().split("if TYPE_CHECKING:", 1)[1].split("\n\n", 1)[0]
    homes: dict[str, str] = {}
    for line in block.splitlines():
        words = line.split()  # from preflight_fsm.<module> import <Name> as <Name>
        if words[:1] == ["from"]:
            homes[words[3]] = words[1].removeprefix("preflight_fsm.")
    return homes


_HOMES = _homes()
__all__ = sorted(_HOMES)

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
