"""docs/flows.md: its complete flow file loads, keeps every key it documents, and the session it
shows runs as shown, through the installed command."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

import warm_processes
from preflight_fsm import default_flow, load_flow

DOC = Path(__file__).resolve().parent.parent / "docs" / "flows.md"


def _block(kind: str) -> str:
    found = re.search(rf"```{kind}\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert found, f"docs/flows.md has no {kind} block"
    return found.group(1)


def _flow_file(tmp_path: Path) -> Path:
    path = tmp_path / "mobile.toml"
    path.write_text(_block("toml"), encoding="utf-8")
    return path


def test_the_documented_flow_file_loads(tmp_path: Path) -> None:
    """The complete example is a valid flow: its categories, questions and limits as written."""
    flow = load_flow(_flow_file(tmp_path))
    assert ("mobile-team", ["Mobile", "Backend"]) == (
        flow.name,
        [c.name for c in flow.categories],
    )
    assert ("mobile_platform", ("iOS", "Android", "Both")) == (
        flow.categories[0].question.id,
        flow.categories[0].question.options,
    )


def test_the_documented_flow_file_names_every_top_level_key() -> None:
    """The example documents every top-level key a flow has, so none is left undocumented."""
    documented = set(tomllib.loads(_block("toml")))
    assert set(type(default_flow()).model_fields) == documented


def test_the_documented_chat_runs_as_shown(tmp_path: Path) -> None:
    """`preflight-fsm chat --flow mobile.toml ...` with the documented answer prints the
    documented transcript."""
    console = _block("console").splitlines()
    command = console[0].removeprefix("$ ")
    expected = console[
        1 : console.index(
            "$ preflight-fsm diagram --flow mobile.toml --format svg --out mobile.svg"
        )
    ]
    argv = [warm_processes.program()]
    argv += ["chat", "--flow", str(_flow_file(tmp_path)), "Ship the Android app"]
    assert command.startswith("preflight-fsm chat --flow mobile.toml")
    done = subprocess.run(
        argv, input="2\n", capture_output=True, text=True, check=False, timeout=30
    )
    assert (0, expected) == (done.returncode, done.stdout.splitlines())


def test_the_documented_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The python example of docs/flows.md runs as written beside the documented file."""
    _flow_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("python"), str(DOC), "exec"), {})
