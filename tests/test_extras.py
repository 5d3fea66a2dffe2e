"""extras.py: a missing extra's hint is a command for the installation it runs in."""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
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


# What the `preflights` extra alone installs cannot import the other extras' packages: `pf` runs
# with it alone (README, `make preflights-suite`); twice a module on its path imported py_webauthn.
_WITHOUT_OTHER_EXTRAS = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"webauthn", "mcp", "redis", "psycopg", "psycopg_pool"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
from preflight_fsm.integrations.preflights.command_line import build_pf_app
build_pf_app()
"""


def test_pf_imports_with_the_preflights_extra_alone() -> None:
    """pf's command line loads where py_webauthn, the MCP SDK and the store clients are absent."""
    pytest.importorskip("preflights")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_OTHER_EXTRAS], capture_output=True, text=True, timeout=60
    )
    assert 0 == done.returncode, done.stderr
