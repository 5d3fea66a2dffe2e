"""FsmLLMAdapter and FsmSession against the real ``preflights==1.1.4`` package.

PreflightsApp is wired as Preflights' own tests wire it (in-memory sessions, an isolated
filesystem, sequential uids, a fixed clock) in a temporary git repository.
"""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

preflights = pytest.importorskip("preflights")

from preflights.adapters.default_config import DefaultConfigLoader  # noqa: E402
from preflights.adapters.fixed_clock import FixedClockProvider  # noqa: E402
from preflights.adapters.in_memory_session import InMemorySessionAdapter  # noqa: E402
from preflights.adapters.isolated_filesystem import IsolatedFilesystemAdapter  # noqa: E402
from preflights.adapters.sequential_uid import SequentialUIDProvider  # noqa: E402
from preflights.adapters.simple_file_context import SimpleFileContextBuilder  # noqa: E402
from preflights.application.ports.llm import LLMPort  # noqa: E402
from preflights.application.preflights_app import PreflightsApp  # noqa: E402
from preflights.application.types import (  # noqa: E402
    AppErrorCode,
    LLMResponse,
    Question,
    SessionSnapshot,
)
from preflights.core.process import process  # noqa: E402
from preflights.core.types import (  # noqa: E402
    Completed,
    DecisionPatch,
    FileContext,
    HeuristicsConfig,
    Intention,
    ReadyToBuild,
    SnapshotSchema,
    default_v1_heuristics,
)

from preflight_fsm.contract import check_decision_patch, check_llm_response  # noqa: E402
from preflight_fsm.integrations.preflights import (  # noqa: E402
    AnsweredSnapshot,
    FsmLLMAdapter,
    FsmSession,
    from_preflights_patch,
    from_preflights_question,
    from_preflights_response,
    to_preflights_question,
)
from preflight_fsm.integrations.preflights.application import FsmPreflightsApp  # noqa: E402
from preflight_fsm.turn import Question as OurQuestion  # noqa: E402

OTHER = "Other (specify)"
# The answers each of Preflights' APIs takes (its port's type, its app's type).
PortAnswers = dict[str, str | tuple[str, ...]]
AppAnswers = dict[str, str | list[str]]
# Files whose directories Preflights' core derives an allowlist from, one per category.
REPO_FILES = (
    "src/auth/login.py",
    "src/db/models.py",
    "src/components/button.tsx",
    "src/api/routes.py",
    "infra/deploy.yml",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A temporary git repository with a file for each category."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "--quiet", str(root)], check=True)
    for name in REPO_FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# placeholder module\n")
    return root


def make_app(repo: Path, llm: Any, app_class: type[PreflightsApp] = PreflightsApp) -> PreflightsApp:
    """PreflightsApp wired as Preflights' own tests wire it, with ``llm`` as its LLM port."""
    return app_class(
        session_adapter=InMemorySessionAdapter(),
        llm_adapter=llm,
        filesystem_adapter=IsolatedFilesystemAdapter(repo),
        uid_provider=SequentialUIDProvider(),
        clock_provider=FixedClockProvider(),
        file_context_builder=SimpleFileContextBuilder(),
        config_loader=DefaultConfigLoader(),
    )


def ids(questions: Any) -> list[str]:
    return [q.id for q in questions or ()]


# -- the port itself ----------------------------------------------------------------------------


def test_adapter_satisfies_llm_port() -> None:
    """FsmLLMAdapter is constructible without arguments and typed as Preflights' LLMPort."""
    port: LLMPort = FsmLLMAdapter()
    assert "preflight-fsm" == port.provider  # type: ignore[attr-defined]


@pytest.mark.parametrize("method", ["generate_questions", "extract_decision_patch"])
def test_adapter_signatures_match_the_port(method: str) -> None:
    """Each port method has LLMPort's parameters: names, kinds and defaults."""

    def shape(function: Any) -> list[tuple[str, Any, Any]]:
        parameters = inspect.signature(function).parameters.values()
        return [(p.name, p.kind, p.default) for p in parameters]

    assert shape(getattr(LLMPort, method)) == shape(getattr(FsmLLMAdapter, method))


def test_adapter_returns_preflights_dataclasses() -> None:
    """generate_questions and extract_decision_patch return Preflights' own dataclasses."""
    adapter, config = FsmLLMAdapter(), default_v1_heuristics()
    response = adapter.generate_questions("Add login to the admin dashboard", config)
    patch = adapter.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config)
    assert type(response) is LLMResponse
    assert {Question} == {type(q) for q in response.questions}
    assert type(patch) is DecisionPatch


def test_adapter_ignores_answers_it_does_not_know() -> None:
    """Answers to ids the flow does not know (core questions, other tools) change nothing."""
    adapter, config = FsmLLMAdapter(), default_v1_heuristics()
    answers: PortAnswers = {
        "auth_strategy": "OAuth",
        "allowlist_paths": "src/",
        "acceptance_criteria": "ok",
    }
    expected = adapter.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config)
    assert expected == adapter.extract_decision_patch("Add login", answers, config)


def test_adapter_returns_none_for_a_patch_outside_the_schema() -> None:
    """A patch whose field heuristics_config.schema lacks becomes None."""
    schema = SnapshotSchema(categories=(("Authentication", ("Library",)),))
    config = dataclasses.replace(default_v1_heuristics(), schema=schema)
    patch = FsmLLMAdapter().extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config)
    assert patch is None


def test_adapter_accepts_preflights_wildcard_schema() -> None:
    """Preflights' "Other": ("*",) admits the Other patch, as Preflights' core validates it."""
    answers: PortAnswers = {"change_category": OTHER, "change_category__other": "Payments"}
    patch = FsmLLMAdapter().extract_decision_patch(
        "Improve the checkout flow", answers, default_v1_heuristics()
    )
    assert DecisionPatch("Other", (("Description", "Improve the checkout flow"),)) == patch


def test_adapter_honours_a_session_state_with_answers() -> None:
    """A snapshot carrying the answers' values gets the next turn, not turn 1 again."""
    state = AnsweredSnapshot(
        intention="Improve the checkout flow",
        asked_questions=("change_category", "change_category__other"),
        answered_questions=("change_category",),
        missing_info=("change_category",),
        answers=(("change_category", "Database"),),
    )
    response = FsmLLMAdapter().generate_questions(
        "Improve the checkout flow", default_v1_heuristics(), session_state=state
    )
    assert ["db_type", "db_type__other"] == ids(response.questions)
    assert (("db_type",), 0.5) == (response.missing_info, response.progress)


def test_adapter_honours_preflights_four_field_session_state() -> None:
    """Preflights' own snapshot gives the position it names (C9): here NeedOther for the field."""
    state = SessionSnapshot(
        intention="Add login to the admin dashboard",
        asked_questions=("auth_strategy", "auth_strategy__other"),
        answered_questions=("auth_strategy",),
        missing_info=("auth_strategy",),
    )
    response = FsmLLMAdapter().generate_questions(
        state.intention, default_v1_heuristics(), session_state=state
    )
    assert ["auth_strategy__other"] == ids(response.questions)
    assert [] == check_llm_response(response, session_state=state)


def test_set_questions_overrides_and_clear_restores() -> None:
    """set_questions answers with the given questions until clear_questions_override."""
    adapter, config = FsmLLMAdapter(), default_v1_heuristics()
    question = Question(id="scope", type="free_text", question="What scope?")
    adapter.set_questions([question])
    overridden = adapter.generate_questions("Add login", config)
    adapter.clear_questions_override()
    assert ((question,), ("scope",), "unsure") == (
        overridden.questions,
        overridden.missing_info,
        overridden.decision_hint,
    )
    assert ["auth_strategy", "auth_strategy__other"] == ids(
        adapter.generate_questions("Add login", config).questions
    )


def test_set_questions_keeps_progress_contract() -> None:
    """An empty override reports progress 1.0 (Preflights' mock reports 0.5, breaking C7)."""
    adapter = FsmLLMAdapter()
    adapter.set_questions([])
    assert [] == check_llm_response(adapter.generate_questions("x y", default_v1_heuristics()))


@pytest.mark.parametrize(
    ("adapter", "expected"),
    [
        (FsmLLMAdapter(force_extraction_failure=True), None),
        (
            FsmLLMAdapter(force_invalid_patch=True),
            DecisionPatch("InvalidCategory", (("Field", "Value"),)),
        ),
    ],
    ids=["extraction-failure", "invalid-patch"],
)
def test_forced_patch_outcomes_mirror_preflights_mock(
    adapter: FsmLLMAdapter, expected: Any
) -> None:
    """The constructor switches force the same outcomes as Preflights' MockLLMAdapter."""
    config = default_v1_heuristics()
    assert expected == adapter.extract_decision_patch(
        "Add login", {"auth_strategy": "OAuth"}, config
    )


def test_force_switches_can_be_flipped_on_an_instance() -> None:
    """force_extraction_failure() and force_invalid_patch(False) switch behaviour after creation."""
    adapter, config = FsmLLMAdapter(force_invalid_patch=True), default_v1_heuristics()
    adapter.force_invalid_patch(False)
    assert adapter.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config)
    adapter.force_extraction_failure()
    assert adapter.extract_decision_patch("Add login", {"auth_strategy": "OAuth"}, config) is None


def test_is_fallback_is_what_preflights_reads() -> None:
    """is_fallback mirrors the _is_fallback flag that Preflights' factory and app read."""
    adapter = FsmLLMAdapter()
    assert (False, False) == (adapter.is_fallback, adapter._is_fallback)
    adapter._is_fallback = True
    assert adapter.is_fallback


def test_questions_convert_both_ways_by_field_name() -> None:
    """Our Question and Preflights' Question convert into each other without loss."""
    ours = OurQuestion(id="q", type="single_choice", question="Which?", options=("a", OTHER))
    assert ours == from_preflights_question(to_preflights_question(ours))


# -- PreflightsApp, end to end ------------------------------------------------------------------

KEYWORD_CASES = [
    ("Authentication", "Add login to the admin dashboard", {"auth_strategy": "Magic Link"}),
    ("Database", "Store user profiles in a database", {"db_type": "PostgreSQL"}),
    ("Frontend", "Build a frontend settings page", {"frontend_framework": "Svelte"}),
    ("Backend", "Expose an endpoint for invoices", {"backend_api_style": "GraphQL"}),
    ("Infra", "Deploy the worker with Docker", {"infra_hosting": "Serverless"}),
]


@pytest.mark.parametrize(
    ("category", "intention", "answers"), KEYWORD_CASES, ids=[c[0] for c in KEYWORD_CASES]
)
def test_keyword_intention_completes_with_an_adr(
    repo: Path, category: str, intention: str, answers: dict[str, str]
) -> None:
    """A keyword intention asks its field once, then completes with an ADR recording it."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight(intention, str(repo))
    (qid,) = answers
    assert [qid, f"{qid}__other"] == ids(start.questions)
    sent: AppAnswers = dict(answers)
    result = app.continue_preflight(start.session_id, sent)
    assert "completed" == result.status, result.error
    assert result.artifacts is not None
    assert result.artifacts.adr_path is not None
    adr = (repo / result.artifacts.adr_path).read_text()
    assert category in adr
    assert answers[qid] in adr


def test_other_specify_path_completes_with_the_users_text(repo: Path) -> None:
    """ "Other (specify)" with its text completes, the ADR holding the text, not the option."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Add login to the admin dashboard", str(repo))
    answers: AppAnswers = {"auth_strategy": OTHER, "auth_strategy__other": "Passkeys"}
    result = app.continue_preflight(start.session_id, answers)
    assert "completed" == result.status, result.error
    assert result.artifacts is not None
    assert result.artifacts.adr_path is not None
    adr = (repo / result.artifacts.adr_path).read_text()
    assert "Passkeys" in adr
    assert OTHER not in adr


def test_other_specify_without_text_is_asked_by_preflights_then_completes(repo: Path) -> None:
    """Preflights itself asks for the owed __other text, then the session completes."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Add login to the admin dashboard", str(repo))
    first = app.continue_preflight(start.session_id, {"auth_strategy": OTHER})
    assert ("needs_more_answers", ["auth_strategy__other"]) == (first.status, ids(first.questions))
    result = app.continue_preflight(start.session_id, {"auth_strategy__other": "Passkeys"})
    assert "completed" == result.status, result.error


def test_intent_prefilled_answer_is_used(repo: Path) -> None:
    """An answer Preflights prefills from the intention ("OAuth") completes the session."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Add OAuth login", str(repo))
    assert ["auth_strategy__other"] == ids(start.questions)
    result = app.continue_preflight(start.session_id, {})
    assert "completed" == result.status, result.error


def test_intention_without_keywords_asks_the_category(repo: Path) -> None:
    """Without keywords, turn 1 is the category question and nothing else (C4)."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Improve the checkout flow", str(repo))
    assert ["change_category", "change_category__other"] == ids(start.questions)


def test_intention_without_keywords_completes_through_a_custom_category(repo: Path) -> None:
    """A custom category completes as Other; the core's own questions are ignored by the port."""
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Improve the checkout flow", str(repo))
    answers: AppAnswers = {"change_category": OTHER, "change_category__other": "Payments"}
    first = app.continue_preflight(start.session_id, answers)
    # Preflights' core cannot derive an allowlist for Other, so it asks its own questions;
    # the adapter then sees their answers too and ignores them.
    assert ("needs_clarification", ["allowlist_paths", "acceptance_criteria"]) == (
        first.status,
        ids(first.questions),
    )
    core_answers: AppAnswers = {
        "allowlist_paths": "src/checkout/",
        "acceptance_criteria": "Checkout works",
    }
    result = app.continue_preflight(start.session_id, core_answers)
    assert "completed" == result.status, result.error


def test_preflights_blocks_the_hybrid_flow(repo: Path) -> None:
    """Known category on turn 1 ends in PATCH_EXTRACTION_FAILED: Preflights never asks turn 2.

    PreflightsApp calls generate_questions only in start_preflight; once turn 1 is answered it
    asks extract_decision_patch, which is None until the field is known, and reports failure.
    """
    app = make_app(repo, FsmLLMAdapter())
    start = app.start_preflight("Improve the checkout flow", str(repo))
    result = app.continue_preflight(start.session_id, {"change_category": "Database"})
    assert result.error is not None
    assert ("error", AppErrorCode.PATCH_EXTRACTION_FAILED) == (result.status, result.error.code)


# -- the minimal change Preflights would need, shipped as FsmPreflightsApp ----------------------


def test_minimal_change_runs_the_full_hybrid_flow(repo: Path) -> None:
    """With the minimal change, category then field completes with an ADR (spec §3)."""
    app = make_app(repo, FsmLLMAdapter(), FsmPreflightsApp)
    start = app.start_preflight("Choose the storage architecture for invoices", str(repo))
    assert ["change_category", "change_category__other"] == ids(start.questions)
    second = app.continue_preflight(start.session_id, {"change_category": "Database"})
    assert ("needs_more_answers", ["db_type", "db_type__other"]) == (
        second.status,
        ids(second.questions),
    )
    result = app.continue_preflight(start.session_id, {"db_type": "MySQL"})
    assert "completed" == result.status, result.error
    assert result.artifacts is not None
    assert result.artifacts.adr_path is not None
    assert "MySQL" in (repo / result.artifacts.adr_path).read_text()


# -- the step loop with Preflights' types -------------------------------------------------------


def core_loop(intention: str, replies: list[dict[str, str]]) -> tuple[Any, list[LLMResponse]]:
    """What a Preflights core would run: step the machine turn by turn, then call Core."""
    session = FsmSession(intention)
    shown = [session.response]
    for reply in replies:
        if session.finished:
            break
        shown.append(session.step(reply))
    config: HeuristicsConfig = default_v1_heuristics()
    context = FileContext(paths=REPO_FILES)
    kwargs: dict[str, Any] = {
        "intention": Intention(text=intention),
        "current_architecture": None,
        "file_context": context,
        "conversation_state": None,
        "heuristics_config": config,
        "decision_patch": session.patch,
    }
    ready = process(**kwargs)
    assert isinstance(ready, ReadyToBuild)
    uid_adr = "20250106T120000.000Z-A000" if ready.needs_adr else None
    done = process(
        **kwargs,
        uid_for_adr=uid_adr,
        uid_for_task="20250106T120000.001Z-A000",
        now_utc="2025-01-06T11:00:00Z",
    )
    return done, shown


def test_core_loop_drives_step_with_preflights_types() -> None:
    """The step loop asks category, then field, and Preflights' Core builds the ADR from it."""
    done, shown = core_loop(
        "Choose the storage architecture for invoices",
        [{"change_category": "Database"}, {"db_type": OTHER, "db_type__other": "CockroachDB"}],
    )
    assert [["change_category", "change_category__other"], ["db_type", "db_type__other"], []] == [
        ids(r.questions) for r in shown
    ]
    assert all(type(r) is LLMResponse and not check_llm_response(r) for r in shown)
    assert isinstance(done, Completed)
    assert done.adr is not None
    assert "Database" == done.adr.category
    assert "- Type: CockroachDB" in done.adr.decision


def test_step_loop_snapshot_is_preflights_session_snapshot() -> None:
    """FsmSession.session_state is Preflights' SessionSnapshot of the current position."""
    session = FsmSession("Improve the checkout flow")
    session.step({"change_category": "Backend"})
    assert (
        SessionSnapshot(
            intention="Improve the checkout flow",
            asked_questions=(
                "change_category",
                "change_category__other",
                "backend_api_style",
                "backend_api_style__other",
            ),
            answered_questions=("change_category",),
            missing_info=("backend_api_style",),
        )
        == session.session_state
    )


def test_step_loop_restores_from_our_snapshot() -> None:
    """A session restored from its snapshot answers the next step as the original would."""
    session = FsmSession("Improve the checkout flow")
    session.step({"change_category": OTHER})
    again = FsmSession.restore(session.machine.snapshot().model_dump_json())
    assert session.step({"change_category__other": "Payments"}) == again.step(
        {"change_category__other": "Payments"}
    )


def test_response_and_patch_convert_back_to_ours() -> None:
    """Preflights' LLMResponse and DecisionPatch convert back to our validated models."""
    session = FsmSession("Add login to the admin dashboard")
    response = from_preflights_response(session.response)
    session.step({"auth_strategy": "OAuth"})
    assert session.patch is not None
    patch = from_preflights_patch(session.patch)
    assert session.machine.turn.patch == patch
    assert ("auth_strategy",) == response.missing_info
    assert [] == check_decision_patch(patch, default_v1_heuristics())


# -- never raising where Preflights' port does not -----------------------------------------------


@pytest.mark.parametrize(
    ("intention", "expected"),
    [
        ("TBD", ["change_category", "change_category__other"]),
        ("", ["change_category", "change_category__other"]),
        ("Add login\n\nContext: " + "The admin. " * 200, ["auth_strategy", "auth_strategy__other"]),
        ("Add login \u202e now", ["auth_strategy", "auth_strategy__other"]),
    ],
    ids=["placeholder", "empty", "over-2000-with-context", "bidi-control"],
)
def test_an_intention_the_engine_refuses_still_gets_a_turn(
    intention: str, expected: list[str]
) -> None:
    """generate_questions answers any intention: the closest text the engine takes decides."""
    response = FsmLLMAdapter().generate_questions(intention, default_v1_heuristics())
    assert expected == ids(response.questions)


CONFIG = default_v1_heuristics()


def test_an_other_text_over_the_limit_is_none_with_the_reason_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 600-character Other text gives None, and the log says the engine refused it."""
    answers: PortAnswers = {"auth_strategy": OTHER, "auth_strategy__other": "x" * 600}
    with caplog.at_level("INFO", logger="preflight_fsm.integrations.preflights"):
        patch = FsmLLMAdapter().extract_decision_patch("Add login", answers, CONFIG)
    assert patch is None
    assert "answers refused" in caplog.text


def test_debug_llm_writes_the_engines_structured_feedback(tmp_path: Path) -> None:
    """debug_llm=True writes the engine's feedback where Preflights writes an LLM's prompt."""
    answers: PortAnswers = {"auth_strategy": OTHER, "auth_strategy__other": "x" * 600}
    FsmLLMAdapter().extract_decision_patch(
        "Add login", answers, default_v1_heuristics(), debug_llm=True, repo_path=str(tmp_path)
    )
    debug = (tmp_path / ".preflights" / "debug" / "last_llm_prompt.md").read_text()
    assert '"result": "validation_failed"' in debug
    assert "auth_strategy__other" in debug


def test_a_session_state_with_refused_answers_gets_turn_one() -> None:
    """A snapshot whose answers the engine refuses gives the first turn, not an exception."""
    state = AnsweredSnapshot(
        intention="Add login",
        asked_questions=(),
        answered_questions=(),
        missing_info=(),
        answers=(("auth_strategy", "x" * 600),),
    )
    response = FsmLLMAdapter().generate_questions(
        "Add login", default_v1_heuristics(), session_state=state
    )
    assert ["auth_strategy", "auth_strategy__other"] == ids(response.questions)


@given(
    st.text(max_size=2500), st.dictionaries(st.text(max_size=30), st.text(max_size=600), max_size=5)
)
def test_the_adapter_never_raises(intention: str, answers: dict[str, str]) -> None:
    """generate_questions and extract_decision_patch take any text without an exception."""
    adapter, config = FsmLLMAdapter(), default_v1_heuristics()
    adapter.generate_questions(intention, config)
    adapter.extract_decision_patch(intention, dict(answers), config)
