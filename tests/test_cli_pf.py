"""``preflight-fsm pf``: the real ``pf`` command line on the engine, as a user runs it.

Every test runs in a fresh temporary git repository with its own HOME, answers piped on
standard input. Most run the command line in this process (``run_pf``: the same entry, click's
test runner); the process boundary (exit status, a terminal) is tested across a real process
(``run_pf_process``, ``pf_in_terminal``), with a timeout (a loop that never ends fails instead of
hanging).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("preflights")

from preflight_fsm.cli import app
from preflights_e2e import (
    CASES,
    PREFLIGHT_FSM,
    Case,
    expected_decisions,
    make_repo,
    pf_in_terminal,
    run_pf,
    run_pf_process,
    written_decisions,
)
from terminal import Terminal


@pytest.fixture
def repo_home(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh git repository and a HOME of its own."""
    return make_repo(tmp_path)


def docs_written(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in (repo / "docs").rglob("*.md"))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pf_writes_exactly_the_decision_chosen(repo_home: tuple[Path, Path], case: Case) -> None:
    """pf start, answered at its prompts, completes with a decision of exactly the values chosen."""
    repo, home = repo_home
    result = run_pf(repo, home, "start", case.intention, lines=case.pf_lines())
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "Preflight completed" in result.stdout
    assert expected_decisions(case, repo) == written_decisions(repo)


def test_pf_asks_the_category_then_the_field_in_turn(repo_home: tuple[Path, Path]) -> None:
    """Without keywords pf asks the category, then the field that category needs (hybrid flow)."""
    repo, home = repo_home
    lines = ["3", "2", "src/", "ok"]
    result = run_pf(repo, home, "start", "Improve the checkout flow", lines=lines)
    asked = [line.split("]")[0] for line in result.stdout.splitlines() if line.startswith("Q1 [")]
    assert ["Q1 [change_category", "Q1 [db_type"] == asked[:2]


def test_pf_answer_and_status_resume_a_session(repo_home: tuple[Path, Path]) -> None:
    """A session started non-interactively goes on with pf answer, turn by turn, and completes."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow")
    second = run_pf(repo, home, "answer", "--json", "change_category=Database")
    status = run_pf(repo, home, "status", "--json")
    done = run_pf(
        repo, home, "answer", "db_type=MySQL", "allowlist_paths=src/", "acceptance_criteria=ok"
    )
    assert ["db_type"] == [
        q["id"] for q in json.loads(second.stdout)["questions"] if "depends_on_question_id" not in q
    ]
    assert "db_type" in {q["id"] for q in json.loads(status.stdout)["questions"]}
    assert 0 == done.returncode, done.stdout + done.stderr
    assert ["Decision: Database - Type=MySQL"] == written_decisions(repo)[:1]


def test_declining_stops_without_a_decision_and_frees_the_repository(
    repo_home: tuple[Path, Path],
) -> None:
    """A placeholder as the Other text ends as NO_DECISION, exit 1 (a process's status), nothing
    written, pf free once that process has exited (the next start runs in this process)."""
    repo, home = repo_home
    stopped = run_pf_process(repo, home, "start", "Add passkey login", lines=["4", "tbd"])
    again = run_pf(repo, home, "start", "--non-interactive", "Add passkey login")
    assert 1 == stopped.returncode
    assert "NO_DECISION" in stopped.stderr
    assert [] == docs_written(repo)
    assert 0 == again.returncode, again.stderr


def test_an_other_text_over_the_limit_is_asked_again_at_the_prompt(
    repo_home: tuple[Path, Path],
) -> None:
    """At pf's prompt a 600-character Other text asks for the text again, keeping the choice."""
    repo, home = repo_home
    lines = ["4", "x" * 600, "Passkeys", "src/", "ok"]
    result = run_pf(repo, home, "start", "Add passkey login", lines=lines)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "At most 500 characters, this is 600" in result.stdout
    assert "Decision: Authentication - Strategy=Passkeys" == written_decisions(repo)[0]


def test_an_other_text_over_the_limit_is_refused_then_resent(
    repo_home: tuple[Path, Path],
) -> None:
    """A 600-character Other text sent by pf answer is refused with the reason; pf answer with a
    shorter one completes."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Add passkey login")
    refused = run_pf(
        repo, home, "answer", "auth_strategy=Other (specify)", "auth_strategy__other=" + "x" * 600
    )
    resent = run_pf(
        repo,
        home,
        "answer",
        "auth_strategy__other=Passkeys",
        "allowlist_paths=src/",
        "acceptance_criteria=ok",
    )
    assert (1, True, True) == (
        refused.returncode,
        "INVALID_ANSWER" in refused.stderr,
        "500" in refused.stderr,
    )
    assert 0 == resent.returncode, resent.stdout + resent.stderr
    assert "Decision: Authentication - Strategy=Passkeys" == written_decisions(repo)[0]


def test_an_interactive_round_that_cannot_ask_its_question_ends(
    repo_home: tuple[Path, Path],
) -> None:
    """pf answer -i with Other but no text ends (AWAITING_ANSWER) instead of spinning forever."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Add passkey login")
    result = run_pf(repo, home, "answer", "-i", "auth_strategy=Other (specify)")
    assert "AWAITING_ANSWER" in result.stderr
    assert "auth_strategy__other" in result.stderr


def test_a_strict_provider_without_its_key_is_refused(repo_home: tuple[Path, Path]) -> None:
    """--llm-provider with --llm-strict and no API key exits 1 naming the variable to set."""
    repo, home = repo_home
    result = run_pf(repo, home, "start", "--llm-provider=openai", "--llm-strict", "Add login")
    assert 1 == result.returncode
    assert "OPENAI_API_KEY" in result.stderr


def test_a_provider_whose_sdk_is_missing_falls_back_saying_one_install_command(
    repo_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a key set and the SDK missing, pf names one install command and a header that says
    the engine answers, not the provider it fell back from."""
    repo, home = repo_home
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` raises ImportError
    env = {"ANTHROPIC_API_KEY": "sk-test"}
    result = run_pf(repo, home, "start", "--llm-provider", "anthropic", "Add login", env=env)
    assert 1 == result.stderr.count("pip install"), result.stderr
    assert "the engine answers alone" in result.stderr
    assert "LLM: none, the preflight-fsm engine answers" in result.stdout
    assert "Anthropic" not in result.stdout


def test_debug_llm_writes_the_engines_account(repo_home: tuple[Path, Path]) -> None:
    """--debug-llm writes what the engine ran on and where it stands, every round of the run."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--debug-llm", "TBD", lines=["2", "1", "src/", "ok"])
    debug = (repo / ".preflights" / "debug" / "last_llm_prompt.md").read_text()
    assert '"engine_intention": "Unspecified change"' in debug
    assert '"state": "NeedCategory"' in debug
    assert '"state": "Done"' in debug


def test_an_intention_the_engine_cannot_read_is_explained(repo_home: tuple[Path, Path]) -> None:
    """pf start "TBD" asks the category, saying on stderr why (no SYSTEM_ERROR)."""
    repo, home = repo_home
    result = run_pf(repo, home, "start", "--non-interactive", "TBD")
    assert 0 == result.returncode
    assert "change_category" in result.stdout
    note = "preflight-fsm: generate_questions: the engine cannot read the intention"
    assert note in result.stderr


def test_pf_runs_in_a_real_terminal(repo_home: tuple[Path, Path]) -> None:
    """In a pseudo-terminal, pf prompts each question in turn and completes (as a user types)."""
    repo, home = repo_home
    steps = [
        ("change_category:", "3"),
        ("db_type:", "2"),
        ("allowlist_paths:", "src/db/"),
        ("acceptance_criteria:", "ok"),
    ]
    code, _ = pf_in_terminal(repo, home, ["start", "Improve the checkout flow"], steps)
    assert 0 == code
    assert ["Decision: Database - Type=MySQL"] == written_decisions(repo)[:1]


def test_ctrl_c_at_a_prompt_exits_130_saying_interrupted(repo_home: tuple[Path, Path]) -> None:
    """Ctrl-C at a pf start prompt ends with 130 and "interrupted", as chat does, not as the
    end of input (exit 1); the session is kept for pf status."""
    repo, home = repo_home
    term = Terminal(
        [PREFLIGHT_FSM, "pf", "start", "Improve the checkout flow"],
        cwd=str(repo),
        env={"HOME": str(home)},
    )
    try:
        term.expect("change_category:")
        term.wait_for_input()
        term.send("\x03")
        assert 130 == term.wait(), term.output
    finally:
        term.close()
    kept = "preflight-fsm: interrupted: the session is kept: 'preflight-fsm pf status' shows"
    assert kept in term.output
    assert "INPUT_ENDED" not in term.output
    assert 0 == run_pf(repo, home, "status").returncode


def test_the_adr_pf_writes_says_who_answered_each_decided_value(
    repo_home: tuple[Path, Path],
) -> None:
    """C9: pf's answers are typed at its prompt (cli); a category the intention's keywords
    named is the intention's. The ADR and the task both say so."""
    repo, home = repo_home
    (case,) = [c for c in CASES if c.id == "keyword-auth"]
    result = run_pf(repo, home, "start", case.intention, lines=case.pf_lines())
    assert 0 == result.returncode, result.stdout + result.stderr
    (adr,) = (repo / "docs" / "adr").glob("*.md")
    for written in (adr, repo / "docs" / "CURRENT_TASK.md"):
        section = written.read_text().split("## Who answered", 1)[1]
        assert ["- Category: intention", "- Strategy: cli"] == re.findall(
            r"^- .+$", section, flags=re.MULTILINE
        )


def test_a_value_preflights_filled_in_from_the_intention_is_the_intentions(
    repo_home: tuple[Path, Path],
) -> None:
    """Preflights pre-fills OAuth from "Add OAuth login": nobody answered it, the intention did."""
    repo, home = repo_home
    result = run_pf(repo, home, "start", "Add OAuth login", lines=["src/", "ok"])
    assert 0 == result.returncode, result.stdout + result.stderr
    (adr,) = (repo / "docs" / "adr").glob("*.md")
    section = adr.read_text().split("## Who answered", 1)[1]
    assert ["- Category: intention", "- Strategy: intention"] == re.findall(
        r"^- .+$", section, flags=re.MULTILINE
    )


def test_the_files_pf_writes_verify_from_the_command_line(repo_home: tuple[Path, Path]) -> None:
    """The ADR and task pf writes verify as written (`preflight-fsm verify` in the repository,
    run in this process), and pf's steps, typed at its prompt, do not meet --require user (exit
    11, the status of a process of its own)."""
    repo, home = repo_home
    (case,) = [c for c in CASES if c.id == "keyword-auth"]
    result = run_pf(repo, home, "start", case.intention, lines=case.pf_lines())
    assert 0 == result.returncode, result.stdout + result.stderr
    files = [str(p.relative_to(repo)) for p in (repo / "docs" / "adr").glob("*.md")]
    files.append("docs/CURRENT_TASK.md")

    argv = [PREFLIGHT_FSM, "verify", *files, "--json", "--require", "user"]
    required = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=60)
    with contextlib.chdir(repo):
        verified = CliRunner().invoke(app, ["verify", *files, "--json"], catch_exceptions=False)
    report = json.loads(verified.stdout)
    assert ["verified"] * len(files) == [f["outcome"] for f in report["files"]]
    assert 11 == required.returncode, required.stdout + required.stderr
