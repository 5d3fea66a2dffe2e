"""End-to-end cases for Preflights on the engine: intentions, the answers chosen, the decision.

Shared by ``tests/test_cli_pf.py`` (the real ``pf`` through ``preflight-fsm pf``, piped
answers, in this process or across a real one) and ``tests/test_preflights_mcp.py`` (the agent
tools through the SDK's stdio client). Each case runs in a fresh temporary git repository with
its own ``HOME`` (``pf`` keeps sessions in ``~/.preflights``); every subprocess has a timeout, so
a loop that never ends fails the test.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import warm_processes
from preflight_fsm import default_flow

OTHER = "Other (specify)"
# What Preflights' core asks when it cannot derive an allowlist (Backend, Infra, Other, …).
CORE_ANSWERS = {"allowlist_paths": "src/", "acceptance_criteria": "It works as described"}
DATABASE_MYSQL_AT_PROMPTS = [
    ("change_category:", "3"),
    ("db_type:", "2"),
    ("allowlist_paths:", "src/db/"),
    ("acceptance_criteria:", "ok"),
]
"""What a person types at pf's prompts for "Improve the checkout flow": Database, then MySQL."""
PREFLIGHT_FSM = warm_processes.program()  # forked from a warm interpreter (warm_processes)
TIMEOUT = 60
# A developer's own provider settings must not reach a test's pf.
PROVIDER_VARIABLE = re.compile(r"^(PREFLIGHTS_|ANTHROPIC_|OPENAI_|OPENROUTER_|PREFLIGHT_FSM_LLM)")


@dataclass(frozen=True)
class Choice:
    """One engine question answered: the option (or text) chosen, and the Other text if any."""

    question_id: str
    value: str
    other: str | None = None


@dataclass(frozen=True)
class Case:
    """An intention, the answers a user chooses, and the decision that must be written."""

    id: str
    intention: str
    choices: tuple[Choice, ...]
    category: str
    fields: tuple[tuple[str, str], ...]

    def pf_lines(self) -> list[str]:
        """What a user types at pf's prompts: option numbers, Other texts, then core answers."""
        flow = default_flow()
        options = {c.question.id: (*c.question.options, OTHER) for c in flow.categories}
        options[flow.category_question.id] = (*(c.name for c in flow.categories), OTHER)
        lines: list[str] = []
        for choice in self.choices:
            listed = options.get(choice.question_id) or ()
            lines.append(
                str(listed.index(choice.value) + 1) if choice.value in listed else choice.value
            )
            if choice.other is not None:
                lines.append(choice.other)
        return [*lines, *CORE_ANSWERS.values()]

    def rounds(self) -> list[dict[str, str]]:
        """The same answers by question id, one round per engine turn (as an agent sends them)."""
        rounds = []
        for choice in self.choices:
            answers = {choice.question_id: choice.value}
            if choice.other is not None:
                answers[f"{choice.question_id}__other"] = choice.other
            rounds.append(answers)
        return rounds

    @property
    def decision_line(self) -> str:
        """The line Preflights writes into CURRENT_TASK.md for the decision."""
        fields = ", ".join(f"{k}={v}" for k, v in self.fields)
        return f"Decision: {self.category} - {fields}"


def c(question_id: str, value: str, other: str | None = None) -> Choice:
    """A Choice, briefly (the table below reads as the sessions it runs)."""
    return Choice(question_id, value, other)


LONG = "Add login to the admin dashboard. " + "Keep the current behaviour of every page. " * 60

CASES: tuple[Case, ...] = (
    # Keyword shortcut (C4): the field first.
    Case(
        "keyword-auth",
        "Add login to the admin dashboard",
        (c("auth_strategy", "Magic Link"),),
        "Authentication",
        (("Strategy", "Magic Link"),),
    ),
    Case(
        "keyword-database",
        "Store user profiles in a database",
        (c("db_type", "MySQL"),),
        "Database",
        (("Type", "MySQL"),),
    ),
    Case(
        "keyword-frontend",
        "Build a frontend settings page",
        (c("frontend_framework", "Svelte"),),
        "Frontend",
        (("Framework", "Svelte"),),
    ),
    Case(
        "keyword-backend",
        "Expose an endpoint for invoices",
        (c("backend_api_style", "GraphQL"),),
        "Backend",
        (("API_Style", "GraphQL"),),
    ),
    Case(
        "keyword-infra",
        "Deploy the worker with Docker",
        (c("infra_hosting", "Serverless"),),
        "Infra",
        (("Hosting", "Serverless"),),
    ),
    # Values Preflights pre-fills from the intention: nothing left to ask.
    Case("prefilled-oauth", "Add OAuth login", (), "Authentication", (("Strategy", "OAuth"),)),
    Case(
        "prefilled-email-password",
        "Use Email/Password login for the admin area",
        (),
        "Authentication",
        (("Strategy", "Email/Password"),),
    ),
    Case(
        "prefilled-postgresql",
        "Move the reports to PostgreSQL",
        (),
        "Database",
        (("Type", "PostgreSQL"),),
    ),
    Case(
        "prefilled-svelte",
        "Rewrite the checkout component in Svelte",
        (),
        "Frontend",
        (("Framework", "Svelte"),),
    ),
    # No keyword: the category, then the field (the hybrid flow).
    Case(
        "no-keyword-database",
        "Improve the checkout flow",
        (c("change_category", "Database"), c("db_type", "PostgreSQL")),
        "Database",
        (("Type", "PostgreSQL"),),
    ),
    Case(
        "no-keyword-backend",
        "Choose the storage architecture for invoices",
        (c("change_category", "Backend"), c("backend_api_style", "gRPC")),
        "Backend",
        (("API_Style", "gRPC"),),
    ),
    Case(
        "no-keyword-infra",
        "Speed up the nightly report",
        (c("change_category", "Infra"), c("infra_hosting", "Cloud")),
        "Infra",
        (("Hosting", "Cloud"),),
    ),
    Case(
        "no-keyword-auth",
        "Let customers sign in with their phone",
        (c("change_category", "Authentication"), c("auth_strategy", "Email/Password")),
        "Authentication",
        (("Strategy", "Email/Password"),),
    ),
    Case(
        "no-keyword-frontend",
        "Add a dark mode toggle",
        (c("change_category", "Frontend"), c("frontend_framework", "Vue")),
        "Frontend",
        (("Framework", "Vue"),),
    ),
    Case(
        "no-substring-match",
        "Collect feedback from authors",
        (c("change_category", "Frontend"), c("frontend_framework", "React")),
        "Frontend",
        (("Framework", "React"),),
    ),
    # Several categories named: the category is asked.
    Case(
        "two-categories-auth",
        "Add login API endpoint",
        (c("change_category", "Authentication"), c("auth_strategy", "OAuth")),
        "Authentication",
        (("Strategy", "OAuth"),),
    ),
    Case(
        "two-categories-infra",
        "Deploy the React frontend",
        (c("change_category", "Infra"), c("infra_hosting", "Self-hosted")),
        "Infra",
        (("Hosting", "Self-hosted"),),
    ),
    Case(
        "two-categories-database",
        "Cache database queries behind the API",
        (c("change_category", "Database"), c("db_type", "MongoDB")),
        "Database",
        (("Type", "MongoDB"),),
    ),
    # "Other (specify)" with text, at the category and at the field.
    Case(
        "other-category-custom",
        "Tidy up the billing module",
        (c("change_category", OTHER, "Payments"),),
        "Other",
        (("Description", "Payments"),),  # the text typed describes it (docs/decisions.md)
    ),
    Case(
        "other-category-names-one",
        "Rework session handling",
        (c("change_category", OTHER, "database"), c("db_type", "MySQL")),
        "Database",
        (("Type", "MySQL"),),
    ),
    Case(
        "other-field",
        "Add passkey login",
        (c("auth_strategy", OTHER, "Passkeys"),),
        "Authentication",
        (("Strategy", "Passkeys"),),
    ),
    Case(
        "other-field-after-category",
        "Modernise the checkout",
        (c("change_category", "Database"), c("db_type", OTHER, "CockroachDB")),
        "Database",
        (("Type", "CockroachDB"),),
    ),
    # Intentions the engine cannot take as they are: it still asks, and completes.
    Case(
        "placeholder-intention",
        "TBD",
        (c("change_category", "Backend"), c("backend_api_style", "REST")),
        "Backend",
        (("API_Style", "REST"),),
    ),
    Case(
        "long-intention",
        LONG,
        (c("auth_strategy", "OAuth"),),
        "Authentication",
        (("Strategy", "OAuth"),),
    ),
)


def make_repo(root: Path) -> tuple[Path, Path]:
    """A fresh git repository under ``root``, and a HOME beside it; (repo, home)."""
    repo, home = root / "repo", root / "home"
    repo.mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "--quiet", str(repo)], check=True)
    return repo, home


def run_pf(
    repo: Path,
    home: Path,
    *args: str,
    lines: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``preflight-fsm pf ARGS`` run in this process (the command line's own entry, through
    click's test runner), in ``repo``, answers piped one a line; what a subprocess would give.

    ``env`` adds to the environment (no provider key is inherited: a test sets the ones it uses).
    The few tests of the process boundary (exit status, a terminal) use :func:`run_pf_process`
    and :func:`pf_in_terminal`.
    """
    from typer.testing import CliRunner

    from preflight_fsm.cli import app

    inherited = {k: v for k, v in os.environ.items() if not PROVIDER_VARIABLE.match(k)}
    unset: dict[str, str | None] = {k: None for k in os.environ if k not in inherited}
    added = {"HOME": str(home), "NO_COLOR": "1", **(env or {})}
    here = Path.cwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(
            app,
            ["pf", *args],
            input="".join(f"{line}\n" for line in lines or ()),
            env={**unset, **added},
            catch_exceptions=False,
        )
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(
        ["preflight-fsm", "pf", *args], result.exit_code, result.stdout, result.stderr
    )


def run_pf_process(
    repo: Path,
    home: Path,
    *args: str,
    lines: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``preflight-fsm pf ARGS`` as a process in ``repo``, answers piped one a line; bounded by
    a timeout (as :func:`run_pf`, across the process boundary)."""
    inherited = {k: v for k, v in os.environ.items() if not PROVIDER_VARIABLE.match(k)}
    env = {**inherited, "HOME": str(home), "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [PREFLIGHT_FSM, "pf", *args],
        cwd=repo,
        env=env,
        input="".join(f"{line}\n" for line in lines or ()),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


PROMPT_TIMEOUT = 120
"""Seconds `pf` in a terminal may take to show a prompt: it starts by importing Preflights and
both LLM SDKs, which took over 30 s on the team's 2 cores at a load average of 15."""


def pf_in_terminal(
    repo: Path,
    home: Path,
    args: list[str],
    steps: list[tuple[str, str]],
    *,
    env: dict[str, str] | None = None,
    end: str = "Preflight completed",
) -> tuple[int, str]:
    """``preflight-fsm pf ARGS`` in a pseudo-terminal, each answer typed at its prompt, as a user
    types; its exit code and everything the terminal showed (colours removed)."""
    main, child = os.openpty()
    process = subprocess.Popen(
        [PREFLIGHT_FSM, "pf", *args],
        stdin=child,
        stdout=child,
        stderr=child,
        cwd=repo,
        close_fds=True,
        env={**os.environ, "HOME": str(home), **(env or {})},
    )
    os.close(child)
    seen = ""
    shown = ""

    def until(prompt: str) -> None:
        nonlocal seen, shown
        while prompt not in seen:
            ready, _, _ = select.select([main], [], [], PROMPT_TIMEOUT)
            assert ready, f"no {prompt!r} within {PROMPT_TIMEOUT} s; the terminal shows:\n{seen}"
            seen += os.read(main, 4096).decode(errors="replace")
            seen = re.sub(r"\x1b\[[0-9;]*m", "", seen)  # pf colours its prompts
        before, seen = seen.split(prompt, 1)
        shown += before + prompt

    try:
        for prompt, typed in steps:
            until(prompt)
            os.write(main, f"{typed}\r".encode())
        until(end)
        return process.wait(timeout=PROMPT_TIMEOUT), shown
    finally:
        process.kill()
        process.wait(timeout=PROMPT_TIMEOUT)  # reaped here, not warned about in a later test
        os.close(main)


def written_decisions(repo: Path) -> list[str]:
    """Every decision Preflights wrote: the task's ``Decision:`` line and each ADR's fields."""
    found: list[str] = []
    task = repo / "docs" / "CURRENT_TASK.md"
    if task.exists():
        found += re.findall(r"^Decision: .*$", task.read_text(), flags=re.MULTILINE)
    for adr in sorted((repo / "docs" / "adr").glob("*.md")):
        section = adr.read_text().split("## Decision", 1)[-1].split("\n## ", 1)[0]
        category = re.search(r"following for (.+):", section)
        fields = re.findall(r"^- (.+?): (.*)$", section, flags=re.MULTILINE)
        if category:
            listed = ", ".join(f"{k}={v}" for k, v in fields)
            found.append(f"ADR: {category.group(1)} - {listed}")
    return found


def expected_decisions(case: Case, repo: Path) -> list[str]:
    """What ``written_decisions`` must hold for ``case``: the task line, and the ADR if any."""
    expected = [case.decision_line]
    if any((repo / "docs" / "adr").glob("*.md")):
        expected.append("ADR: " + case.decision_line.removeprefix("Decision: "))
    return expected


# -- the figure: everyday intentions, option 1 at every prompt ---------------------------

# `pf` itself with only the adapter wired in, as users had to (a sitecustomize-style patch).
ADAPTER_ONLY = (
    "import sys, preflights.adapters.mock_llm as m\n"
    "from preflight_fsm.integrations.preflights import FsmLLMAdapter\n"
    "m.MockLLMAdapter = FsmLLMAdapter\n"
    "from preflights.cli.main import main\n"
    "sys.argv = ['pf', *sys.argv[1:]]\n"
    "main()\n"
)


def option_one_figure(root: Path, *, adapter_only: bool) -> tuple[int, int]:
    """Of the first 20 intentions, how many end with an ADR or task, answering 1 everywhere."""
    done = 0
    cases = CASES[:20]
    for case in cases:
        repo, home = make_repo(root / ("adapter" if adapter_only else "pf") / case.id)
        command = [sys.executable, "-c", ADAPTER_ONLY] if adapter_only else [PREFLIGHT_FSM, "pf"]
        subprocess.run(
            [*command, "start", case.intention],
            cwd=repo,
            input="1\n" * 12,
            text=True,
            capture_output=True,
            env={**os.environ, "HOME": str(home)},
            timeout=TIMEOUT,
            check=False,
        )
        done += (repo / "docs" / "CURRENT_TASK.md").exists()
    return done, len(cases)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        before = option_one_figure(Path(scratch), adapter_only=True)
        after = option_one_figure(Path(scratch), adapter_only=False)
    print(f"pf with FsmLLMAdapter patched in: {before[0]}/{before[1]}")
    print(f"preflight-fsm pf:                 {after[0]}/{after[1]}")
