"""The package as a user gets it: a wheel and an sdist that pass ``twine check``, installed as a
tool with ``uv tool install`` and ``pipx install`` (README, Install), each into a directory of its
own; the installed command runs, configures agents with its own path, and a missing extra's hint
installs that extra when run as printed. The distributions are the run's one build
(``built_package``), and every install takes its dependencies from the wheelhouse.
"""

from __future__ import annotations

import hashlib
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
    built = sorted(built_package.dist.glob("preflight_fsm-*"))  # uv writes a .gitignore beside
    kinds = sorted(p.suffix for p in built)
    checked = _run([str(BIN / "twine"), "check", "--strict", *map(str, built)])
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


def _installed_works(command: Path, env: dict[str, str]) -> None:
    """The tool's command runs, names itself in setup, and its missing-extra hint, run as
    printed, installs the MCP SDK where setup looks for it."""
    version = _run([str(command), "--version"], env)
    refused = _run([str(command), "setup", "--client", "cursor"], env)
    missing = _run([str(command), "mcp"], env)
    hint = missing.stderr.split("install it with: ", 1)[-1].strip()
    installed = _run(shlex.split(hint), env)
    cursor = json.loads(_run([str(command), "setup", "--client", "cursor"], env).stdout)
    assert version.stdout.startswith("preflight-fsm ")
    assert str(command) == cursor["mcpServers"]["preflight-fsm"]["command"]
    assert (2, True) == (missing.returncode, "the MCP SDK is not installed" in missing.stderr)
    assert (2, True) == (refused.returncode, hint in refused.stderr)
    assert 0 == installed.returncode, installed.stdout + installed.stderr


def test_uv_tool_installs_the_wheel(
    built_package: BuiltPackage, wheelhouse: Wheelhouse, tmp_path: Path
) -> None:
    """`uv tool install` of the wheel gives a working command; the mcp extra its hint installs
    serves (the run's one cold server start of an installed tool, D318)."""
    env = _tool_env(tmp_path, wheelhouse)
    done = _run([str(BIN / "uv"), "tool", "install", str(built_package.wheel)], env)
    assert 0 == done.returncode, done.stderr
    command = tmp_path / "bin" / "preflight-fsm"
    _installed_works(command, env)
    served = _run([str(command), "mcp", "--store", str(tmp_path / "s.sqlite3")], env)
    assert (0, "") == (served.returncode, served.stderr)


def test_pipx_installs_the_wheel(
    built_package: BuiltPackage, wheelhouse: Wheelhouse, tmp_path: Path
) -> None:
    """`pipx install` of the wheel gives a working command; the mcp extra its hint installs
    (`pipx inject`) leaves every requirement of the tool's environment met (`uv pip check`).
    The wheelhouse holds one version of each project, so that environment holds the files the
    uv test's server runs from: its start is not paid twice (D318)."""
    env = _tool_env(tmp_path, wheelhouse)
    done = _run([str(BIN / "pipx"), "install", str(built_package.wheel)], env)
    assert 0 == done.returncode, done.stderr
    _installed_works(tmp_path / "bin" / "preflight-fsm", env)
    python = tmp_path / "pipx" / "venvs" / "preflight-fsm" / "bin" / "python"
    checked = _run([str(BIN / "uv"), "pip", "check", "--python", str(python)], env)
    assert 0 == checked.returncode, checked.stdout + checked.stderr


def _git_blob_id(data: bytes) -> str:
    """The object id git gives a file holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_uv_tool_installs_from_a_git_url(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    """`uv tool install 'preflight-fsm[mcp] @ git+file://CLONE'` installs the committed tree (it
    builds it: the build backend and the dependencies come from the wheelhouse): every file of
    the installed package is the committed one, byte for byte, none missing, and `setup` finds
    the extra's MCP SDK. The server those files run is started by the uv test (D318)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    env = _tool_env(tmp_path, wheelhouse)
    url = f"preflight-fsm[mcp] @ git+file://{ROOT}"
    done = _run([str(BIN / "uv"), "tool", "install", url], env)
    assert 0 == done.returncode, done.stderr
    tools = tmp_path / "uv-tools" / "preflight-fsm"
    record = next(tools.glob("lib/python*/site-packages/preflight_fsm-*.dist-info/RECORD"))
    package = record.parent.parent / "preflight_fsm"
    listed = [line.split(",", 1)[0] for line in record.read_text().splitlines()]
    installed = {
        path.removeprefix("preflight_fsm/"): _git_blob_id((package.parent / path).read_bytes())
        for path in listed
        if path.startswith("preflight_fsm/")
    }
    tree = _run(["git", "ls-tree", "-r", "HEAD", "src/preflight_fsm/"]).stdout.splitlines()
    committed = {
        path.removeprefix("src/preflight_fsm/"): meta.split()[2]
        for meta, path in (line.split("\t", 1) for line in tree)
    }
    configured = _run([str(tmp_path / "bin" / "preflight-fsm"), "setup", "--client", "cursor"], env)
    assert committed == installed
    assert 0 == configured.returncode, configured.stderr


def test_in_a_clone_the_hint_installs_the_clone_with_the_extra(wheelhouse: Wheelhouse) -> None:
    """Run from a clone (editable), a missing extra's hint installs the clone with that extra:
    pip resolves it as printed (a dry run, from the wheelhouse)."""
    from preflight_fsm.extras import install_hint

    hint = shlex.split(install_hint("redis"))
    done = _run([*hint[:4], "--dry-run", *hint[4:]], {**os.environ, **wheelhouse.pip_env()})
    assert [sys.executable, "-m", "pip", "install", "-e", f"{ROOT}[redis]"] == hint
    assert 0 == done.returncode, done.stderr[-2000:]
