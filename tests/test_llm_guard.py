"""The guard: an LLM's turns and patches used when they keep the contract, replaced when not.

The LLM here is the engine itself behind the seeded fault injector (a compliant LLM that fails on
demand), or Preflights' own MockLLMAdapter; time is a simulated clock, so a slow reply costs no
wall time. Preflights' real provider adapters over HTTP are in ``test_llm_providers.py``.
"""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("preflights")

from preflights.adapters.default_config import DefaultConfigLoader
from preflights.adapters.fixed_clock import FixedClockProvider
from preflights.adapters.in_memory_session import InMemorySessionAdapter
from preflights.adapters.isolated_filesystem import IsolatedFilesystemAdapter
from preflights.adapters.mock_llm import MockLLMAdapter as PreflightsMock
from preflights.adapters.sequential_uid import SequentialUIDProvider
from preflights.adapters.simple_file_context import SimpleFileContextBuilder
from preflights.application.preflights_app import PreflightsApp
from preflights.application.types import LLMResponse as PfLLMResponse
from preflights.core.types import default_v1_heuristics

from preflight_fsm.integrations.preflights import FsmLLMAdapter
from preflight_fsm.integrations.preflights.application import FsmPreflightsApp
from preflight_fsm.llm import DEADLINE_ENV, GuardedLLMAdapter, Replacement, deadline_from
from preflight_fsm.llm.faults import FAULTS, FaultyLLMAdapter

CONFIG = default_v1_heuristics()
OTHER = "Other (specify)"


class SimulatedClock:
    """Time that moves only when something sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def guarded(
    rates: dict[str, float] | None = None, *, seed: int = 0, llm: Any = None
) -> tuple[GuardedLLMAdapter, list[Replacement]]:
    """A guard around ``llm`` (the engine by default) with seeded faults; its replacements."""
    clock = SimulatedClock()
    faulty = FaultyLLMAdapter(llm or FsmLLMAdapter(), rates or {}, seed=seed, clock=clock)
    seen: list[Replacement] = []
    guard = GuardedLLMAdapter(faulty, deadline=2, clock=clock, on_replacement=seen.append)
    return guard, seen


class Reworded:
    """A compliant LLM in its own words: the engine's turns, every text said another way."""

    provider = "reworded"

    def __init__(self, *, drop_companions: bool = False, reword_options: bool = False) -> None:
        self._engine = FsmLLMAdapter()
        self._drop = drop_companions
        self._options = reword_options

    def generate_questions(self, *args: Any, **kwargs: Any) -> PfLLMResponse:
        reply = self._engine.generate_questions(*args, **kwargs)
        questions = []
        for q in reply.questions:
            if self._drop and q.depends_on_question_id:
                continue
            options = q.options
            if self._options and options:
                options = (*(f"Use {o}" for o in options[:-1]), options[-1])
            questions.append(dataclasses.replace(q, question=f"LLM: {q.question}", options=options))
        return dataclasses.replace(reply, questions=tuple(questions))

    def extract_decision_patch(self, *args: Any, **kwargs: Any) -> Any:
        return self._engine.extract_decision_patch(*args, **kwargs)


# -- turns ----------------------------------------------------------------------------------------


def test_a_compliant_turn_is_used_as_the_llm_worded_it() -> None:
    """A reply that keeps the contract reaches the user in the LLM's words; nothing replaced."""
    guard, seen = guarded(llm=Reworded())
    turn = guard.generate_questions("Add OAuth login", CONFIG)
    assert "LLM: Which authentication approach?" == turn.questions[0].question
    assert [] == seen


def test_a_reply_without_the_other_companion_is_completed_not_rejected() -> None:
    """Preflights' tool schema cannot send the __other companion: the guard adds the engine's."""
    guard, seen = guarded(llm=Reworded(drop_companions=True))
    turn = guard.generate_questions("Add OAuth login", CONFIG)
    assert ["auth_strategy", "auth_strategy__other"] == [q.id for q in turn.questions]
    assert "auth_strategy" == turn.questions[1].depends_on_question_id
    assert [] == seen


def test_preflights_mock_four_questions_are_replaced_by_the_engines_turn() -> None:
    """Preflights' mock asks four questions, two fields: the engine's one field is shown."""
    guard, seen = guarded(llm=PreflightsMock())
    turn = guard.generate_questions("Add OAuth login", CONFIG)
    assert ["auth_strategy", "auth_strategy__other"] == [q.id for q in turn.questions]
    assert ["contract"] == [r.reason for r in seen]
    assert "C3-budget" in seen[0].detail


# Each fault, and the reason a replacement names for it (a slow reply misses the deadline).
REASON_OF_FAULT = {fault: fault for fault in FAULTS} | {"slow": "deadline"}


@pytest.mark.parametrize(("fault", "reason"), REASON_OF_FAULT.items())
def test_each_fault_on_a_turn_gives_the_engines_turn_and_names_the_reason(
    fault: str, reason: str
) -> None:
    """Whatever goes wrong with the LLM, the user gets the engine's turn and one reason."""
    guard, seen = guarded({fault: 1.0})
    turn = guard.generate_questions("Improve the checkout flow", CONFIG)
    assert ["change_category", "change_category__other"] == [q.id for q in turn.questions]
    assert [("generate_questions", reason)] == [(r.operation, r.reason) for r in seen]


def test_a_reply_slower_than_the_deadline_is_not_waited_for() -> None:
    """An LLM that never answers: the guard answers with the engine's turn at the deadline."""
    release = threading.Event()

    class Hanging:
        provider = "hanging"

        def generate_questions(self, *args: Any, **kwargs: Any) -> Any:
            release.wait(30)
            return None

    seen: list[Replacement] = []
    guard = GuardedLLMAdapter(Hanging(), deadline=0.05, on_replacement=seen.append)
    try:
        turn = guard.generate_questions("Add OAuth login", CONFIG)
    finally:
        release.set()
    assert ["auth_strategy", "auth_strategy__other"] == [q.id for q in turn.questions]
    assert ["deadline"] == [r.reason for r in seen]


# -- patches --------------------------------------------------------------------------------------


def test_a_patch_equal_to_the_engines_is_used() -> None:
    """The LLM's patch of exactly the answers given is returned; nothing replaced."""
    guard, seen = guarded()
    patch = guard.extract_decision_patch("Add OAuth login", {"auth_strategy": "Magic Link"}, CONFIG)
    assert patch is not None
    assert ("Authentication", (("Strategy", "Magic Link"),)) == (patch.category, patch.fields)
    assert [] == seen


@pytest.mark.parametrize("seed", range(3))
def test_a_patch_with_an_invented_value_is_replaced(seed: int) -> None:
    """An invented field, a TBD value or another category: the engine's patch instead."""
    guard, seen = guarded({"contract": 1.0}, seed=seed)
    patch = guard.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, CONFIG)
    assert patch is not None
    assert ("Authentication", (("Strategy", "OAuth"),)) == (patch.category, patch.fields)
    assert ["contract"] == [r.reason for r in seen]


@pytest.mark.parametrize(("fault", "reason"), REASON_OF_FAULT.items())
def test_each_fault_on_a_patch_gives_the_engines_patch_and_names_the_reason(
    fault: str, reason: str
) -> None:
    """Preflights would fail the session (exit 2, or PATCH_EXTRACTION_FAILED): the guard goes on."""
    guard, seen = guarded({fault: 1.0})
    patch = guard.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, CONFIG)
    assert patch is not None
    assert (("Strategy", "OAuth"),) == patch.fields
    assert [("extract_decision_patch", reason)] == [(r.operation, r.reason) for r in seen]


class Respelled(Reworded):
    """A compliant LLM whose patch is the engine's decision spelled loosely: names in lower case,
    a tab after the value, and a reference of its own."""

    def extract_decision_patch(self, *args: Any, **kwargs: Any) -> Any:
        patch = self._engine.extract_decision_patch(*args, **kwargs)
        assert patch is not None  # the test's answers decide
        return dataclasses.replace(
            patch,
            category=patch.category.lower(),
            fields=tuple((k.lower(), f"{v}\t") for k, v in patch.fields),
            references=(("strategy", "ADR-7"),),
        )


def test_a_patch_agreeing_with_the_engines_is_written_in_the_engines_words() -> None:
    """The same decision spelled loosely is kept (nothing replaced), but what reaches the
    decision files is the engine's category and fields; the LLM's references stay."""
    guard, seen = guarded(llm=Respelled())
    patch = guard.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, CONFIG)
    assert patch is not None
    assert ("Authentication", (("Strategy", "OAuth"),), (("strategy", "ADR-7"),)) == (
        patch.category,
        patch.fields,
        patch.references,
    )
    assert [] == seen


def test_no_patch_where_the_engine_has_one_is_replaced() -> None:
    """A None (PATCH_EXTRACTION_FAILED in Preflights) where the answers decide is replaced."""
    engine = FsmLLMAdapter(force_extraction_failure=True)
    guard, seen = guarded(llm=engine)
    patch = guard.extract_decision_patch("Add OAuth login", {"auth_strategy": "OAuth"}, CONFIG)
    assert patch is not None
    assert ["contract"] == [r.reason for r in seen]


# -- the option texts an LLM shows --------------------------------------------------------------


def test_an_option_in_the_llms_words_reaches_the_engine_as_the_flows() -> None:
    """The user picks "Use MySQL"; the engine receives MySQL, the patch holds MySQL."""
    guard, seen = guarded(llm=Reworded(reword_options=True))
    first = guard.generate_questions("Store profiles in a database", CONFIG)
    assert "Use MySQL" in (first.questions[0].options or ())
    patch = guard.extract_decision_patch(
        "Store profiles in a database", {"db_type": "Use MySQL"}, CONFIG
    )
    assert patch is not None
    assert (("Type", "MySQL"),) == patch.fields
    assert [] == seen


def test_options_naming_none_of_the_flows_are_a_breach() -> None:
    """An option that names no option of the flow ("Redis") is not shown: engine's turn."""

    class Inventive(Reworded):
        def generate_questions(self, *args: Any, **kwargs: Any) -> PfLLMResponse:
            reply = super().generate_questions(*args, **kwargs)
            first = reply.questions[0]
            options = ("Redis", *(first.options or ())[1:])
            return dataclasses.replace(
                reply, questions=(dataclasses.replace(first, options=options), *reply.questions[1:])
            )

    guard, seen = guarded(llm=Inventive())
    turn = guard.generate_questions("Store profiles in a database", CONFIG)
    assert "PostgreSQL" == (turn.questions[0].options or ())[0]
    assert "names none" in seen[0].detail


# -- the deadline ---------------------------------------------------------------------------------


def test_the_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """PREFLIGHT_FSM_LLM_DEADLINE sets it; an explicit value wins; 10 s otherwise."""
    monkeypatch.setenv(DEADLINE_ENV, "0.5")
    assert (0.5, 3.0) == (deadline_from(), deadline_from("3"))
    monkeypatch.delenv(DEADLINE_ENV)
    assert 10.0 == deadline_from()


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_a_deadline_that_is_no_positive_number_is_refused(value: str) -> None:
    """The error says what to send."""
    with pytest.raises(ValueError, match="positive number of seconds"):
        deadline_from(value)


# -- in Preflights' application ------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a file, so Preflights' core derives an allowlist."""
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    (tmp_path / "src" / "db").mkdir(parents=True)
    (tmp_path / "src" / "db" / "models.py").write_text("")
    return tmp_path


def app_on(
    guard: GuardedLLMAdapter, repo: Path, app_class: type[PreflightsApp] = FsmPreflightsApp
) -> Any:
    """``app_class`` (the engine's application by default, or Preflights' own) on ``guard``."""
    return app_class(
        session_adapter=InMemorySessionAdapter(),
        llm_adapter=guard,
        filesystem_adapter=IsolatedFilesystemAdapter(repo),
        uid_provider=SequentialUIDProvider(),
        clock_provider=FixedClockProvider(),
        file_context_builder=SimpleFileContextBuilder(),
        config_loader=DefaultConfigLoader(),
    )


def test_the_app_asks_the_llm_at_every_turn_of_the_hybrid_flow(repo: Path) -> None:
    """Category, then field: both turns are the LLM's (its words), then its patch."""
    llm = Reworded(reword_options=True)
    guard = GuardedLLMAdapter(llm, deadline=5)
    app = app_on(guard, repo)
    start = app.start_preflight("Improve the checkout flow", str(repo))
    second = app.continue_preflight(start.session_id, {"change_category": "Use Database"})
    done = app.continue_preflight(start.session_id, {"db_type": "Use MySQL"})
    assert start.questions[0].question.startswith("LLM: ")
    assert second.questions is not None
    assert "LLM: Which database type?" == second.questions[0].question
    assert "completed" == done.status, done.error
    assert done.artifacts is not None
    task = (repo / done.artifacts.task_path).read_text()
    assert "Decision: Database - Type=MySQL" in task
    assert [] == list(guard.replacements)


def test_an_app_session_under_faults_writes_exactly_the_users_choice(repo: Path) -> None:
    """Every call fails or breaks the contract: the session still ends with the user's choice."""
    guard, seen = guarded({"rate_limit": 0.3, "contract": 0.4, "slow": 0.3}, seed=3)
    app = app_on(guard, repo)
    start = app.start_preflight("Improve the checkout flow", str(repo))
    app.continue_preflight(start.session_id, {"change_category": OTHER})
    app.continue_preflight(start.session_id, {"change_category__other": "Database"})
    done = app.continue_preflight(start.session_id, {"db_type": "PostgreSQL"})
    assert "completed" == done.status, done.error
    assert done.artifacts is not None
    assert "Decision: Database - Type=PostgreSQL" in (repo / done.artifacts.task_path).read_text()
    assert len(seen) >= 4


def test_preflights_own_application_can_run_any_adapter_under_the_guard(repo: Path) -> None:
    """Preflights' PreflightsApp with its mock guarded: one field asked, nothing invented."""
    guard, seen = guarded(llm=PreflightsMock())
    app = app_on(guard, repo, PreflightsApp)
    start = app.start_preflight("Store profiles in a database", str(repo))
    done = app.continue_preflight(start.session_id, {"db_type": "MySQL"})
    assert ["db_type", "db_type__other"] == [q.id for q in start.questions]
    assert "completed" == done.status, done.error
    assert done.artifacts is not None
    task = (repo / done.artifacts.task_path).read_text()
    assert "Decision: Database - Type=MySQL" in task
    assert "Prisma" not in task  # Preflights' mock invents ORM=Prisma; the guard replaced it
    assert ["contract", "contract"] == [r.reason for r in seen]
