"""This installation: how to install an optional extra into it (a command that works as
printed), and the command that runs it (:func:`server_command`, for printed configurations).

preflight-fsm is not on PyPI, so ``pip install 'preflight-fsm[mcp]'`` fails. What works depends
on how this copy was installed: from a clone (editable: install the clone with the extra), as a
pipx or uv tool (inject the extra's packages into the tool's environment), or into any other
environment (install the packages with that environment's own Python). The packages come from
this installation's own metadata, so the hint names exactly what the extra pins.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Final

__all__ = ["EXTRAS", "install_hint", "installed_clone", "server_command"]

EXTRAS: Final = ("llm", "mcp", "postgres", "preflights", "redis", "web")
"""The optional extras a command may need."""

# What pyproject.toml pins, for a source tree run without being installed (no metadata).
_FALLBACK: Final = {
    "llm": ("anthropic>=1,<2", "openai>=3,<4"),
    "mcp": ("mcp>=2.3,<3", "joserfc>=1.6,<2"),
    "postgres": ("psycopg[binary]>=3.2,<4", "psycopg-pool>=3.2,<4"),
    "preflights": ("preflights==1.1.4",),
    "redis": ("redis>=5",),
    "web": ("webauthn>=3,<4",),
}
# "mcp<3,>=2.3; extra == 'mcp'", as importlib.metadata gives a wheel's Requires-Dist.
_EXTRA_MARKER = re.compile(
    r"""^(?P<requirement>[^;]+);\s*extra\s*==\s*["'](?P<extra>[\w-]+)["']$"""
)


def _requirements(extra: str) -> list[str]:
    try:
        declared = importlib.metadata.requires("preflight-fsm") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree not installed
        declared = []
    found = [
        m.group("requirement").strip()
        for m in map(_EXTRA_MARKER.match, declared)
        if m is not None and m.group("extra") == extra
    ]
    return found or list(_FALLBACK[extra])


def installed_clone() -> Path | None:
    """The clone this copy runs from (an editable install), if it does."""
    root = Path(__file__).resolve().parent.parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / ".git").exists() else None


def install_hint(extra: str) -> str:
    """A command that installs ``extra`` where this preflight-fsm runs."""
    python = shlex.quote(sys.executable)
    clone = installed_clone()
    if clone is not None:
        return f"{python} -m pip install -e {shlex.quote(f'{clone}[{extra}]')}"
    packages = " ".join(shlex.quote(r) for r in _requirements(extra))
    prefix = sys.prefix.replace(os.sep, "/")
    if "/pipx/venvs/" in prefix:
        return f"pipx inject preflight-fsm {packages}"
    if "/uv/tools/" in prefix:
        return f"uv pip install --python {python} {packages}"
    if importlib.util.find_spec("pip") is None:
        return f"uv pip install --python {python} {packages}"
    return f"{python} -m pip install {packages}"


def server_command() -> list[str]:
    """The absolute command that runs this installation's ``preflight-fsm``."""
    script = Path(sys.argv[0])
    if script.name == "preflight-fsm" and script.exists():
        return [os.path.abspath(script)]
    # `python -m preflight_fsm`, or a test calling the app: this interpreter runs the package.
    return [os.path.abspath(sys.executable), "-m", "preflight_fsm"]
