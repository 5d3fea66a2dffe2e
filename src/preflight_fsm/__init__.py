"""preflight-fsm: the Preflights clarification engine as an explicit finite-state machine."""

from preflight_fsm.adapter import MockLLMAdapter
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
from preflight_fsm.patch import DecisionPatch
from preflight_fsm.snapshot import Divergence, SealKeys, SessionSnapshot, TraceStep
from preflight_fsm.table import Edge, transition_table
from preflight_fsm.turn import LLMResponse, Question, Turn

__all__ = [
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

__version__ = "0.1.0"
