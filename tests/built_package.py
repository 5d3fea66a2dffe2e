"""The wheelhouse every install of the README and packaging tests takes its dependencies from,
and the package built once for the whole test run.

The wheelhouse is a directory of wheels: every wheel an install of the package with the extras
the tests install needs, and the build backend an editable install needs. The tests install from
it alone (no index), so pip, uv and pipx resolve a few local files instead of each fetching and
parsing the index pages of fifty projects. It depends only on what ``pyproject.toml`` requires,
as the development virtualenv does, so it is kept in that virtualenv (``.venv/wheelhouse/``,
named by a digest of the requirements, this Python and platform), made when make makes the
virtualenv (``python tests/built_package.py``) or by the first test run that finds it missing:
`pip wheel` resolving against the index costs about 4 s of CPU, which a run no longer pays
(D300). Under pytest-xdist the first worker to ask makes what is missing under a file lock; the
others wait and reuse.

The build (``uv build``, as ``make dist``: the sdist and, from it, the wheel) is made once per
run, in the run's shared temporary directory: the packaging tests install it. The uv runs of
every worker share one cache there too (uv locks it), so each wheel is unpacked once per run.

pip installs without byte-compiling (the installed programs compile what they import, on first
import, as Python does): compiling every module of the MCP SDK's dependencies at install cost
the README's three paths about 5 of their 28 s of CPU, mostly for modules no command imports.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TIMEOUT = 900
# What the tests install beside the package: the extras of the README's paths and of the
# packaging tests' hints, and what `pip install -e` builds with (pyproject's build-system).
EXTRAS = ("mcp", "preflights", "redis")
# pip reads a `--no-*` option's variable as the option's value, not as the flag: "0" turns
# byte-compiling off ("1" would turn it on). The installed programs write their bytecode when
# they first import a module, whatever the caller's environment says.
_NO_COMPILE = {"PIP_NO_COMPILE": "0", "PYTHONDONTWRITEBYTECODE": ""}
# Before installing, pip parses the requirements of every distribution in the environment (with
# pyparsing in the pip a virtualenv gets) to warn of conflicts with what is already there, about
# 0.45 s of CPU an install and as much again in its build environment's pip: "0" turns the
# warning off. It never changes what is installed or an exit status, and the wheelhouse holds one
# version of each project, so no install from it conflicts (D322).
_NO_CONFLICT_WARNING = {"PIP_NO_WARN_CONFLICTS": "0"}


def requirements() -> list[str]:
    """Every requirement the wheelhouse holds wheels for: the package's dependencies, those of
    ``EXTRAS``, and the build backend (``pyproject.toml``'s build-system)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    extras = [r for extra in EXTRAS for r in project["optional-dependencies"][extra]]
    return sorted({*project["dependencies"], *extras, *pyproject["build-system"]["requires"]})


@dataclass(frozen=True)
class Wheelhouse:
    """Where installs take their dependencies from: ``wheels``; ``uv_cache``, the run's one uv
    cache."""

    wheels: Path
    uv_cache: Path

    def pip_env(self) -> dict[str, str]:
        """pip installing from the wheelhouse alone, compiling nothing at install, not looking
        for conflicts with what is installed."""
        return {
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(self.wheels),
            **_NO_COMPILE,
            **_NO_CONFLICT_WARNING,
        }

    def uv_env(self) -> dict[str, str]:
        """uv (and pipx, which installs with uv) installing from the wheelhouse alone, into the
        run's cache (uv compiles nothing at install by default)."""
        return {
            "UV_NO_INDEX": "1",
            "UV_FIND_LINKS": str(self.wheels),
            "UV_CACHE_DIR": str(self.uv_cache),
            **_NO_COMPILE,
        }


@dataclass(frozen=True)
class BuiltPackage:
    """The run's one build: ``dist`` holds the sdist and the wheel."""

    dist: Path

    @property
    def wheel(self) -> Path:
        return next(self.dist.glob("preflight_fsm-*.whl"))


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})},
    )
    assert 0 == done.returncode, " ".join(argv) + "\n" + done.stdout[-3000:] + done.stderr[-3000:]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def kept_wheels() -> Path | None:
    """Where this virtualenv keeps the wheelhouse of today's requirements (None outside a
    virtualenv: then each run makes its own)."""
    if sys.prefix == sys.base_prefix:
        return None
    digested = "\n".join([*requirements(), sys.version, sysconfig.get_platform()])
    return Path(sys.prefix) / "wheelhouse" / hashlib.sha256(digested.encode()).hexdigest()[:16]


def make_wheels(wheels: Path) -> None:
    """Put in ``wheels``, if it is not there yet, a wheel of every requirement and of what they
    require (``pip wheel``), under a lock; a wheelhouse of other requirements beside it goes."""
    with _locked(wheels.with_name(".lock")):
        if wheels.is_dir():
            return
        partial = wheels.with_name(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(partial)]
        _run([*pip_wheel, *requirements()])
        for older in wheels.parent.iterdir():
            if older.is_dir() and older != partial:
                shutil.rmtree(older)
        partial.rename(wheels)  # complete or absent: a run stopped half-way leaves only .partial


def wheelhouse_once(shared: Path) -> Wheelhouse:
    """The wheelhouse (this virtualenv's, else one in ``shared``, a directory every worker of
    the run sees), made if missing, with the run's uv cache."""
    wheels = kept_wheels() or shared / "wheelhouse" / "wheels"
    make_wheels(wheels)
    return Wheelhouse(wheels=wheels, uv_cache=shared / "uv")


def build_once(shared: Path, wheelhouse: Wheelhouse) -> BuiltPackage:
    """The build in ``shared``, made once per run."""
    built = BuiltPackage(dist=shared / "dist")
    with _locked(shared / "built_package.lock"):
        if not (shared / "built_package.done").exists():
            # As `make dist` builds (`uv build`), its environments made from the wheelhouse.
            build = [str(BIN / "uv"), "build", "--quiet", "--out-dir", str(built.dist), str(ROOT)]
            _run(build, wheelhouse.uv_env())
            (shared / "built_package.done").touch()
    return built


if __name__ == "__main__":  # make, making the virtualenv: its wheelhouse too
    kept = kept_wheels()
    assert kept is not None, "run with the virtualenv's python"
    make_wheels(kept)
