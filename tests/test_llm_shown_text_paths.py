"""C5 where an LLM's text would land: a terminal, an MCP tool result, the decision files.

Preflights' real Anthropic and OpenAI adapters against ``llm_server`` on 127.0.0.1 answering every
call with what C5 refuses (issue 30, item 2): tag characters spelling an instruction, an option
drawing another over itself with a carriage return and a zero-width space, a Cyrillic look-alike
option, a patch value trailing separators. A session still completes with exactly the person's
choices; what reaches the person, the agent and the files holds none of it (checked here by
Unicode categories and scripts, not by the guard's own rule), and each replacement is reported.
A property then gives the guard LLM replies of any characters and follows them to the tool
results and the files.
"""

from __future__ import annotations

import json
import logging
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import regex

import installed

pytest.importorskip("preflights")
pytest.importorskip("mcp")

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from preflights.application.types import LLMResponse, Question
from preflights.core.types import DecisionPatch

from llm_server import LLMServer, Reply
from mcp_servers import connect_memory
from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.integrations.preflights.agent_tools import (
    PreflightsTools,
    build_store_app,
)
from preflight_fsm.integrations.preflights.sessions import StoreSessionAdapter
from preflight_fsm.llm import GuardedLLMAdapter
from preflight_fsm.store import MemoryStore
from preflights_e2e import (
    CORE_ANSWERS,
    DATABASE_MYSQL_AT_PROMPTS,
    make_repo,
    pf_in_terminal,
    written_decisions,
)

installed.require("anthropic", "openai")

INTENTION = "Improve the checkout flow"
ROUNDS = ({"change_category": "Database"}, {"db_type": "MySQL"})
DECISION = "Decision: Database - Type=MySQL"
REPLACED = "preflight-fsm: the engine answered instead of the LLM"
_UNSEEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
_LATIN = regex.compile(r"\p{scx=Latin}")
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_FOREIGN = regex.compile(
    r"[^\p{scx=Latin}\p{scx=Common}\p{scx=Inherited}"
    r"\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Bopomofo}\p{scx=Hangul}]"
)
"""A letter no word with Latin letters may hold: not Latin, not of every script (Common,
Inherited), not of the scripts written with Latin in Japanese, Chinese or Korean text."""


def deceptive(text: str) -> list[str]:
    """What in ``text`` deceives a reader, one name each: an invisible, control or separator
    character (a line break and a tab aside), or a letter of another script inside a word with
    Latin letters (a look-alike such as a Cyrillic o, U+043E, in "Postgres"). By Unicode's Script
    property, not by names: "º" is Latin; a word wholly in one other script is a language."""
    found = [
        unicodedata.name(char, f"U+{ord(char):04X}")
        for char in text
        if char not in "\n\t" and unicodedata.category(char) in _UNSEEN
    ]
    for word in _WORD.findall(text):
        if _LATIN.search(word):
            found += [unicodedata.name(c, f"U+{ord(c):04X}") for c in _FOREIGN.findall(word)]
    return found


def texts_of(value: Any) -> list[str]:
    """Every string in a JSON value: keys and values."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (k, *texts_of(v))]
    if isinstance(value, list):
        return [t for item in value for t in texts_of(item)]
    return []


def files_of(repo: Path) -> dict[str, str]:
    """Every file Preflights wrote under docs/: its text by path."""
    return {str(p.relative_to(repo)): p.read_text() for p in (repo / "docs").rglob("*.md")}


async def complete(client: Any, repo: Path) -> list[dict[str, Any]]:
    """Every ``require_clarification`` result of a session answered as ROUNDS, then the core."""
    arguments: dict[str, Any] = {"user_intention": INTENTION, "repo_path": str(repo)}
    rounds = list(ROUNDS)
    results: list[dict[str, Any]] = []
    for _ in range(6):
        result = await client.call_tool("require_clarification", arguments)
        results.append(json.loads(result.content[0].text))
        structured: dict[str, Any] = result.structured_content
        if structured["status"] != "needs_clarification":
            break
        asked = {q["id"] for q in structured["questions"]}
        core = {k: v for k, v in CORE_ANSWERS.items() if k in asked}
        arguments = {
            "user_intention": INTENTION,
            "session_id": structured["session_id"],
            "answers": core or rounds.pop(0),
        }
    return results


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_deceptive_llm_text_reaches_a_tool_result_or_a_file(
    tmp_path: Path,
    provider_server: LLMServer,
    provider: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`mcp --preflights` on a provider deceiving at every call: the agent gets the engine's
    questions, the files hold the person's choices, and each replacement is logged as C5's."""
    for name, value in provider_server.env(provider, 10.0).items():
        monkeypatch.setenv(name, value)
    provider_server.default = Reply(kind="deceive")
    repo, _ = make_repo(tmp_path)

    async def main() -> list[dict[str, Any]]:
        with anyio.fail_after(120):
            store = str(tmp_path / "store.sqlite3")
            async with connect_memory(store, preflights=True) as client:
                return await complete(client, repo)

    with caplog.at_level(logging.WARNING):
        results = anyio.run(main)
    assert "completed" == results[-1]["status"], results
    assert {} == {text: deceptive(text) for r in results for text in texts_of(r) if deceptive(text)}
    assert {} == {path: deceptive(text) for path, text in files_of(repo).items() if deceptive(text)}
    assert [DECISION] == written_decisions(repo)[:1]
    reported = [r.getMessage() for r in caplog.records if REPLACED in r.getMessage()]
    assert reported
    assert [] == [line for line in reported if "C5:" not in line]
    assert [] == [line for line in reported if deceptive(line)]


def test_no_deceptive_llm_text_reaches_the_terminal(
    tmp_path: Path, provider_server: LLMServer
) -> None:
    """`pf` in a pseudo-terminal on a provider deceiving at every call: the terminal shows the
    engine's questions and the replacement lines, nothing that deceives; the decision is exact."""
    provider_server.default = Reply(kind="deceive")
    repo, home = make_repo(tmp_path)
    args = ["start", "--llm-provider", "anthropic", INTENTION]
    code, shown = pf_in_terminal(
        repo, home, args, DATABASE_MYSQL_AT_PROMPTS, env=provider_server.env("anthropic", 10)
    )
    assert 0 == code, shown
    terminal = shown.replace("\r", "")  # the terminal's own line endings (\r\n)
    assert [] == deceptive(terminal), shown
    assert REPLACED in shown
    assert [DECISION] == written_decisions(repo)[:1]


# -- the property: replies of any characters -----------------------------------------------------


class Scripted(FsmLLMAdapter):
    """An LLM that asks the engine's questions, worded with the texts given: ``question`` for each
    question, ``suffix`` after each option, ``value`` after each patch value."""

    def __init__(self, question: str, suffix: str, value: str) -> None:
        super().__init__()
        self.texts = (question, suffix, value)

    def generate_questions(self, *args: Any, **kwargs: Any) -> LLMResponse:
        turn = super().generate_questions(*args, **kwargs)
        question, suffix, _ = self.texts
        worded = tuple(
            Question(
                id=q.id,
                type=q.type,
                question=question or q.question,
                options=tuple(o + suffix for o in q.options or ()) or None,
            )
            for q in turn.questions
        )
        return LLMResponse(worded, turn.missing_info, turn.decision_hint, turn.progress)

    def extract_decision_patch(self, *args: Any, **kwargs: Any) -> DecisionPatch | None:
        patch = super().extract_decision_patch(*args, **kwargs)
        if patch is None:
            return None
        value = self.texts[2]
        return DecisionPatch(patch.category, tuple((k, v + value) for k, v in patch.fields))


@pytest.fixture(scope="module")
def property_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the property's repositories, one per example."""
    return tmp_path_factory.mktemp("any-characters")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(question=st.text(max_size=8), suffix=st.text(max_size=3), value=st.text(max_size=3))
@example(question="º", suffix="", value="")  # Latin by its script, not by its name (a CI run)
@example(question="ᮺ", suffix="", value="")  # a word wholly Sundanese: a language (a CI run)
@example(question="", suffix="ᮺ", value="")  # "MySQLᮺ": a Latin word with a Sundanese letter
def test_llm_replies_of_any_characters_reach_no_tool_result_or_file_unless_harmless(
    property_root: Path, question: str, suffix: str, value: str
) -> None:
    """Whatever characters an LLM adds to its questions, options and patch, the agent's tool
    results and the decision files hold nothing that deceives; a reply carrying any is replaced
    and the replacement reported."""
    with tempfile.TemporaryDirectory(dir=property_root) as folder:
        run_session(Path(folder), question, suffix, value)


def run_session(folder: Path, question: str, suffix: str, value: str) -> None:
    """One session through the agent tools on an LLM wording with the texts given; checked."""
    repo, _ = make_repo(folder)
    reported: list[str] = []
    guard = GuardedLLMAdapter(
        Scripted(question, suffix, value),
        deadline=10,
        on_replacement=lambda r: reported.append(r.line()),
    )
    app = build_store_app(
        llm_adapter=guard, sessions=StoreSessionAdapter(MemoryStore()), answered_by="agent"
    )
    tools = PreflightsTools(app)
    result = tools.require_clarification(INTENTION, repo_path=str(repo))
    results = [result]
    rounds = list(ROUNDS)
    while result["status"] == "needs_clarification" and len(results) < 6:
        asked = {q["id"] for q in result["questions"]}
        core = {k: v for k, v in CORE_ANSWERS.items() if k in asked}
        answers = core or rounds.pop(0)
        result = tools.require_clarification(
            INTENTION, session_id=result["session_id"], answers=answers
        )
        results.append(result)
    assert "completed" == result["status"], results
    assert [] == [t for r in results for t in texts_of(r) if deceptive(t)]
    assert [] == [p for p, t in files_of(repo).items() if deceptive(t)]
    assert [DECISION] == written_decisions(repo)[:1]
    carried = [t for t in (question, suffix, value) if deceptive(t)]
    if carried:
        assert reported, f"{carried} replaced without a report"
