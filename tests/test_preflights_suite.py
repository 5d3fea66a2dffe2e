"""The runner of Preflights' own suite (make preflights-suite): what it leaves out is documented."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def excluded() -> dict[str, str]:
    """The runner's EXCLUDED table, read without running anything."""
    runner = ROOT / "tests" / "preflights_suite" / "run.py"
    spec = importlib.util.spec_from_file_location("suite_run", runner)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: dict[str, str] = module.EXCLUDED
    return table


@pytest.mark.parametrize("node", sorted(excluded()), ids=sorted(excluded()))
def test_each_test_left_out_is_listed_in_the_docs(node: str) -> None:
    """docs/preflights.md names every test left out of Preflights' suite (with its reason)."""
    assert f"`{node}`" in (ROOT / "docs" / "preflights.md").read_text()
