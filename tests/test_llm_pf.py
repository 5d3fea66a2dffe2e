"""End to end: ``preflight-fsm pf start --llm-provider …`` against a local provider server.

Real subprocesses (and a pseudo-terminal for the interactive prompt), Preflights' real adapters on
the official SDKs, a server on 127.0.0.1 that complies, breaks the contract or fails. Every
session completes with exactly the user's choices; the LLM's wording reaches the user when it
complies; each replacement is one line on standard error. The guard's deadline is generous (a
reply that comes, comes in time under load) but for the slow reply, held for 20 s, which would
outlast the run's timeout if the guard waited for it: its deadline is a quarter second a call.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

import installed

pytest.importorskip("preflights")

from llm_server import WORDING, LLMServer, Reply
from preflights_e2e import (
    CASES,
    CORE_ANSWERS,
    DATABASE_MYSQL_AT_PROMPTS,
    Case,
    expected_decisions,
    make_repo,
    pf_in_terminal,
    run_pf,
    written_decisions,
)

installed.require("anthropic", "openai")

BY_ID = {case.id: case for case in CASES}
REPLACED = "preflight-fsm: the engine answered instead of the LLM"


def start(
    tmp_path: Path,
    provider_server: LLMServer,
    provider: str,
    case: Case,
    *extra: str,
    deadline: float = 10.0,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``pf start --llm-provider PROVIDER`` for ``case``, its answers typed at the prompts."""
    repo, home = make_repo(tmp_path)
    result = run_pf(
        repo,
        home,
        "start",
        "--llm-provider",
        provider,
        *extra,
        case.intention,
        lines=case.pf_lines(),
        env=provider_server.env(provider, deadline),
    )
    return result, repo


@pytest.mark.parametrize(
    ("case_id", "provider"),
    [
        ("keyword-auth", "anthropic"),
        ("no-keyword-database", "openai"),
        ("other-field-after-category", "anthropic"),
        ("other-category-names-one", "openai"),
        ("prefilled-postgresql", "anthropic"),
    ],
)
def test_a_compliant_provider_completes_in_its_own_words(
    tmp_path: Path, provider_server: LLMServer, case_id: str, provider: str
) -> None:
    """The LLM's turns are shown as worded; the decision holds exactly the choices; no line."""
    case = BY_ID[case_id]
    result, repo = start(tmp_path, provider_server, provider, case)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert expected_decisions(case, repo) == written_decisions(repo)
    assert REPLACED not in result.stderr
    if case.choices:
        assert WORDING in result.stdout
    asked = [e.tool for e in provider_server.exchanges]
    assert "submit_decision" in asked


def test_options_in_the_providers_words_write_the_flows_option(
    tmp_path: Path, provider_server: LLMServer
) -> None:
    """The user picks "Use MySQL" (option 2); the decision says MySQL."""
    provider_server.default = Reply(reword_options=True)
    case = BY_ID["no-keyword-database"]
    result, repo = start(tmp_path, provider_server, "openai", case)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "Use PostgreSQL" in result.stdout
    assert expected_decisions(case, repo) == written_decisions(repo)


@pytest.mark.parametrize(
    ("reply", "provider", "reason"),
    [
        (Reply("break"), "anthropic", "its reply breaks the contract"),
        (Reply("status", status=429), "openai", "rate limit"),
        (Reply("status", status=500), "anthropic", "the provider returned an error"),
        (Reply(delay=20), "openai", "did not answer within the deadline"),
        (Reply("text"), "anthropic", "not a valid tool call"),
        (Reply("bad_arguments"), "openai", "not a valid tool call"),
    ],
    ids=["breaking", "429", "500", "slow", "text", "malformed"],
)
def test_a_failing_provider_still_completes_with_exactly_the_users_choices(
    tmp_path: Path, provider_server: LLMServer, reply: Reply, provider: str, reason: str
) -> None:
    """Every turn and the decision fall back to the engine; each time one line says why."""
    provider_server.default = reply
    case = BY_ID["other-category-names-one"]
    # The slow reply never comes in time: a short deadline keeps the test short.
    deadline = 0.25 if reply.delay else 10.0
    result, repo = start(tmp_path, provider_server, provider, case, deadline=deadline)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert expected_decisions(case, repo) == written_decisions(repo)
    lines = [line for line in result.stderr.splitlines() if line.startswith(REPLACED)]
    turns = [line for line in lines if "(questions)" in line]
    # Two turns (the category, its Other text typed with it; the field), each replaced and why;
    # then the decision (an invalid reply there is the None Preflights' adapter turns it into:
    # a decision missing, which its line says instead).
    assert 2 == len(turns)
    assert all(reason in line for line in turns), turns
    assert any("(decision)" in line for line in lines), lines


def test_quiet_silences_the_replacement_lines(tmp_path: Path, provider_server: LLMServer) -> None:
    """--quiet: the session is the same, standard error holds no replacement line."""
    provider_server.default = Reply("status", status=429)
    case = BY_ID["keyword-database"]
    result, repo = start(tmp_path, provider_server, "anthropic", case, "--quiet")
    assert 0 == result.returncode, result.stdout + result.stderr
    assert expected_decisions(case, repo) == written_decisions(repo)
    assert REPLACED not in result.stderr


def test_a_provider_without_a_key_falls_back_to_the_engine_and_says_so(tmp_path: Path) -> None:
    """As Preflights falls back to its mock: the session runs on the engine, one note."""
    repo, home = make_repo(tmp_path)
    case = BY_ID["keyword-auth"]
    result = run_pf(
        repo, home, "start", "--llm-provider", "openai", case.intention, lines=case.pf_lines()
    )
    assert 0 == result.returncode, result.stderr
    assert "no API key for openai" in result.stderr
    assert expected_decisions(case, repo) == written_decisions(repo)


def test_pf_answer_asks_the_llm_for_the_next_turn(
    tmp_path: Path, provider_server: LLMServer
) -> None:
    """Non-interactive: start, then answer in another process; both turns are the LLM's."""
    repo, home = make_repo(tmp_path)
    env = provider_server.env("anthropic")
    first = run_pf(
        repo, home, "start", "--llm", "--non-interactive", "Improve the checkout flow", env=env
    )
    second = run_pf(repo, home, "answer", "--llm", "change_category=Database", env=env)
    assert WORDING in first.stdout
    assert "In your own words: which database type?" in second.stdout


def test_pf_with_a_provider_in_a_real_terminal(tmp_path: Path, provider_server: LLMServer) -> None:
    """In a pseudo-terminal the LLM's question is prompted, answered, and the session completes."""
    repo, home = make_repo(tmp_path)
    args = ["start", "--llm-provider", "anthropic", "Improve the checkout flow"]
    code, shown = pf_in_terminal(
        repo, home, args, DATABASE_MYSQL_AT_PROMPTS, env=provider_server.env("anthropic")
    )
    assert 0 == code
    assert "In your own words: which database type?" in shown
    assert ["Decision: Database - Type=MySQL"] == written_decisions(repo)[:1]


def test_mcp_preflights_runs_the_configured_provider_under_the_guard(
    tmp_path: Path, provider_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PREFLIGHTS_LLM_PROVIDER set: the agent tools ask the provider, and the decision is exact
    (the server `mcp --preflights` serves over stdio, built in this process: test_mcp_stdio.py
    and test_preflights_mcp.py hold the transport)."""
    pytest.importorskip("mcp")
    import anyio

    from mcp_servers import connect_memory

    repo, _ = make_repo(tmp_path)
    for variable, value in provider_server.env("openai").items():
        monkeypatch.setenv(variable, value)
    case = BY_ID["no-keyword-database"]

    async def main() -> dict[str, Any]:
        with anyio.fail_after(60):
            async with connect_memory(str(tmp_path / "store.sqlite"), preflights=True) as client:
                arguments: dict[str, Any] = {
                    "user_intention": case.intention,
                    "repo_path": str(repo),
                }
                rounds = case.rounds()
                for _ in range(6):
                    result = await client.call_tool("require_clarification", arguments)
                    structured: dict[str, Any] = result.structured_content
                    if structured["status"] != "needs_clarification":
                        return structured
                    asked = {q["id"] for q in structured["questions"]}
                    core = {k: v for k, v in CORE_ANSWERS.items() if k in asked}
                    arguments = {
                        "user_intention": case.intention,
                        "session_id": structured["session_id"],
                        "answers": core or rounds.pop(0),
                    }
                return structured

    outcome = anyio.run(main)
    assert "completed" == outcome["status"], outcome
    assert expected_decisions(case, repo) == written_decisions(repo)
    assert {"submit_clarification", "submit_decision"} <= {
        e.tool for e in provider_server.exchanges
    }


def test_a_recorded_pf_session_replays_with_no_provider(
    tmp_path: Path, provider_server: LLMServer
) -> None:
    """--llm-record during a session; --llm-replay alone (no key, no server) asks the same."""
    case = BY_ID["no-keyword-database"]
    record = tmp_path / "exchanges.jsonl"
    first, _ = start(
        tmp_path / "live", provider_server, "anthropic", case, "--llm-record", str(record)
    )
    exchanges = len(provider_server.exchanges)
    repo, home = make_repo(tmp_path / "replay")
    replayed = run_pf(
        repo, home, "start", "--llm-replay", str(record), case.intention, lines=case.pf_lines()
    )
    assert 0 == first.returncode, first.stderr
    assert 0 == replayed.returncode, replayed.stderr
    assert REPLACED not in replayed.stderr
    assert "In your own words: which database type?" in replayed.stdout
    assert expected_decisions(case, repo) == written_decisions(repo)
    assert exchanges == len(provider_server.exchanges)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--llm-deadline", "soon"], "send a positive number of seconds"),
        (["--llm-provider"], "--llm-provider needs a value"),
        (["--llm-provider", "gemini"], "unknown LLM provider 'gemini'"),
    ],
)
def test_a_bad_llm_option_exits_one_saying_what_to_send(
    tmp_path: Path, options: list[str], message: str
) -> None:
    """Refused before anything starts: exit 1, the message names what is accepted."""
    repo, home = make_repo(tmp_path)
    result = run_pf(repo, home, "start", "Add login", *options)
    assert 1 == result.returncode
    assert message in result.stderr
    assert not (repo / ".preflights" / "current_session.json").exists()


def test_an_option_the_llm_worded_is_the_flows_in_a_later_process(
    tmp_path: Path, provider_server: LLMServer
) -> None:
    """Shown "Use MySQL" by the LLM, answered later without --llm: the decision says MySQL."""
    provider_server.default = Reply(reword_options=True)
    repo, home = make_repo(tmp_path)
    env = provider_server.env("anthropic")
    run_pf(repo, home, "start", "--llm", "--non-interactive", "Improve the checkout flow", env=env)
    run_pf(repo, home, "answer", "--llm", "change_category=Use Database", env=env)
    done = run_pf(
        repo, home, "answer", "db_type=Use MySQL", *(f"{k}={v}" for k, v in CORE_ANSWERS.items())
    )
    assert 0 == done.returncode, done.stderr
    assert ["Decision: Database - Type=MySQL"] == written_decisions(repo)[:1]
