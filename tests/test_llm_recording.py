"""A provider's exchanges recorded to JSONL and replayed with no network; each error its own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import installed

pytest.importorskip("preflights")

from preflights.core.types import default_v1_heuristics

from llm_server import llm_server
from preflight_fsm.llm import GuardedLLMAdapter, Replacement
from preflight_fsm.llm.providers import provider_adapter
from preflight_fsm.llm.recording import (
    PromptNotRecorded,
    RecordingError,
    RecordingLLMAdapter,
    RecordingMissing,
    RecordingUnreadable,
    ReplayLLMAdapter,
    prompt_hash,
)

installed.require("anthropic")

CONFIG = default_v1_heuristics()
INTENTION = "Improve the checkout flow"
ANSWERS: dict[str, str | tuple[str, ...]] = {"change_category": "Database", "db_type": "MySQL"}


@pytest.fixture
def recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, object, object]:
    """A turn and a patch recorded from Preflights' Anthropic adapter; the live replies."""
    path = tmp_path / "exchanges.jsonl"
    with llm_server() as server:
        for name, value in server.env("anthropic").items():
            monkeypatch.setenv(name, value)
        recorder = RecordingLLMAdapter(provider_adapter("anthropic", deadline=2), path)
        turn = recorder.generate_questions(INTENTION, CONFIG)
        patch = recorder.extract_decision_patch(INTENTION, ANSWERS, CONFIG)
    return path, turn, patch


def test_each_exchange_is_one_line_keyed_by_the_prompts_hash(
    recording: tuple[Path, object, object],
) -> None:
    """prompt_hash, the completion as returned, meta with the model and a prompt preview."""
    path, _, _ = recording
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert 2 == len(records)
    first = records[0]
    assert {"prompt_hash", "completion", "meta"} == set(first)
    assert "change_category" == json.loads(first["completion"])["questions"][0]["id"]
    assert "anthropic-test-model" == first["meta"]["model"]
    assert first["meta"]["prompt_preview"].startswith(f"User intention: {INTENTION}")


def test_a_replay_answers_as_the_provider_did_with_no_server(
    recording: tuple[Path, object, object],
) -> None:
    """The server is gone; the replay gives the same turn and patch."""
    path, turn, patch = recording
    replay = ReplayLLMAdapter(path)
    assert turn == replay.generate_questions(INTENTION, CONFIG)
    assert patch == replay.extract_decision_patch(INTENTION, ANSWERS, CONFIG)


def test_a_missing_recording_says_how_to_make_one(tmp_path: Path) -> None:
    """Its own error, naming the file and the commands that record."""
    with pytest.raises(RecordingMissing, match=r"no recording at .*--llm-record"):
        ReplayLLMAdapter(tmp_path / "none.jsonl")


def test_a_recording_over_the_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording is read with a limit (/dev/zero, a runaway file): its own error, no memory
    exhausted."""
    from preflight_fsm.llm import recording as recording_module

    monkeypatch.setattr(recording_module, "MAX_RECORDING_BYTES", 10)
    path = tmp_path / "exchanges.jsonl"
    path.write_text('{"prompt_hash": "abc", "completion": "{}"}\n')
    with pytest.raises(RecordingMissing, match="larger than 10 bytes"):
        ReplayLLMAdapter(path)


def test_a_bad_line_is_named_by_its_number(recording: tuple[Path, object, object]) -> None:
    """Line 3 is not JSON: the error says bad line 3 and what a line holds."""
    path, _, _ = recording
    path.write_text(path.read_text() + '{"prompt_hash": "abc", oops\n')
    with pytest.raises(RecordingUnreadable, match="bad line 3") as caught:
        ReplayLLMAdapter(path)
    assert 3 == caught.value.line


def test_a_line_without_a_completion_is_a_bad_line(tmp_path: Path) -> None:
    """JSON, but not a recorded exchange."""
    path = tmp_path / "exchanges.jsonl"
    path.write_text('{"prompt_hash": "abc"}\n')
    with pytest.raises(RecordingUnreadable, match=r"bad line 1: .*completion"):
        ReplayLLMAdapter(path)


def test_an_unrecorded_prompt_says_to_record_it(recording: tuple[Path, object, object]) -> None:
    """Another intention: its own error, with the prompt's preview."""
    path, _, _ = recording
    with pytest.raises(PromptNotRecorded, match=r"holds no completion .*Add OAuth login"):
        ReplayLLMAdapter(path).generate_questions("Add OAuth login", CONFIG)


def test_under_the_guard_an_unrecorded_prompt_is_the_engines_turn(
    recording: tuple[Path, object, object],
) -> None:
    """A replay missing a prompt is a provider error to the guard: the session goes on."""
    path, _, _ = recording
    seen: list[Replacement] = []
    guard = GuardedLLMAdapter(ReplayLLMAdapter(path), deadline=2, on_replacement=seen.append)
    turn = guard.generate_questions("Add OAuth login", CONFIG)
    assert "auth_strategy" == turn.questions[0].id
    assert ["provider_error"] == [r.reason for r in seen]


def test_the_hash_is_sha256_of_the_prompt_with_newlines_normalised() -> None:
    """CRLF and CR hash as LF."""
    expected = hashlib.sha256(b"line one\nline two").hexdigest()
    assert [expected] * 3 == [
        prompt_hash("line one\nline two"),
        prompt_hash("line one\r\nline two"),
        prompt_hash("line one\rline two"),
    ]


def test_a_recording_that_cannot_be_written_is_refused_at_once(tmp_path: Path) -> None:
    """Before any exchange: the error names the path and asks for a writable one."""
    pytest.importorskip("anthropic")
    adapter = provider_adapter("anthropic", deadline=1, environ={"ANTHROPIC_API_KEY": "k"})
    with pytest.raises(RecordingError, match="send a writable path"):
        RecordingLLMAdapter(adapter, tmp_path / "missing" / "dir" / "run.jsonl")
