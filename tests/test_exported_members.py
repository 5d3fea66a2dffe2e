"""The public API is small and pinned (C8, STYLE 3)."""

from __future__ import annotations

import preflight_fsm


def test_public_names_are_pinned() -> None:
    """C8: exactly these names are public, in a sorted __all__."""
    assert [
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
    ] == preflight_fsm.__all__
    assert sorted(preflight_fsm.__all__) == preflight_fsm.__all__
    for name in preflight_fsm.__all__:
        assert hasattr(preflight_fsm, name)


def test_every_error_derives_from_one_base() -> None:
    """C8: all errors derive from PreflightFsmError; input errors are also ValueErrors."""
    errors = [
        getattr(preflight_fsm, name)
        for name in preflight_fsm.__all__
        if isinstance(getattr(preflight_fsm, name), type)
        and issubclass(getattr(preflight_fsm, name), Exception)
    ]
    assert all(issubclass(e, preflight_fsm.PreflightFsmError) for e in errors)
    for name in ("InvalidAnswers", "InvalidIntention", "InvalidSnapshot", "InvalidFlow"):
        assert issubclass(getattr(preflight_fsm, name), ValueError)
