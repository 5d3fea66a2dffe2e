"""Skip a test module whose optional dependency is not installed, without importing it.

``pytest.importorskip`` imports the module to find out; every pytest-xdist worker collects the
whole suite, so a module-level ``importorskip("anthropic")`` made each worker import both LLM SDKs
(about 2 s of CPU together) whether or not it ran a test that calls them. ``require`` only looks
the modules up; the tests that use them import them when they run.
"""

from __future__ import annotations

import importlib.util

import pytest


def require(*modules: str) -> None:
    """Skip the calling test module unless every one of ``modules`` is installed."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: install the dev extra (pip install -e '.[dev]')",
            allow_module_level=True,
        )
