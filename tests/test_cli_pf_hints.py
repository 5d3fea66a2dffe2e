"""``preflight-fsm pf``'s hints lead back to ``preflight-fsm pf``, and following them works.

Preflights' own ``preflights``/``pf`` commands are installed beside it and run Preflights' mock on
the same session files: a hint naming them writes another decision than the one chosen. Each test
runs the real command in a fresh git repository, follows what it printed, and reads the result.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import pytest

pytest.importorskip("preflights")

from preflights_e2e import make_repo, pf_in_terminal, run_pf, written_decisions

# A command a hint prints: `preflight-fsm pf VERB` and its arguments, up to the hint's own words.
_HINTED = re.compile(r"""preflight-fsm pf [a-z]+(?: (?:"[^"]*"|[\w-]+=(?:"[^"]*"|[^\s;'"]+)))*""")
# Preflights' own commands, which must never be suggested.
_THEIRS = re.compile(r"(?<!preflight-fsm )(?<![\w-])(?:preflights|pf) (?:start|answer|status|re)")
FILLED = "src/"
"""What the person types where a hint shows "...": any text of theirs."""


@pytest.fixture
def repo_home(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh git repository and a HOME of its own."""
    return make_repo(tmp_path)


def hints(text: str) -> list[list[str]]:
    """Every command the text suggests, as argv after ``preflight-fsm pf``, "..." filled in."""
    found = []
    for match in _HINTED.finditer(text):
        argv = shlex.split(match.group(0))[2:]
        found.append([arg.replace("...", FILLED) for arg in argv])
    return found


def follow(repo: Path, home: Path, printed: str) -> str:
    """Runs the first command ``printed`` suggests; its stdout and stderr."""
    suggested = hints(printed)
    assert suggested, f"no preflight-fsm pf command in:\n{printed}"
    result = run_pf(repo, home, *suggested[0], lines=["y"])
    return result.stdout + result.stderr


def test_no_hint_names_preflights_own_command(repo_home: tuple[Path, Path]) -> None:
    """Output, errors and help of every pf command name preflight-fsm pf, never pf or preflights."""
    repo, home = repo_home
    outputs = [
        run_pf(repo, home, "answer", "x=1"),
        run_pf(repo, home, "resume"),
        run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow"),
        run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow"),
        run_pf(repo, home, "answer", "change_category=Databse"),
        run_pf(repo, home, "status"),
        *(run_pf(repo, home, verb, "--help") for verb in ("start", "answer", "status")),
        run_pf(repo, home, "--help"),
    ]
    printed = "\n".join(r.stdout + r.stderr for r in outputs)
    assert [] == _THEIRS.findall(printed)
    assert 8 <= len(hints(printed))


def test_following_every_printed_hint_writes_the_choices_it_named(
    repo_home: tuple[Path, Path],
) -> None:
    """From a non-interactive start, each printed `Use:` command, followed, completes the session
    with exactly the options those hints named (the flow of issue 24: no Other - Implementation).
    """
    repo, home = repo_home
    printed = run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow").stdout
    for _ in range(6):
        if "Preflight completed" in printed:
            break
        printed = follow(repo, home, printed)
    assert "Preflight completed" in printed
    assert ["Decision: Frontend - Framework=React"] == written_decisions(repo)[:1]


def test_the_status_hint_answers_the_pending_question(repo_home: tuple[Path, Path]) -> None:
    """`pf status` suggests `preflight-fsm pf answer db_type=...`; following it records db_type."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow")
    run_pf(repo, home, "answer", "change_category=Database")
    status = run_pf(repo, home, "status").stdout
    follow(repo, home, status)
    state = json.loads((repo / ".preflights" / "current_session.json").read_text())
    assert "PostgreSQL" == state["answers"]["db_type"]


def test_with_no_session_the_hint_starts_one(repo_home: tuple[Path, Path]) -> None:
    """pf answer without a session hints `preflight-fsm pf start "..."`, which starts one."""
    repo, home = repo_home
    refused = run_pf(repo, home, "answer", "db_type=MySQL")
    after = follow(repo, home, refused.stderr)
    assert (1, True) == (refused.returncode, "NO_ACTIVE_SESSION" in refused.stderr)
    assert "change_category" in after


def test_with_a_session_active_the_hints_show_it_and_reset_it(
    repo_home: tuple[Path, Path],
) -> None:
    """A second pf start hints status (which lists the questions) and reset (which frees pf)."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow")
    refused = run_pf(repo, home, "start", "--non-interactive", "Add a cache")
    status, reset = hints(refused.stderr)[:2]
    shown = run_pf(repo, home, *status).stdout
    run_pf(repo, home, *reset, lines=["y"])
    assert (["status"], ["reset"]) == (status, reset)
    assert "change_category" in shown
    assert not (repo / ".preflights" / "current_session.json").exists()


def test_an_expired_session_hint_resumes_it(repo_home: tuple[Path, Path]) -> None:
    """An expired session hints `preflight-fsm pf resume`, which restarts the same intention."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow")
    saved = repo / ".preflights" / "current_session.json"
    state = json.loads(saved.read_text())
    state["expires_at_unix"] = time.time() - 60
    saved.write_text(json.dumps(state))
    expired = run_pf(repo, home, "answer", "change_category=Database")
    resumed = run_pf(repo, home, *hints(expired.stderr)[0], lines=["3"])
    assert "SESSION_EXPIRED" in expired.stderr
    assert [["resume"]] == hints(expired.stderr)
    assert "Improve the checkout flow" in resumed.stdout


def test_an_other_text_left_alone_is_named_with_its_command(
    repo_home: tuple[Path, Path],
) -> None:
    """pf answer db_type="Other (specify)" names the text it now needs; following it completes."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Improve the checkout flow")
    run_pf(repo, home, "answer", "change_category=Database")
    owed = run_pf(repo, home, "answer", "db_type=Other (specify)").stdout
    assert [["answer", f"db_type__other={FILLED}"]] == hints(owed)


def test_a_refused_other_text_hint_resends_only_that_text(repo_home: tuple[Path, Path]) -> None:
    """An Other text over the limit hints `preflight-fsm pf answer <id>__other=...`; followed, the
    session goes on with that text."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Add passkey login")
    refused = run_pf(
        repo, home, "answer", "auth_strategy=Other (specify)", "auth_strategy__other=" + "x" * 600
    )
    after = follow(repo, home, refused.stderr)
    assert [["answer", f"auth_strategy__other={FILLED}"]] == hints(refused.stderr)
    assert "INVALID_ANSWER" not in after
    state = json.loads((repo / ".preflights" / "current_session.json").read_text())
    assert FILLED == state["answers"]["auth_strategy__other"]


def test_an_unpromptable_round_hints_the_text_to_send(repo_home: tuple[Path, Path]) -> None:
    """AWAITING_ANSWER names `preflight-fsm pf answer auth_strategy__other=...`."""
    repo, home = repo_home
    run_pf(repo, home, "start", "--non-interactive", "Add passkey login")
    result = run_pf(repo, home, "answer", "-i", "auth_strategy=Other (specify)")
    assert [["answer", f"auth_strategy__other={FILLED}"]] == hints(result.stderr)


@pytest.mark.parametrize(
    ("reply", "decision"),
    [("y", "Database - Type=MySQL"), ("n", "Other - Description=Databse")],
    ids=["yes-takes-the-option", "no-keeps-the-text"],
)
def test_the_pf_prompt_asks_did_you_mean_for_a_near_miss(
    repo_home: tuple[Path, Path], reply: str, decision: str
) -> None:
    """At pf's prompt a typo of an option asks "did you mean"; no keeps the typed text."""
    repo, home = repo_home
    script = [("change_category:", "Databse"), ('Did you mean "Database"?', reply)]
    if reply == "y":
        script.append(("db_type:", "2"))
    script += [("allowlist_paths:", "src/"), ("acceptance_criteria:", "ok")]
    code, shown = pf_in_terminal(repo, home, ["start", "Improve the checkout flow"], script)
    assert 0 == code
    assert [f"Decision: {decision}"] == written_decisions(repo)[:1]
    assert "Invalid option" not in shown


def test_the_pf_prompt_asks_a_too_long_other_text_again(repo_home: tuple[Path, Path]) -> None:
    """In a terminal, an Other text over the limit asks for the text again, not the choice."""
    repo, home = repo_home
    script = [
        ("change_category:", "6"),
        ("Please specify:", "x" * 600),
        ("Please specify:", "Caching layer with Redis"),
        ("allowlist_paths:", "src/"),
        ("acceptance_criteria:", "ok"),
    ]
    code, shown = pf_in_terminal(repo, home, ["start", "Improve the checkout flow"], script)
    assert 0 == code
    assert "At most 500 characters, this is 600" in shown
    assert 1 == shown.count("change_category:")
    assert ["Decision: Other - Description=Caching layer with Redis"] == written_decisions(repo)[:1]


def test_input_ending_at_a_prompt_says_so_and_how_to_go_on(repo_home: tuple[Path, Path]) -> None:
    """pf start with its input ended says so (not an empty SYSTEM_ERROR), exits 1, and its hint,
    followed, shows the question left with the command that answers it."""
    repo, home = repo_home
    ended = run_pf(repo, home, "start", "Add login")
    status = follow(repo, home, ended.stderr)
    assert (1, "INPUT_ENDED") == (ended.returncode, ended.stderr.split("Error: ")[1].split()[0])
    assert [["answer", "auth_strategy=OAuth"]] == hints(status)


def test_a_start_whose_intention_answers_everything_names_the_questions_owed(
    repo_home: tuple[Path, Path],
) -> None:
    """`start --non-interactive "Add OAuth login"` (the category read from the intention) lists
    the questions still owed, allowlist_paths and acceptance_criteria, and following its hints
    completes the session: never an empty list and a `<key>` placeholder (issue 30)."""
    repo, home = repo_home
    printed = run_pf(repo, home, "start", "--non-interactive", "Add OAuth login").stdout
    assert ["allowlist_paths", "acceptance_criteria"] == re.findall(r"Q\d+ \[(\w+)\]", printed)
    assert "<key>" not in printed
    for _ in range(4):
        if "Preflight completed" in printed:
            break
        printed = follow(repo, home, printed)
    assert "Preflight completed" in printed
