"""errors.py: one base, and a code per condition that every front end reads."""

from __future__ import annotations

import importlib

from preflight_fsm.errors import PreflightFsmError


def _error_classes() -> list[type[PreflightFsmError]]:
    for module in ("mcp.tokens", "mcp.oidc", "diagrams.generate", "errors"):
        importlib.import_module(f"preflight_fsm.{module}")
    found: list[type[PreflightFsmError]] = []
    waiting = [PreflightFsmError]
    while waiting:
        kind = waiting.pop()
        found.append(kind)
        waiting.extend(kind.__subclasses__())
    return found


def test_every_error_class_carries_a_code_of_its_own() -> None:
    """One name per condition: no class inherits its parent's code, and no two share one."""
    classes = [kind for kind in _error_classes() if kind.__module__.startswith("preflight_fsm")]
    assert [] == [kind.__name__ for kind in classes if "code" not in vars(kind)]
    codes = [kind.code for kind in classes]
    assert sorted(set(codes)) == sorted(codes)
