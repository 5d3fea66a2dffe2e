"""The package built once for the whole test run, shared by the README and packaging tests.

``python -m build`` makes the sdist and, from it, the wheel (the one build); ``pip wheel`` then
puts beside the wheel every wheel an install of it needs with the extras the tests install, and
the build backend an editable install needs: a wheelhouse. The tests install from it alone (no
index), so three virtualenvs, uv and pipx resolve a few local files instead of each fetching
and parsing the index pages of fifty projects. Under pytest-xdist the first worker to ask
builds it under a file lock in the run's shared temporary directory; the others wait and reuse.
The uv runs of every worker share one cache there too (uv locks it), so each wheel is unpacked
once per run.

pip installs without byte-compiling (the installed programs compile what they import, on first
import, as Python does): compiling every module of the MCP SDK's dependencies at install cost
the README's three paths about 5 of their 28 s of CPU, mostly for modules no command imports.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TIMEOUT = 900
# What the tests install beside the package: the extras of the README's paths and of the
# packaging tests' hints, and what `pip install -e` builds with (pyproject's build-system).
EXTRAS = "mcp,preflights,redis"
BUILD_BACKEND = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
# pip reads a `--no-*` option's variable as the option's value, not as the flag: "0" turns
# byte-compiling off ("1" would turn it on). The installed programs write their bytecode when
# they first import a module, whatever the caller's environment says.
_NO_COMPILE = {"PIP_NO_COMPILE": "0", "PYTHONDONTWRITEBYTECODE": ""}


@dataclass(frozen=True)
class BuiltPackage:
    """Where the one build is: ``dist`` holds the sdist and wheel, ``wheels`` the wheelhouse,
    ``uv_cache`` the run's one uv cache."""

    dist: Path
    wheels: Path
    uv_cache: Path

    @property
    def wheel(self) -> Path:
        return next(self.dist.glob("preflight_fsm-*.whl"))

    def pip_env(self) -> dict[str, str]:
        """pip installing from the wheelhouse alone, compiling nothing at install."""
        return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.wheels), **_NO_COMPILE}

    def uv_env(self) -> dict[str, str]:
        """uv (and pipx, which installs with uv) installing from the wheelhouse alone, into the
        run's cache (uv compiles nothing at install by default)."""
        return {
            "UV_NO_INDEX": "1",
            "UV_FIND_LINKS": str(self.wheels),
            "UV_CACHE_DIR": str(self.uv_cache),
            **_NO_COMPILE,
        }


def _run(argv: list[str]) -> None:
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert 0 == done.returncode, " ".join(argv) + "\n" + done.stdout[-3000:] + done.stderr[-3000:]


def build_once(shared: Path) -> BuiltPackage:
    """The build in ``shared`` (a directory every worker of the run sees), made once."""
    built = BuiltPackage(dist=shared / "dist", wheels=shared / "wheels", uv_cache=shared / "uv")
    with (shared / "built_package.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "built_package.done").exists():
            # Isolated as any build, its environments made by uv: 2 s of CPU where pip takes 3.8.
            build = [sys.executable, "-m", "build", "--installer", "uv", "--outdir"]
            _run([*build, str(built.dist), str(ROOT)])
            pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir"]
            _run([*pip_wheel, str(built.wheels), f"{built.wheel}[{EXTRAS}]", *BUILD_BACKEND])
            (shared / "built_package.done").touch()
    return built
