"""preflight-fsm: the Preflights clarification engine as an explicit finite-state machine."""

from preflight_fsm.adapter import MockLLMAdapter
from preflight_fsm.errors import (
    InvalidAnswers,
    InvalidFlow,
    InvalidIntention,
    InvalidSnapshot,
    PreflightFsmError,
    SessionFinished,
    SnapshotFlowMismatch,
    SnapshotVersionError,
)
from preflight_fsm.flow import Flow, default_flow, load_flow
from preflight_fsm.machine import ClarificationMachine, Edge, transition_table
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.snapshot import SessionSnapshot, TraceStep
from preflight_fsm.turn import LLMResponse, Question, Turn

__all__ = [
    "ClarificationMachine",
    "DecisionPatch",
    "Edge",
    "Flow",
    "InvalidAnswers",
    "InvalidFlow",
    "InvalidIntention",
    "InvalidSnapshot",
    "LLMResponse",
    "MockLLMAdapter",
    "PreflightFsmError",
    "Question",
    "SessionFinished",
    "SessionSnapshot",
    "SnapshotFlowMismatch",
    "SnapshotVersionError",
    "TraceStep",
    "Turn",
    "default_flow",
    "load_flow",
    "transition_table",
]

__version__ = "0.1.0"
