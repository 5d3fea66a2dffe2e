"""The package as a user gets it: a wheel and an sdist that pass ``twine check``, installed as a
tool with ``uv tool install`` and ``pipx install`` (README, Install), each into a directory of its
own; the installed command runs, configures agents with its own path, and a missing extra's hint
installs that extra when run as printed. The distributions are the run's one build
(``built_package``), and every install takes its dependencies from the wheelhouse.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from built_package import BuiltPackage, Wheelhouse

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TIMEOUT = 600


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,  # a server reads it: it ends at once
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
        cwd=ROOT,
    )


def test_the_wheel_and_sdist_pass_twine_check(built_package: BuiltPackage) -> None:
    """Both distributions are built and their metadata renders as PyPI shows it."""
    dist = built_package.dist
    kinds = sorted(p.suffix for p in dist.iterdir())
    checked = _run([str(BIN / "twine"), "check", "--strict", *map(str, dist.iterdir())])
    assert [".gz", ".whl"] == kinds
    assert 0 == checked.returncode, checked.stdout + checked.stderr


def _tool_env(tmp_path: Path, wheelhouse: Wheelhouse) -> dict[str, str]:
    """uv and pipx in directories of the test's own, installing from the wheelhouse."""
    return {
        **os.environ,
        **wheelhouse.pip_env(),
        **wheelhouse.uv_env(),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "HOME": str(tmp_path),
        # uv and pipx on PATH, as for whoever installed a tool with them.
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def _installed_works(command: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The tool's command runs, names itself in setup, and its missing-extra hint works."""
    version = _run([str(command), "--version"], env)
    refused = _run([str(command), "setup", "--client", "cursor"], env)
    missing = _run([str(command), "mcp"], env)
    hint = missing.stderr.split("install it with: ", 1)[-1].strip()
    installed = _run(shlex.split(hint), env)
    cursor = json.loads(_run([str(command), "setup", "--client", "cursor"], env).stdout)
    served = _run([str(command), "mcp", "--store", str(tmp_path / "s.sqlite3")], env)
    assert version.stdout.startswith("preflight-fsm ")
    assert str(command) == cursor["mcpServers"]["preflight-fsm"]["command"]
    assert (2, True) == (missing.returncode, "the MCP SDK is not installed" in missing.stderr)
    assert (2, True) == (refused.returncode, hint in refused.stderr)
    assert 0 == installed.returncode, installed.stdout + installed.stderr
    assert (0, "") == (served.returncode, served.stderr)


def test_uv_tool_installs_the_wheel(
    built_package: BuiltPackage, wheelhouse: Wheelhouse, tmp_path: Path
) -> None:
    """`uv tool install` of the wheel gives a working command (then the mcp extra via its hint)."""
    env = _tool_env(tmp_path, wheelhouse)
    done = _run([str(BIN / "uv"), "tool", "install", str(built_package.wheel)], env)
    assert 0 == done.returncode, done.stderr
    _installed_works(tmp_path / "bin" / "preflight-fsm", env, tmp_path)


def test_pipx_installs_the_wheel(
    built_package: BuiltPackage, wheelhouse: Wheelhouse, tmp_path: Path
) -> None:
    """`pipx install` of the wheel gives a working command (then the mcp extra via its hint)."""
    env = _tool_env(tmp_path, wheelhouse)
    done = _run([str(BIN / "pipx"), "install", str(built_package.wheel)], env)
    assert 0 == done.returncode, done.stderr
    _installed_works(tmp_path / "bin" / "preflight-fsm", env, tmp_path)


def test_uv_tool_installs_from_a_git_url(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    """`uv tool install 'preflight-fsm[mcp] @ git+file://CLONE'` installs the committed tree (it
    builds it: the build backend and the dependencies come from the wheelhouse)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    env = _tool_env(tmp_path, wheelhouse)
    url = f"preflight-fsm[mcp] @ git+file://{ROOT}"
    done = _run([str(BIN / "uv"), "tool", "install", url], env)
    command = tmp_path / "bin" / "preflight-fsm"
    served = _run([str(command), "mcp", "--store", str(tmp_path / "s.sqlite3")], env)
    assert 0 == done.returncode, done.stderr
    assert (0, "") == (served.returncode, served.stderr)


def test_in_a_clone_the_hint_installs_the_clone_with_the_extra(wheelhouse: Wheelhouse) -> None:
    """Run from a clone (editable), a missing extra's hint installs the clone with that extra:
    pip resolves it as printed (a dry run, from the wheelhouse)."""
    from preflight_fsm.extras import install_hint

    hint = shlex.split(install_hint("redis"))
    done = _run([*hint[:4], "--dry-run", *hint[4:]], {**os.environ, **wheelhouse.pip_env()})
    assert [sys.executable, "-m", "pip", "install", "-e", f"{ROOT}[redis]"] == hint
    assert 0 == done.returncode, done.stderr[-2000:]
