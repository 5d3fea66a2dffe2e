"""extras.py: a missing extra's hint is a command for the installation it runs in."""

from __future__ import annotations

import importlib.util
import shlex
import sys

import pytest

from preflight_fsm import extras


@pytest.mark.parametrize(
    ("prefix", "has_pip", "expected"),
    [
        ("/home/me/.local/share/pipx/venvs/preflight-fsm", True, "pipx inject preflight-fsm"),
        ("/home/me/.local/share/uv/tools/preflight-fsm", False, "uv pip install --python"),
        ("/opt/env-without-pip", False, "uv pip install --python"),
        ("/srv/venv", True, f"{shlex.quote(sys.executable)} -m pip install"),
    ],
    ids=["pipx-tool", "uv-tool", "no-pip", "any-environment"],
)
def test_outside_a_clone_the_hint_installs_the_extras_packages_where_it_runs(
    monkeypatch: pytest.MonkeyPatch, prefix: str, has_pip: bool, expected: str
) -> None:
    """Installed from a wheel or Git: the extra's pinned packages, by the installer of that
    environment (pipx, uv, or its own pip)."""
    monkeypatch.setattr(extras, "installed_clone", lambda: None)
    monkeypatch.setattr(sys, "prefix", prefix)
    found = object() if has_pip else None
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: found)
    hint = extras.install_hint("llm")
    assert hint.startswith(expected)
    assert ["'anthropic<2,>=1'", "'openai<4,>=3'"] == hint.split()[-2:]


def test_every_extra_of_the_package_has_a_hint() -> None:
    """Each extra a command may need names its own pinned packages."""
    assert ["llm", "mcp", "postgres", "preflights", "redis", "web"] == sorted(extras.EXTRAS)
    assert all(extras._requirements(extra) for extra in extras.EXTRAS)
