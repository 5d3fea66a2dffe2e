"""Every module of the package, the benchmarks and the tools stays at most 500 lines.

A module that grows past it owns more than one thing: split it by what each part owns. Generated
data (a module whose docstring says "generated, do not edit", with its generator named) is not
written by hand and is exempt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 500
MODULES = sorted(
    path.relative_to(ROOT)
    for folder in ("src", "benchmarks", "tools")
    for path in (ROOT / folder).rglob("*.py")
)


def _generated(text: str) -> bool:
    return "generated, do not edit" in text[:300]


@pytest.mark.parametrize("relative", MODULES, ids=str)
def test_module_is_at_most_500_lines(relative: Path) -> None:
    """Hand-written modules are at most LIMIT lines long."""
    text = (ROOT / relative).read_text(encoding="utf-8")
    lines = text.count("\n")
    assert _generated(text) or lines <= LIMIT, f"{relative} has {lines} lines"
