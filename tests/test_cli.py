"""The command line's entry (``cli/__init__.py``): each command imports only what it uses.

Issue 14's latency targets rest on it (``make bench``, group ``cli``; D160-D162): the installed
``preflight-fsm`` runs in a fresh interpreter under ``-X importtime``, which names every module
the command imported. Timings are benchmark figures, never asserted here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import warm_processes


def _command() -> str:
    beside = Path(sys.executable).parent / "preflight-fsm"
    found = str(beside) if beside.exists() else shutil.which("preflight-fsm")
    assert found, "the preflight-fsm command is not installed"
    return found


COMMAND = _command()
WARM = warm_processes.program()  # what starts the sessions the tests then answer

# No command below needs any of these: the other commands, the servers and integrations, the
# contract checks, the optional libraries.
NEVER = (
    "preflight_fsm.adapter",
    "preflight_fsm.contract",
    "preflight_fsm.diagrams",
    "preflight_fsm.integrations",
    "preflight_fsm.mcp",
    "preflight_fsm.store.redis",
    "preflight_fsm.cli.chat",
    "preflight_fsm.cli.check",
    "preflight_fsm.cli.diagram",
    "preflight_fsm.cli.mcp",
    "preflight_fsm.cli.pf",
    "mcp",
    "preflights",
    "graphviz",
    "redis",
    "rich",
    "hypothesis",
    "regex",  # only non-ASCII text needs it (D161)
)
# --help and --version print fixed text: no engine, no pydantic, no store.
ENGINE = (
    "pydantic",
    "transitions",
    "sqlite3",
    "preflight_fsm.flow",
    "preflight_fsm.machine",
    "preflight_fsm.store",
    "preflight_fsm.cli.sessions",
)


def _run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``preflight-fsm *args``; its result, and every module it imported (``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", COMMAND, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    return done, imported


def _imported(cwd: Path, *args: str) -> set[str]:
    """Every module ``preflight-fsm *args`` imports; the command must succeed."""
    done, imported = _run(cwd, *args)
    assert 0 == done.returncode, done.stderr[-2000:]
    return imported


def _within(imported: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(
        m for m in imported if m in packages or m.startswith(tuple(f"{p}." for p in packages))
    )


def _started(cwd: Path, store: str) -> str:
    """A session started in ``store`` (by a warm process: only the answer's imports are looked
    at, in a fresh interpreter)."""
    out = subprocess.run(
        [WARM, "start", "Add OAuth login", "--store", store, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    session_id: str = json.loads(out)["session_id"]
    return session_id


@pytest.mark.parametrize("option", ["--help", "--version"], ids=["help", "version"])
def test_help_and_version_import_neither_the_engine_nor_optional_libraries(
    tmp_path: Path, option: str
) -> None:
    """--help and --version load no engine module, pydantic, store or optional library."""
    imported = _imported(tmp_path, option)
    assert [] == _within(imported, (*NEVER, *ENGINE, "importlib.metadata"))


# The public models (C8) and what they are built on: start and answer on the default flow, a
# SQLite store and no passkey run on plain data and build none (issue 32, D308, D309).
MODELS = (
    "pydantic",
    "pydantic_core",
    "preflight_fsm.flow",
    "preflight_fsm.turn",
    "preflight_fsm.patch",
    "preflight_fsm.proof",
    "preflight_fsm.snapshot.model",
)


def test_start_imports_only_the_engine_and_its_store(tmp_path: Path) -> None:
    """start of an ASCII intention loads the engine and SQLite, nothing of NEVER, no model and
    no pydantic module."""
    imported = _imported(tmp_path, "start", "Add OAuth login", "--store", "s.sqlite3")
    assert ([], ["preflight_fsm.machine", "preflight_fsm.store.sqlite"], []) == (
        _within(imported, NEVER),
        _within(imported, ("preflight_fsm.machine", "preflight_fsm.store.sqlite")),
        _within(imported, MODELS),
    )


def test_answer_imports_only_the_engine_and_its_store(tmp_path: Path) -> None:
    """answer of ASCII answers, to the decision, loads the engine and SQLite, nothing of NEVER,
    no model and no pydantic module."""
    session_id = _started(tmp_path, "s.sqlite3")
    imported = _imported(tmp_path, "answer", session_id, "auth_strategy=1", "--store", "s.sqlite3")
    assert ([], ["preflight_fsm.machine", "preflight_fsm.store.sqlite"], []) == (
        _within(imported, NEVER),
        _within(imported, ("preflight_fsm.machine", "preflight_fsm.store.sqlite")),
        _within(imported, MODELS),
    )


def test_a_non_ascii_answer_loads_the_unicode_rules_and_is_checked(tmp_path: Path) -> None:
    """A non-ASCII answer loads regex (D161) and is still checked: a Cyrillic OAuth is refused."""
    session_id = _started(tmp_path, "s.sqlite3")
    done, imported = _run(
        tmp_path, "answer", session_id, "auth_strategy=\u041eAuth", "--store", "s.sqlite3", "--json"
    )
    assert (3, "invalid_answers", ["regex"]) == (
        done.returncode,
        json.loads(done.stdout)["error"],
        _within(imported, ("regex",))[:1],
    )


def test_setup_prints_a_configuration_without_importing_the_mcp_sdk(tmp_path: Path) -> None:
    """`setup` looks the SDK up instead of importing it (most of a second of CPU): it prints a
    configuration, and the server it configures imports the SDK when it starts."""
    imported = _imported(tmp_path, "setup", "--client", "cursor")
    assert [] == _within(imported, ("mcp",))


def test_pf_without_web_imports_neither_the_mcp_sdk_nor_the_answer_page(tmp_path: Path) -> None:
    """`pf start` without --web runs without the MCP SDK and the answer page it serves (a second
    of CPU to import, where the whole start takes half of one)."""
    pytest.importorskip("preflights")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, timeout=60)
    home = {**os.environ, "HOME": str(tmp_path)}
    done, imported = _run(tmp_path, "pf", "start", "--non-interactive", "TBD", env=home)
    page = ("mcp", "preflight_fsm.mcp.server", "preflight_fsm.integrations.preflights.page_loop")
    assert (0, []) == (done.returncode, _within(imported, page))
