"""The README's three ways in work when pasted: each ``sh`` block under "Three ways in", run as
written by ``bash`` in a fresh clone of this repository (its committed tree), with a HOME of its
own. The only input is what a person types at pf's prompts. pip installs the dependencies from
the wheelhouse (``built_package``), not from the index: what is tested is the commands,
not the network. Every block starts with the same ``python3 -m venv .venv``: the first block runs
it, the others install into the ``.venv`` it made (run again there, it only re-runs ensurepip,
about 3 s of CPU each, D297)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from built_package import Wheelhouse

ROOT = Path(__file__).resolve().parent.parent
PF_ANSWERS = "3\n2\nsrc/\nok\n"  # Database, MySQL, the files, the acceptance criteria
VENV = "python3 -m venv .venv && "  # how every path starts


def three_paths() -> list[str]:
    """The sh blocks of the README's "Three ways in" section, in order."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Three ways in", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def test_the_readme_opens_with_three_paths() -> None:
    """Three paths, each a few commands."""
    assert [True, True, True] == [len(block.splitlines()) <= 4 for block in three_paths()]


def test_every_path_starts_by_making_the_same_virtualenv() -> None:
    """Each path begins with the same `python3 -m venv .venv`, so a person following any one of
    them gets the environment the paths test makes once."""
    assert [True, True, True] == [block.startswith(VENV) for block in three_paths()]


@pytest.mark.starts_first(seconds=18)  # the suite's longest: a clone, a venv, three installs
def test_each_path_works_as_pasted(tmp_path: Path, wheelhouse: Wheelhouse) -> None:
    """In a fresh clone each block exits 0 (the virtualenv made once, by the first): the agent's
    configuration names the clone's executable, pf writes the decision chosen, the library
    prints the patch."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "preflight-fsm"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    home = tmp_path / "home"
    home.mkdir()
    python = Path(sys.executable).resolve()  # this Python 3.11+, first on PATH as python3
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "python3").symlink_to(python)
    env = {
        **os.environ,
        **wheelhouse.pip_env(),
        "HOME": str(home),
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "TMPDIR": str(tmp_path),  # mktemp -d: the demo repository stays under the test
    }
    env.pop("VIRTUAL_ENV", None)
    first, *others = three_paths()
    runs = [
        subprocess.run(
            ["bash", "-e", "-c", block],
            cwd=clone,
            env=env,
            input=PF_ANSWERS if "pf start" in block else "",
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        for block in [first, *(block.removeprefix(VENV) for block in others)]
    ]
    agent, pf, library = runs
    for run in runs:
        assert 0 == run.returncode, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"{clone}/.venv/bin/preflight-fsm mcp --store {home}/.preflight-fsm" in agent.stdout
    assert "Preflight completed" in pf.stdout
    assert "Decision: Database - Type=MySQL" == pf.stdout.strip().splitlines()[-1]
    assert "category='Authentication'" in library.stdout


def test_make_run_installs_the_package_alone_showing_progress() -> None:
    """`make run`'s first install (as make would run it, printed with -n, nothing run) installs
    the package without the dev extra, with pip's progress shown, not behind --quiet."""
    planned = subprocess.run(
        ["make", "-n", "-B", "-C", str(ROOT), ".venv-run/.installed"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    installs = [line for line in planned.splitlines() if " pip install " in line]
    assert [
        ".venv-run/bin/python -m pip install --progress-bar on --disable-pip-version-check -e ."
    ] == installs


def test_the_readme_says_how_long_the_first_make_run_takes() -> None:
    """A person reads, before typing `make run`, how long the first one takes."""
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"The first `make run` takes about [^.]*\d+ s wall", readme), readme
