"""mcp/errors.py: each error result carries one code, read off the error class, and a hint."""

from __future__ import annotations

import pytest

from preflight_fsm.errors import InvalidFlow, PreflightFsmError
from preflight_fsm.mcp.errors import failed, failure_of
from preflight_fsm.mcp.results import ENGINE_ERRORS, ERROR_CODES


@pytest.mark.parametrize("code", ERROR_CODES)
def test_every_code_has_a_recovery_hint(code: str) -> None:
    """A result never carries a code without saying what to send next."""
    assert failed(code, "refused").error.recovery_hint


@pytest.mark.parametrize("kind", ENGINE_ERRORS, ids=lambda kind: kind.__name__)
def test_an_engine_error_is_reported_under_its_own_code(kind: type[PreflightFsmError]) -> None:
    """The code is the error class's own: one name for the CLI, MCP results and the docs."""
    error = kind.__new__(kind)
    PreflightFsmError.__init__(error, "refused")
    error.__dict__.update(session_id="s1", feedback={})
    assert kind.code == failure_of(error).error.code


def test_an_error_without_a_result_code_is_an_internal_error() -> None:
    """A broken server flow is not the caller's to fix."""
    assert "internal_error" == failure_of(InvalidFlow("broken")).error.code
