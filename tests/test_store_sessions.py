"""The Sessions service: stored sessions stepped through the engine, written back by CAS."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight_fsm import ClarificationMachine, InvalidAnswers, InvalidIntention, SessionFinished
from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    SnapshotFlowMismatch,
)
from preflight_fsm.flow import default_flow, flow_from_data
from preflight_fsm.store import MemoryStore, Sessions, SessionState, SessionStore
from preflight_fsm.store.sessions import open_envelope, seal_envelope
from store_backends import BACKENDS, FakeClock, flush, open_backend, running_redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=BACKENDS)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Iterator[SessionStore]:
    backend = str(request.param)
    if backend == "redis":
        location: str = request.getfixturevalue("redis_url")
        flush(location)
    else:
        location = str(tmp_path / "sessions.sqlite3")
    with open_backend(backend, location, clock=clock) as opened:
        yield opened


def _ids() -> Iterator[str]:
    return (f"session-{n}" for n in itertools.count(1))


@pytest.fixture
def sessions(store: SessionStore) -> Sessions:
    return Sessions(store, new_id=_ids().__next__)


def test_start_stores_the_first_turn_at_version_one(sessions: Sessions) -> None:
    """start() stores a new session under the injected id at version 1 and shows its turn 1."""
    started = sessions.start("Add OAuth login")
    assert ("session-1", 1) == (started.id, started.version)
    assert ClarificationMachine("Add OAuth login").turn == started.turn
    assert started.turn == sessions.show("session-1").turn


def test_a_session_is_answered_by_another_service_object(store: SessionStore) -> None:
    """A session started through one Sessions object is completed through another on the same
    store, exactly as one machine in memory would have completed it."""
    first = Sessions(store, new_id=_ids().__next__)
    session_id = first.start("Add a new feature").id
    second = Sessions(store)
    second.answer(session_id, {"change_category": "Database"})
    done = second.answer(session_id, {"db_type": "postgresql"})
    machine = ClarificationMachine("Add a new feature")
    machine.step({"change_category": "Database"})
    expected = machine.step({"db_type": "postgresql"})
    assert (expected, 3) == (done.turn, done.version)
    assert machine.snapshot() == second.load(session_id)[0].snapshot()


def test_invalid_answers_write_nothing(sessions: Sessions) -> None:
    """Answers the engine refuses raise InvalidAnswers with its feedback; the stored session
    keeps its version and position."""
    session_id = sessions.start("Add OAuth login").id
    with pytest.raises(InvalidAnswers) as caught:
        sessions.answer(session_id, {"favourite_colour": "blue"})
    assert ["favourite_colour"] == caught.value.feedback["issues"]["unknown"]
    shown = sessions.show(session_id)
    assert (1, "NeedPrimaryField") == (shown.version, shown.turn.state)


def test_answering_a_finished_session_writes_nothing(sessions: Sessions) -> None:
    """A step on a session in Done raises SessionFinished and leaves it at its version."""
    session_id = sessions.start("Add OAuth login").id
    sessions.answer(session_id, {"auth_strategy": "OAuth"})
    with pytest.raises(SessionFinished):
        sessions.answer(session_id, {"auth_strategy": "OAuth"})
    assert 2 == sessions.show(session_id).version


def test_an_invalid_intention_stores_nothing(sessions: Sessions) -> None:
    """start() with an intention the engine refuses raises InvalidIntention and stores nothing."""
    with pytest.raises(InvalidIntention):
        sessions.start("   ")
    assert [] == sessions.list()


def test_a_step_based_on_a_stale_read_is_a_conflict(sessions: Sessions) -> None:
    """Two callers load the same version; the second to save gets SessionConflict and the stored
    session is the first one's, unforked."""
    session_id = sessions.start("Add a new feature").id
    mine, read = sessions.load(session_id)
    theirs, _ = sessions.load(session_id)
    theirs.step({"change_category": "Frontend"})
    sessions.save(session_id, theirs, read.version)
    mine.step({"change_category": "Backend"})
    with pytest.raises(SessionConflict):
        sessions.save(session_id, mine, read.version)
    shown = sessions.show(session_id)
    assert (2, "frontend_framework") == (shown.version, shown.turn.missing_info[0])


def test_show_changes_nothing(sessions: Sessions) -> None:
    """show() reads the session without writing it."""
    session_id = sessions.start("Add OAuth login").id
    sessions.show(session_id)
    assert 1 == sessions.show(session_id).version


def test_list_shows_every_session_sorted(sessions: Sessions) -> None:
    """list() gives each live session's state, sorted by id."""
    sessions.start("Add OAuth login")
    sessions.start("Add a new feature")
    listed = sessions.list()
    assert ["session-1", "session-2"] == [s.id for s in listed if isinstance(s, SessionState)]
    assert ["NeedPrimaryField", "NeedCategory"] == [
        s.turn.state for s in listed if isinstance(s, SessionState)
    ]


def test_delete_forgets_the_session(sessions: Sessions) -> None:
    """A deleted session is unknown to show and answer."""
    session_id = sessions.start("Add OAuth login").id
    sessions.delete(session_id)
    with pytest.raises(SessionNotFound):
        sessions.answer(session_id, {"auth_strategy": "OAuth"})


def test_an_expired_session_cannot_be_answered(clock: FakeClock) -> None:
    """Answering a session 30 minutes after its last step raises SessionExpired."""
    sessions = Sessions(MemoryStore(clock=clock))
    session_id = sessions.start("Add OAuth login").id
    clock.advance(30 * 60)
    with pytest.raises(SessionExpired, match="start a new session"):
        sessions.answer(session_id, {"auth_strategy": "OAuth"})


def test_default_ids_are_random_uuids() -> None:
    """Without an injected id factory, each session gets a distinct UUID4."""
    sessions = Sessions(MemoryStore())
    ids = {sessions.start("Add OAuth login").id for _ in range(20)}
    assert 20 == len(ids)
    assert all(uuid.UUID(i).version == 4 for i in ids)


def test_to_json_is_plain_json(sessions: Sessions) -> None:
    """SessionState.to_json() serialises to JSON holding the id, version and the whole turn."""
    state = sessions.start("Add OAuth login")
    data = json.loads(json.dumps(state.to_json()))
    assert ("session-1", 1, "NeedPrimaryField", False) == (
        data["session_id"],
        data["version"],
        data["turn"]["state"],
        data["turn"]["finished"],
    )
    assert ["auth_strategy", "auth_strategy__other"] == [q["id"] for q in data["turn"]["questions"]]


# -- tampered snapshots ---------------------------------------------------------------------------


def _tamper_intention(text: str) -> str:
    data = json.loads(text)
    data["intention"] = "Drop every table"
    return json.dumps(data)


def _drop_digest(text: str) -> str:
    data = json.loads(text)
    del data["digest"]
    return json.dumps(data)


def _set_state(text: str) -> str:
    data = json.loads(text)
    data["state"] = "Done"
    data["digest"] = None
    return json.dumps(data)


TAMPERINGS = {
    "content changed, digest kept": (_tamper_intention, "digest"),
    "digest removed": (_drop_digest, "digest"),
    "state forged": (_set_state, "digest"),
    "not JSON": (lambda text: text[:-7], "not valid JSON"),
    "not a snapshot": (lambda text: '{"hello": "world"}', "snapshot"),
}


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_a_tampered_snapshot_is_reported_for_that_session_only(
    sessions: Sessions, store: SessionStore, tampering: str
) -> None:
    """A stored snapshot changed behind the service's back is CorruptSession (naming the problem)
    for its id on show and answer, is listed as corrupt, and the other sessions work as before."""
    change, problem = TAMPERINGS[tampering]
    bad = sessions.start("Add OAuth login").id
    good = sessions.start("Add OAuth login").id
    record = store.get(bad)
    inside = change(open_envelope(bad, record.snapshot))
    store.put(bad, seal_envelope(bad, inside), expected_version=record.version)
    with pytest.raises(CorruptSession, match=problem) as caught:
        sessions.show(bad)
    assert bad == caught.value.session_id
    with pytest.raises(CorruptSession):
        sessions.answer(bad, {"auth_strategy": "OAuth"})
    corrupt, fine = sessions.list()
    assert isinstance(corrupt, CorruptSession)
    assert isinstance(fine, SessionState)
    assert (bad, good) == (corrupt.session_id, fine.id)
    assert "Done" == sessions.answer(good, {"auth_strategy": "OAuth"}).turn.state
    sessions.delete(bad)
    assert [good] == [s.id for s in sessions.list() if isinstance(s, SessionState)]


def test_a_snapshot_copied_under_another_id_is_refused(
    sessions: Sessions, store: SessionStore
) -> None:
    """A stored session copied to a new id (a Redis hash copied to a new key) is not a second live
    session: it is CorruptSession, naming the session the snapshot belongs to."""
    original = sessions.start("Add OAuth login").id
    store.create("copy", store.get(original).snapshot)
    with pytest.raises(CorruptSession, match=f"belongs to session '{original}'"):
        sessions.answer("copy", {"auth_strategy": "OAuth"})
    assert "NeedPrimaryField" == sessions.show(original).turn.state


def test_a_bare_snapshot_without_its_envelope_is_refused(
    sessions: Sessions, store: SessionStore
) -> None:
    """A row holding a bare snapshot (not written through Sessions) names no session: corrupt."""
    original = sessions.start("Add OAuth login").id
    store.create("bare", open_envelope(original, store.get(original).snapshot))
    with pytest.raises(CorruptSession, match="not a session envelope"):
        sessions.show("bare")


def test_expiry_and_flow_are_kept_per_session(sessions: Sessions, store: SessionStore) -> None:
    """start(expire_after=) stays with that session, beside its flow's fingerprint; the store's
    own default applies to sessions started without one."""
    short = sessions.start("Add OAuth login", expire_after=60).id
    default = sessions.start("Add OAuth login").id
    assert (60.0, store.expire_after) == (
        store.get(short).expire_after,
        store.get(default).expire_after,
    )
    assert {default_flow().fingerprint} == {store.get(i).flow for i in (short, default)}


def test_a_session_of_another_flow_is_refused_as_such_not_as_corrupt(
    sessions: Sessions, store: SessionStore
) -> None:
    """Restoring a session with a flow other than the one it started on raises
    SnapshotFlowMismatch naming both fingerprints (C10), never CorruptSession."""
    session_id = sessions.start("Add OAuth login").id
    other = flow_from_data({"name": "other", "limits": {"max_turns": 4}})
    with pytest.raises(SnapshotFlowMismatch, match=default_flow().fingerprint):
        Sessions(store, flow=other).show(session_id)


def test_create_stores_a_machine_already_stepped(sessions: Sessions, store: SessionStore) -> None:
    """create(machine) stores a session that took steps before it was stored (a server that
    takes the first answers with the intention) at version 1, enveloped and with its flow."""
    machine = ClarificationMachine("Improve the feedback form")
    machine.step({"change_category": "Database"})
    record = sessions.create(machine, expire_after=120)
    assert (1, 120.0, default_flow().fingerprint) == (
        record.version,
        record.expire_after,
        record.flow,
    )
    assert "Done" == sessions.answer(record.id, {"db_type": "MySQL"}).turn.state


def test_sessions_of_preflights_own_app_in_the_same_store_are_not_listed() -> None:
    """`pf` and `mcp --preflights` keep Preflights' sessions as preflights-<id>: not ours to list
    (and not corrupt)."""
    from preflight_fsm.store import MemoryStore, Sessions

    store = MemoryStore()
    sessions = Sessions(store)
    started = sessions.start("Add OAuth login")
    store.create("preflights-abc", '{"not": "an engine snapshot"}')
    assert [started.id] == [s.id for s in sessions.list() if hasattr(s, "id")]
    assert 1 == len(sessions.list())


def test_a_session_stored_before_answered_by_shows_its_steps_unknown() -> None:
    """C9: a version-2 snapshot in a store restores with every step 'unknown', and the next
    step records its own source."""
    v2 = Path(__file__).parent / "fixtures" / "snapshots" / "v2.jsonl"
    line = next(
        line
        for line in v2.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["state"] == "NeedOther"
        and json.loads(line)["intention"] == "Improve the feedback form"
    )
    store = MemoryStore()
    store.create("old", seal_envelope("old", line))
    sessions = Sessions(store)
    assert ["unknown"] == [step.answered_by for step in sessions.show("old").steps]
    stepped = sessions.answer("old", {"change_category__other": "database"}, answered_by="cli")
    assert ["unknown", "cli"] == [step.answered_by for step in stepped.steps]


def test_a_stored_session_keeps_its_owner_and_each_steps_principal() -> None:
    """C9: the store layer records who started the session and who sent each step, and shows
    them in its JSON view."""
    sessions = Sessions(MemoryStore())
    started = sessions.start("Add OAuth login", owner="alice")
    state = sessions.answer(
        started.id, {"auth_strategy": "OAuth"}, answered_by="user_web", principal="alice"
    )
    view = state.to_json()
    assert "alice" == view["owner"]
    assert {
        "step": 1,
        "answered_by": "user_web",
        "principal": "alice",
        "proof": None,
        "answers": {"auth_strategy": "OAuth"},
    } == view["steps"][0]


def test_a_stored_step_with_an_unclean_principal_writes_nothing() -> None:
    """C5: the refusal leaves the stored version as it was."""
    sessions = Sessions(MemoryStore())
    started = sessions.start("Add OAuth login")
    with pytest.raises(InvalidAnswers):
        sessions.answer(started.id, {"auth_strategy": "OAuth"}, principal="al\u200bice")
    assert started.version == sessions.show(started.id).version


def test_a_stored_sessions_turn_is_the_turn_its_engine_shares(sessions: Sessions) -> None:
    """D308: ``SessionState.turn`` is the model of its plain turn, the very Turn a machine at the
    same position holds (turns are shared, D46), not one validated afresh at every read."""
    state = sessions.show(sessions.start("Add OAuth login").id)
    assert (ClarificationMachine("Add OAuth login").turn, state.turn_data.to_json()) == (
        state.turn,
        state.turn.model_dump(mode="json"),
    )
    assert ClarificationMachine("Add OAuth login").turn is state.turn


def test_a_session_state_built_without_its_session_gives_its_turn_all_the_same(
    sessions: Sessions,
) -> None:
    """A SessionState made by hand from its plain turn validates the Turn from it."""
    state = sessions.answer(sessions.start("Add OAuth login").id, {"auth_strategy": "OAuth"})
    copied = SessionState(
        state.id, state.version, state.intention, state.answers, state.turn_data, 0.0, 0.0
    )
    assert state.turn == copied.turn
