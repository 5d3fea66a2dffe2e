"""Doctest setup for docs/*.md: the flow file of docs/flows.md, written where its examples read it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).parent


def flow_file_text() -> str:
    """The complete TOML example of docs/flows.md (its first toml block)."""
    found = re.search(r"```toml\n(.*?)```", (DOCS / "flows.md").read_text(), re.DOTALL)
    assert found, "docs/flows.md has no toml block"
    return found.group(1)


@pytest.fixture(autouse=True)
def _flow_file(doctest_namespace: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "mobile.toml"
    path.write_text(flow_file_text(), encoding="utf-8")
    doctest_namespace["flow_file"] = path
