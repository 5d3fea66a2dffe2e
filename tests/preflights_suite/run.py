"""Run Preflights 1.1.4's own test suite with its mock routed to preflight-fsm.

``make preflights-suite`` runs this: it builds ``.venv-preflights-suite`` (Preflights 1.1.4, the
1.x ``mcp`` SDK its own server is written for, pytest, and this package, editable), downloads
Preflights' source distribution (its tests ship only there) into ``.preflights-suite/``, and runs
its tests with ``-p route_to_engine``, leaving out the tests listed in :data:`EXCLUDED`: each pins
a behaviour of Preflights' mock that breaks the spec (the reasons are in ``docs/preflights.md``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-preflights-suite"
SOURCES = ROOT / ".preflights-suite"
VERSION = "1.1.4"
PACKAGES = [
    f"preflights=={VERSION}",
    "mcp==1.25.0",
    "pytest>=8",
    "pytest-asyncio>=0.23",
    "hypothesis>=6.100",
]

EXCLUDED = {
    "tests/cli/test_golden_path_e2e.py::test_golden_path_with_user_provided_allowlist": (
        "pipes answers for the mock's second field question (auth_library) in the same round "
        "as the first (C3: one field per turn)"
    ),
    "tests/mcp/test_tools.py::TestRequireClarification::test_start_new_session": (
        "expects a question after 'Add OAuth authentication' although the intention answers "
        "the only field asked: only the mock's second field (auth_library) is left (C3)"
    ),
}


def main() -> int:
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *PACKAGES, "-e", str(ROOT)], check=True
        )
    tests = SOURCES / f"preflights-{VERSION}"
    if not (tests / "tests").is_dir():
        SOURCES.mkdir(exist_ok=True)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-binary",
                ":all:",
                "--no-deps",
                f"preflights=={VERSION}",
                "-d",
                str(SOURCES),
            ],
            check=True,
        )
        with tarfile.open(SOURCES / f"preflights-{VERSION}.tar.gz") as sdist:
            sdist.extractall(SOURCES, filter="data")
    deselect = [arg for node in EXCLUDED for arg in ("--deselect", node)]
    env = {"PYTHONPATH": str(Path(__file__).parent)}
    command = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "route_to_engine",
        "-p",
        "no:cacheprovider",
        *deselect,
        "tests",
    ]
    return subprocess.run(command, cwd=tests, env={**os.environ, **env}, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
