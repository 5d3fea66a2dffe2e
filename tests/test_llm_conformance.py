"""``preflight-fsm conformance``: an adapter through every path of the flow, agreement reported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("preflights")

from preflights.adapters.mock_llm import MockLLMAdapter as PreflightsMock

from llm_server import Reply, llm_server
from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.llm.conformance import conform, flow_paths
from preflight_fsm.llm.judge import AGREEMENT_RULES
from preflight_fsm.table import transition_table
from preflights_e2e import PREFLIGHT_FSM, PROVIDER_VARIABLE, TIMEOUT


def run(
    *args: str, env: dict[str, str] | None = None, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """``preflight-fsm conformance ARGS``, no provider key inherited: in this process (the command
    line's own entry, through click's test runner), or with ``process`` as a process."""
    if process:
        return subprocess.run(
            [PREFLIGHT_FSM, "conformance", *args],
            env={
                **{k: v for k, v in os.environ.items() if not PROVIDER_VARIABLE.match(k)},
                **(env or {}),
            },
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    unset: dict[str, str | None] = {k: None for k in os.environ if PROVIDER_VARIABLE.match(k)}
    result = CliRunner().invoke(
        app, ["conformance", *args], env={**unset, **(env or {})}, catch_exceptions=False
    )
    return subprocess.CompletedProcess(
        ["preflight-fsm", "conformance", *args], result.exit_code, result.stdout, result.stderr
    )


def test_the_paths_take_every_row_of_the_table() -> None:
    """Each row (source → dest, the shortcut as start) is a transition of some path."""
    report = conform(FsmLLMAdapter())
    rows = {
        f"{'start' if e.trigger == 'start' else e.source} → {e.dest}" for e in transition_table()
    }
    assert rows <= set(report.by_transition())


def test_the_paths_include_the_shortcut_every_other_path_and_a_decline() -> None:
    """By name: a shortcut per category, an Other path per question, declines."""
    names = [p.name for p in flow_paths()]
    assert {"shortcut:Database", "other:db_type", "other:change_category:own", "declined"} <= set(
        names
    )


def test_the_engine_agrees_with_itself_on_every_check() -> None:
    """The reference at 100%, every rule counted."""
    report = conform(FsmLLMAdapter())
    assert 1.0 == report.agreement
    assert list(AGREEMENT_RULES) == list(report.by_rule())


def test_preflights_mock_disagrees_where_it_breaks_the_contract() -> None:
    """Four questions and invented fields: questions and patch agree nowhere."""
    rules = conform(PreflightsMock()).by_rule()
    assert (0, 0) == (rules["questions"][0], rules["patch"][0])


def test_a_compliant_provider_agrees_fully_over_http() -> None:
    """Preflights' OpenAI adapter against a compliant server: 100%, through the CLI."""
    pytest.importorskip("openai")
    with llm_server() as server:
        result = run("openai", "--json", "--min-agreement", "1", env=server.env("openai", 2))
    assert 0 == result.returncode, result.stderr
    assert 1.0 == json.loads(result.stdout)["agreement"]


def test_a_recorded_run_replays_with_the_same_report(tmp_path: Path) -> None:
    """--record while the server runs; the file alone gives the same agreement afterwards."""
    pytest.importorskip("anthropic")
    path = tmp_path / "run.jsonl"
    with llm_server() as server:
        server.default = Reply("break")
        live = run("anthropic", "--json", "--record", str(path), env=server.env("anthropic", 2))
    replayed = run(str(path), "--json")
    assert json.loads(live.stdout)["rules"] == json.loads(replayed.stdout)["rules"]


def test_below_min_agreement_exits_one() -> None:
    """For CI: Preflights' mock is far below 0.9 (the exit status of a real process)."""
    result = run("preflights-mock", "--min-agreement", "0.9", process=True)
    assert 1 == result.returncode
    assert "below --min-agreement 0.9" in result.stderr


def test_markdown_lists_agreement_per_rule_and_per_transition() -> None:
    """Two tables: rules, then transitions."""
    result = run("engine", "--markdown")
    assert "| rule | agreed | agreement |" in result.stdout
    assert "| NeedOther → Done |" in result.stdout


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nothing.jsonl", "no recording at nothing.jsonl"),
        ("gemini", "is no adapter"),
        ("no_such_module:make", "cannot load no_such_module:make"),
        ("json:loads", "json:loads() failed: TypeError"),
        ("anthropic", "no API key for anthropic"),
    ],
)
def test_an_unusable_adapter_exits_two_saying_what_to_send(target: str, message: str) -> None:
    """Each error names what was wrong and what is accepted."""
    result = run(target)
    assert 2 == result.returncode
    assert message in result.stderr


def test_a_factory_names_any_adapter() -> None:
    """module:factory: Preflights' own mock, by its class."""
    result = run("preflights.adapters.mock_llm:MockLLMAdapter", "--json")
    assert 0 == result.returncode, result.stderr
    assert json.loads(result.stdout)["agreement"] < 0.5
