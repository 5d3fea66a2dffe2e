"""Real concurrency: several processes step the same stored sessions at once (SQLite, Redis,
PostgreSQL).

Workers are separate processes (forked from the run's fork server, ``store_backends.FORK_SERVER``:
the package already imported, nothing inherited from the test's process), each with its own store
object, started together behind barriers so their reads and writes truly overlap. The module's
tests share one pool of them: a test needs only fresh stores, never fresh processes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from preflight_fsm import ClarificationMachine
from preflight_fsm.errors import SessionConflict
from preflight_fsm.store import Sessions, SessionState
from store_backends import DURABLE_BACKENDS, FORK_SERVER, flush, open_backend, running_redis

WORKERS = 6
TIMEOUT = 60


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=DURABLE_BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    backend = str(request.param)
    if backend == "redis":
        url: str = request.getfixturevalue("redis_url")
        flush(url)
        return backend, url
    if backend == "postgres":
        from postgres_server import empty

        url = request.getfixturevalue("postgres_url")
        empty(url)
        return backend, url
    return backend, str(tmp_path / "sessions.sqlite3")


def _choice(machine: ClarificationMachine, pick: int) -> dict[str, str]:
    """An answer to the machine's current question: its option number ``pick`` (never Other)."""
    question = machine.turn.questions[0]
    options = [o for o in question.options or () if o != "Other (specify)"]
    return {question.id: options[pick % len(options)]}


_barrier: list[Barrier] = []  # in a worker: the pool's barrier, given when it was started


def _adopt(barrier: Barrier) -> None:
    _barrier.append(barrier)


def _with_barrier(target: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return target(*args, _barrier[0])


class Workers:
    """WORKERS processes sharing a barrier (passed when each is started, as it would have
    to be to a spawned one)."""

    def __init__(self) -> None:
        self.barrier = FORK_SERVER.Barrier(WORKERS)
        self.pool = ProcessPoolExecutor(
            WORKERS, mp_context=FORK_SERVER, initializer=_adopt, initargs=(self.barrier,)
        )

    def run(self, target: Callable[..., Any], args_for: list[tuple[Any, ...]]) -> list[Any]:
        """``target(*args, barrier)`` in one process per args, all at once; their results, in
        order. Every task waits at the barrier, so each takes a worker of its own."""
        assert WORKERS == len(args_for)
        self.barrier.reset()
        futures = [self.pool.submit(_with_barrier, target, args) for args in args_for]
        return [future.result(timeout=TIMEOUT) for future in futures]


@pytest.fixture(scope="module")
def workers() -> Iterator[Workers]:
    pool = Workers()
    try:
        yield pool
    finally:
        pool.pool.shutdown(wait=True, cancel_futures=True)


# -- N processes answering one session ------------------------------------------------------------


def _race(
    backend: str,
    location: str,
    session_id: str,
    index: int,
    rounds: int,
    barrier: Barrier,
) -> list[tuple[int, str, dict[str, str]]]:
    """Each round: read the session with everyone, then all try to step that same version."""
    outcomes: list[tuple[int, str, dict[str, str]]] = []
    with open_backend(backend, location) as store:
        sessions = Sessions(store)
        for _ in range(rounds):
            barrier.wait(TIMEOUT)
            machine, record = sessions.load(session_id)
            answers = _choice(machine, index)
            machine.step(answers)
            barrier.wait(TIMEOUT)  # everyone holds the same version before anyone writes
            try:
                sessions.save(session_id, machine, record.version)
                outcomes.append((record.version, "won", answers))
            except SessionConflict:
                outcomes.append((record.version, "conflict", answers))
            barrier.wait(TIMEOUT)
    return outcomes


def test_one_write_wins_per_version(location: tuple[str, str], workers: Workers) -> None:
    """N processes stepping the same version at once: exactly one write wins each round, every
    other gets SessionConflict, and the stored session is the sequential replay of the winners'
    answers (nothing forked, nothing lost)."""
    backend, where = location
    rounds = 2  # the category, then its field: the session is then Done
    with open_backend(backend, where) as store:
        session_id = Sessions(store).start("Add a new feature").id
    outcomes = workers.run(_race, [(backend, where, session_id, i, rounds) for i in range(WORKERS)])
    replay = ClarificationMachine("Add a new feature")
    for round_ in range(rounds):
        this_round = [worker[round_] for worker in outcomes]
        assert {round_ + 1} == {version for version, _, _ in this_round}
        winners = [answers for _, result, answers in this_round if result == "won"]
        assert 1 == len(winners), this_round
        assert WORKERS - 1 == sum(result == "conflict" for _, result, _ in this_round)
        replay.step(winners[0])
    with open_backend(backend, where) as store:
        machine, record = Sessions(store).load(session_id)
    assert (rounds + 1, "Done") == (record.version, machine.state)
    assert replay.snapshot() == machine.snapshot()


# -- many sessions, every process contending for every one ----------------------------------------

SESSIONS = 12


def _script(number: int) -> tuple[str, list[int]]:
    """Session ``number``'s intention and the option picked at each of its turns."""
    return "Add a new feature", [number % 5, number % 3]


def _contend(
    backend: str, location: str, ids: list[str], index: int, barrier: Barrier
) -> tuple[dict[str, int], int]:
    """Step every unfinished session with its scripted answer until all are finished."""
    wins = dict.fromkeys(ids, 0)
    conflicts = 0
    order = list(enumerate(ids))
    if index % 2:  # half go forwards, half backwards: every session is contended at some point
        order.reverse()
    with open_backend(backend, location) as store:
        sessions = Sessions(store)
        barrier.wait(TIMEOUT)
        unfinished = True
        while unfinished:
            unfinished = False
            for number, session_id in order:
                machine, record = sessions.load(session_id)
                if machine.finished:
                    continue
                unfinished = True
                machine.step(_choice(machine, _script(number)[1][record.version - 1]))
                try:
                    sessions.save(session_id, machine, record.version)
                    wins[session_id] += 1
                except SessionConflict:
                    conflicts += 1
    return wins, conflicts


def test_many_sessions_in_parallel_are_each_stepped_once_per_version(
    location: tuple[str, str], workers: Workers
) -> None:
    """Processes racing over many sessions at once: each session ends Done at version 3 after
    exactly two winning writes in all, holding its own scripted outcome."""
    backend, where = location
    with open_backend(backend, where) as store:
        sessions = Sessions(store)
        ids = [sessions.start(_script(n)[0]).id for n in range(SESSIONS)]
    reports = workers.run(_contend, [(backend, where, ids, i) for i in range(WORKERS)])
    with open_backend(backend, where) as store:
        sessions = Sessions(store)
        for number, session_id in enumerate(ids):
            assert 2 == sum(wins[session_id] for wins, _ in reports)
            machine, record = sessions.load(session_id)
            replay = ClarificationMachine(_script(number)[0])
            for pick in _script(number)[1]:
                replay.step(_choice(replay, pick))
            assert (3, replay.snapshot()) == (record.version, machine.snapshot())
        listed = sessions.list()
    assert sorted(ids) == [s.id for s in listed if isinstance(s, SessionState)]


# -- many processes opening a new SQLite file at once --------------------------------------------


def _open_and_start(path: str, index: int, barrier: Barrier) -> str:
    barrier.wait(TIMEOUT)
    with open_backend("sqlite", path) as store:
        return Sessions(store).start("Add OAuth login").id


def test_processes_creating_the_same_new_file_at_once_all_succeed(
    tmp_path: Path, workers: Workers
) -> None:
    """N processes opening a SQLite store whose file does not exist yet, at the same moment, each
    create it (or find it created) and store their session: the CLI's first runs may race."""
    path = str(tmp_path / "new" / "sessions.sqlite3")
    ids = workers.run(_open_and_start, [(path, i) for i in range(WORKERS)])
    with open_backend("sqlite", path) as store:
        assert sorted(ids) == store.list()
