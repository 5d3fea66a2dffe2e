"""Preflights sessions kept between processes: pf's files and preflight-fsm's stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("preflights")

from preflights.adapters.file_session import FileSessionAdapter
from preflights.application.types import Question, Session

from preflight_fsm.errors import SessionConflict
from preflight_fsm.integrations.preflights.sessions import (
    KEY_PREFIX,
    FsmFileSessionAdapter,
    StoreSessionAdapter,
    record_round,
    recorded_rounds,
)
from preflight_fsm.store import MemoryStore


def session(session_id: str = "s-1") -> Session:
    """A session whose strategy Preflights pre-filled from the intention."""
    return Session(
        id=session_id,
        repo_path="/repo",
        intention="Add OAuth login",
        created_at=1.0,
        expires_at=10.0**10,
        asked_questions=(
            Question(
                id="auth_strategy__other",
                type="free_text",
                question="?",
                optional=True,
                depends_on_question_id="auth_strategy",
                depends_on_value="Other (specify)",
            ),
        ),
        prefilled_answers={"auth_strategy": "OAuth", "scopes": ("a", "b")},
        detected_from_intent=(("Authentication approach", "OAuth"),),
    )


def test_preflights_own_file_sessions_drop_pre_filled_answers(tmp_path: Path) -> None:
    """The bug kept out: Preflights' FileSessionAdapter loses the pre-filled answers."""
    adapter = FileSessionAdapter(tmp_path)
    adapter.create(session())
    restored = adapter.get("s-1")
    assert restored is not None
    assert {} == restored.prefilled_answers


def test_file_sessions_keep_pre_filled_answers(tmp_path: Path) -> None:
    """FsmFileSessionAdapter restores pre-filled answers and what was detected, as written."""
    adapter = FsmFileSessionAdapter(tmp_path)
    adapter.create(session())
    restored = adapter.get("s-1")
    assert session() == restored


def test_store_sessions_round_trip() -> None:
    """A session written to a store reads back equal, under the Preflights key prefix."""
    store = MemoryStore()
    adapter = StoreSessionAdapter(store)
    adapter.create(session())
    assert session() == StoreSessionAdapter(store).get("s-1")
    assert [f"{KEY_PREFIX}s-1"] == store.list()


def test_store_sessions_refuse_a_stale_write() -> None:
    """Of two processes updating one version, the second gets SessionConflict, nothing written."""
    store = MemoryStore()
    first, second = StoreSessionAdapter(store), StoreSessionAdapter(store)
    first.create(session())
    mine, theirs = first.get("s-1"), second.get("s-1")
    assert mine is not None
    assert theirs is not None
    first.update(mine)
    with pytest.raises(SessionConflict):
        second.update(theirs)


def _interleavings(requests: int) -> Iterator[list[tuple[str, int]]]:
    """Every order of ``requests`` requests' steps, each a read then a write, the requests
    numbered in the order they read: every interleaving up to renaming the requests (which
    changes nothing a request does), (2n)! / (2^n n!) of them: 3, 15 and 105 for 2, 3 and 4."""

    def extend(order: list[tuple[str, int]], reading: set[int]) -> Iterator[list[tuple[str, int]]]:
        started = sum(step == "get" for step, _ in order)
        if started == requests and not reading:
            yield order
        if started < requests:
            yield from extend([*order, ("get", started)], reading | {started})
        for request in sorted(reading):
            yield from extend([*order, ("update", request)], reading - {request})

    return extend([], set())


INTERLEAVINGS = [order for requests in (2, 3, 4) for order in _interleavings(requests)]


def test_the_interleavings_are_every_order_of_two_to_four_requests() -> None:
    """All 123, none twice: the test below tries each (a property drew 200 of them at random,
    with repeats, before)."""
    assert 3 + 15 + 105 == len({tuple(order) for order in INTERLEAVINGS}) == len(INTERLEAVINGS)


def test_concurrent_requests_on_one_server_never_lose_an_acknowledged_answer() -> None:
    """Requests a server handles at once share its one adapter (issue 30): whatever the
    interleaving, exactly one write is acknowledged per version read, and every acknowledged
    answer is in the session afterwards."""
    for order in INTERLEAVINGS:
        _acknowledged_answers_are_kept(order)


def _acknowledged_answers_are_kept(order: list[tuple[str, int]]) -> None:
    """One interleaving of the property above, on a fresh store."""
    store = MemoryStore()
    adapter = StoreSessionAdapter(store)  # one per server, as `mcp --preflights` builds it
    adapter.create(session())
    read: dict[int, Session] = {}
    acknowledged: dict[int, int] = {}  # request -> the version it read
    for step, request in order:
        if step == "get":
            found = adapter.get("s-1")
            assert found is not None
            read[request] = found
            continue
        version = store.get(f"{KEY_PREFIX}s-1").version
        mine = read[request]
        mine.answers = {**mine.answers, f"q{request}": "yes"}
        try:
            adapter.update(mine)
        except SessionConflict:
            continue
        acknowledged[request] = version
    kept = adapter.get("s-1")
    assert kept is not None
    assert len(set(acknowledged.values())) == len(acknowledged)
    assert {f"q{r}": "yes" for r in acknowledged} == kept.answers


def test_an_unknown_or_deleted_store_session_is_none() -> None:
    """get answers None for no session; delete is idempotent, as Preflights' port requires."""
    adapter = StoreSessionAdapter(MemoryStore())
    adapter.create(session())
    adapter.delete("s-1")
    adapter.delete("s-1")
    assert (None, None) == (adapter.get("s-1"), adapter.get("never"))


def test_file_sessions_keep_the_engines_rounds(tmp_path: Path) -> None:
    """The rounds the engine accepted come back in order, as recorded."""
    adapter, kept = FsmFileSessionAdapter(tmp_path), session()
    record_round(kept, {"change_category": "Database"})
    record_round(kept, {"change_category": "Database", "scopes": ("a",)})
    adapter.create(kept)
    restored = adapter.get("s-1")
    assert restored is not None
    assert (
        {"change_category": "Database"},
        {"change_category": "Database", "scopes": ["a"]},
    ) == recorded_rounds(restored)


def test_a_session_expiring_between_a_rounds_read_and_its_write_is_reported_not_found(
    tmp_path: Path,
) -> None:
    """The agent is told SESSION_NOT_FOUND with what to do, as for a session found gone, never
    INTERNAL_ERROR; nothing of the round is written (found by `make sim`'s LLM mode)."""
    import subprocess

    from preflight_fsm.integrations.preflights.agent_tools import PreflightsTools, build_store_app
    from preflight_fsm.store.faults import FaultRates, FaultyStore, SimClock

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    clock = SimClock()
    store = FaultyStore(MemoryStore(clock=clock), clock, rates=FaultRates(expiry=1.0))
    tools = PreflightsTools(build_store_app(sessions=StoreSessionAdapter(store)))
    started = tools.require_clarification("Improve the checkout flow", repo_path=str(tmp_path))
    answered = tools.require_clarification(
        "Improve the checkout flow",
        session_id=started["session_id"],
        answers={"change_category": "Database"},
    )
    assert "SESSION_NOT_FOUND" == answered["error"]["code"], answered
    assert "Start a new session" in answered["error"]["recovery_hint"]
    assert [] == store.inner.entries()
