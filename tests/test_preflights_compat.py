"""The Preflights internals the integration relies on: a new release fails here, by name."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

preflights = pytest.importorskip("preflights")

from preflight_fsm.integrations.preflights.compat import (  # noqa: E402
    RELIED_ON,
    SOURCE_DIGESTS,
    compat_problems,
)

ROOT = Path(preflights.__file__).parent


def stem(path: str) -> str:
    """``cli/main.py`` → ``cli.main``: how RELIED_ON names the module."""
    return path.removesuffix(".py").replace("/", ".")


def test_the_installed_preflights_has_everything_relied_on() -> None:
    """compat_problems finds nothing: version, internals, Session fields, pf's commands."""
    assert [] == compat_problems()


@pytest.mark.parametrize("path", sorted(SOURCE_DIGESTS), ids=sorted(SOURCE_DIGESTS))
def test_the_source_relied_on_is_unchanged(path: str) -> None:
    """Each Preflights source file relied on is byte for byte the pinned release's."""
    digest = hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
    assert SOURCE_DIGESTS[path] == digest, (
        f"preflights/{path} changed since 1.1.4: re-check what it is relied on for: "
        + "; ".join(f"{name} ({why})" for name, why in RELIED_ON if stem(path) in name)
    )
