"""The seeded fault simulator of the session layer: many random sessions, faults, a model.

Each run drives random sessions (intentions, answers of every kind: options, "Other (specify)"
with and without its text, custom values, blanks, placeholders, garbage) through
:class:`~preflight_fsm.store.Sessions` over a :class:`~preflight_fsm.store.faults.FaultyStore`
(busy and disk errors, replies lost after the write, expiry between a read and its write), as
clients do: a client retries a round whose outcome it did not learn (a duplicated round), drops
some (a lost round), and two clients sometimes step the same version at once (concurrent
writers). A model keeps what each client was told and checks, after each step and at the end:

- no acknowledged step is lost: the stored session's steps begin with every acknowledged one,
  in order, unless the session expired by its own clock;
- none is forked: an acknowledged version holds exactly the steps acknowledged before it;
- none is resurrected: a session seen expired or deleted is never found again;
- every error a client saw is a documented one (``docs/sessions.md``).

Everything is drawn from one seed; the events of a run (and so a failure) repeat exactly for
the same seed, backend and size. ``make test`` runs a few seeds (``tests/test_sim.py``);
``make sim SEEDS=N`` runs N seeds per backend, then the LLM mode (``tests/sim_llm.py``)::

    python tests/sim.py --seeds 200 --sessions 40 --backends memory,sqlite,redis
    python tests/sim.py --llm --seeds 20 --sessions 6
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preflight_fsm.errors import (
    InvalidAnswers,
    SessionConflict,
    SessionExpired,
    SessionFinished,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.store import MemoryStore, Sessions, SessionStore, SqliteStore
from preflight_fsm.store.faults import FaultRates, FaultyStore, SimClock

DOCUMENTED = (
    InvalidAnswers,
    SessionFinished,
    SessionConflict,
    SessionNotFound,
    SessionExpired,
    StoreUnavailable,
)
"""The errors a client of the session layer may see (docs/sessions.md); any other is a failure."""

RATES = FaultRates(busy=0.05, disk=0.02, lost_reply=0.06, expiry=0.02, lock_holder=0.03)
INTENTIONS = (
    "Add OAuth login to the admin dashboard",
    "Migrate the database",
    "Improve the feedback form",
    "Build a frontend settings page",
    "Deploy the API to the cloud",
    "Make it faster",
)
CUSTOM = ("KaiOS", "CockroachDB", "Tailwind", "Single sign-on via SAML", "Ansible")
BLANKS = ("", "TBD", "n/a", None)


@dataclass
class Known:
    """What the clients were told about one session."""

    expire_after: float
    steps: list[Any] = field(default_factory=list)
    """The steps of the last acknowledged snapshot (its inputs, C9)."""
    version: int = 1
    acked_at: float = 0.0
    gone: bool = False


@dataclass
class Report:
    """One run: its events (the same for the same seed), its failures, what was injected."""

    seed: int
    backend: str
    events: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    acknowledged: int = 0

    @property
    def digest(self) -> str:
        """A short digest of the events: equal for runs that did the same."""
        return hashlib.sha256("\n".join(self.events).encode()).hexdigest()[:16]


StoreFactory = Callable[[SimClock], SessionStore]


class Simulation:
    """One seeded run over one store (module docstring)."""

    def __init__(self, seed: int, backend: str, make_store: StoreFactory, sessions: int) -> None:
        self.random = random.Random(seed)
        self.clock = SimClock()
        self.faulty = FaultyStore(make_store(self.clock), self.clock, seed, RATES)
        counter = iter(range(1_000_000))
        self.sessions = Sessions(self.faulty, new_id=lambda: f"s{seed}-{next(counter)}")
        self.count = sessions
        self.known: dict[str, Known] = {}
        self.report = Report(seed, backend)

    # -- the run ---------------------------------------------------------------------------------

    def run(self) -> Report:
        """Start sessions and step them at random until each is finished or gone, then check."""
        live: list[str] = []
        started = 0
        for _ in range(self.count * 12):
            self.clock.advance(self.random.uniform(0, 5))
            if started < self.count and (not live or self.random.random() < 0.3):
                started += 1
                session_id = self._start()
                if session_id is not None:
                    live.append(session_id)
                continue
            if not live:
                break
            session_id = self.random.choice(live)
            if self._round(session_id) == "over":
                live.remove(session_id)
        for session_id in sorted(self.known):
            self._check_final(session_id)
        self.report.faults = list(self.faulty.log)
        return self.report

    def _start(self) -> str | None:
        intention = self.random.choice(INTENTIONS)
        expire_after = float(self.random.choice((60, 120, 600)))
        try:
            state = self.sessions.start(intention, expire_after=expire_after)
        except DOCUMENTED as error:
            # A lost reply may have stored it under an id nobody learnt: never asked for again.
            self._event(f"start {type(error).__name__}")
            return None
        except Exception as error:
            self._fail(f"start raised an undocumented {type(error).__name__}: {error}")
            return None
        self.known[state.id] = Known(expire_after, [], state.version, self.clock())
        self._event(f"start {state.id} v{state.version}")
        return state.id

    def _round(self, session_id: str) -> str:
        """One elicitation round on ``session_id``: "over" once it is finished or gone."""
        known = self.known[session_id]
        if self.random.random() < 0.1:
            return self._concurrent(session_id)
        loaded = self._load(session_id)
        if loaded is None:
            return "over"
        machine, version = loaded
        if machine.finished:
            return "over"
        answers = self._answers(machine)
        outcome = self._step(session_id, machine, version, answers)
        if outcome == "unknown" and self.random.random() < 0.7:
            # The client never learnt the outcome: it sends the same round again.
            self.clock.advance(self.random.uniform(0, 2))
            again = self._load(session_id)
            if again is None:
                return "over"
            self._step(session_id, again[0], again[1], answers)
        return "over" if known.gone else "on"

    def _concurrent(self, session_id: str) -> str:
        """Two clients load the same version and step it; at most one may write."""
        first, second = self._load(session_id), self._load(session_id)
        if first is None or second is None:
            return "over"
        if first[0].finished:
            return "over"
        outcomes = [
            self._step(session_id, machine, version, self._answers(machine))
            for machine, version in (first, second)
        ]
        if first[1] == second[1] and outcomes.count("acked") > 1:
            self._fail(f"{session_id}: two writers of version {first[1]} were both acknowledged")
        return "over" if self.known[session_id].gone else "on"

    # -- client operations -----------------------------------------------------------------------

    def _load(self, session_id: str) -> tuple[ClarificationMachine, int] | None:
        known = self.known[session_id]
        try:
            machine, record = self.sessions.load(session_id)
        except (SessionNotFound, SessionExpired) as error:
            self._event(f"load {session_id} {type(error).__name__}")
            self._gone(session_id, "load")
            return None
        except DOCUMENTED as error:
            self._event(f"load {session_id} {type(error).__name__}")
            return None
        except Exception as error:
            self._fail(f"load {session_id} raised an undocumented {type(error).__name__}: {error}")
            return None
        if known.gone:
            self._fail(f"{session_id} came back after it was seen gone (v{record.version})")
        self._check_prefix(session_id, _steps(machine), record.version, "load")
        return machine, record.version

    def _step(
        self, session_id: str, machine: ClarificationMachine, version: int, answers: Any
    ) -> str:
        """Step and save: "acked", "refused" (a documented refusal) or "unknown" (no reply)."""
        known = self.known[session_id]
        try:
            machine.step(answers)
        except (InvalidAnswers, SessionFinished) as error:
            self._event(f"step {session_id} {type(error).__name__}")
            return "refused"
        except Exception as error:
            self._fail(f"step {session_id} raised an undocumented {type(error).__name__}: {error}")
            return "refused"
        try:
            saved = self.sessions.save(session_id, machine, version)
        except StoreUnavailable:
            self._event(f"save {session_id} v{version} StoreUnavailable")
            return "unknown"
        except (SessionNotFound, SessionExpired) as error:
            self._event(f"save {session_id} v{version} {type(error).__name__}")
            self._gone(session_id, "save")
            return "refused"
        except SessionConflict:
            self._event(f"save {session_id} v{version} SessionConflict")
            return "refused"
        except Exception as error:
            self._fail(f"save {session_id} raised an undocumented {type(error).__name__}: {error}")
            return "refused"
        steps = _steps(machine)
        if saved.version != version + 1:
            self._fail(f"{session_id}: saved over v{version} as v{saved.version}")
        if saved.version <= known.version:
            self._fail(f"{session_id}: v{saved.version} acknowledged after v{known.version}")
        elif steps[: len(known.steps)] != known.steps:
            self._fail(f"{session_id}: v{saved.version} forks from acknowledged v{known.version}")
        known.steps, known.version, known.acked_at = steps, saved.version, self.clock()
        self.report.acknowledged += 1
        self._event(f"save {session_id} v{saved.version} acked")
        return "acked"

    def _answers(self, machine: ClarificationMachine) -> dict[str, Any]:
        """A random round for the machine's turn: what clients send, good and bad."""
        pending = machine.turn.missing_info[0]
        question = next((q for q in machine.turn.questions if q.id == pending), None)
        options = list(question.options or ()) if question is not None else []
        kind = self.random.random()
        if kind < 0.45 and options:
            return {pending: self.random.choice(options)}
        if kind < 0.6 and options:
            return {pending: options[-1], f"{pending}__other": self.random.choice(CUSTOM)}
        if kind < 0.75:
            return {pending: self.random.choice(CUSTOM)}
        if kind < 0.85:
            return {pending: self.random.choice(BLANKS)}
        if kind < 0.95:
            return {"unknown_question": "x", pending: 42}
        return {pending: ["a", "b"]}

    # -- the model -------------------------------------------------------------------------------

    def _gone(self, session_id: str, where: str) -> None:
        known = self.known[session_id]
        if not known.gone and self.clock() - known.acked_at < known.expire_after:
            self._fail(
                f"{session_id} lost at {where}: gone {self.clock() - known.acked_at:.0f} s after "
                f"its last acknowledged step (v{known.version}), before its "
                f"{known.expire_after:.0f} s expiry"
            )
        known.gone = True

    def _check_prefix(self, session_id: str, steps: list[Any], version: int, where: str) -> None:
        known = self.known[session_id]
        if version < known.version:
            self._fail(f"{session_id} read at v{version} after v{known.version} was acknowledged")
        elif steps[: len(known.steps)] != known.steps:
            self._fail(f"{session_id} at v{version} ({where}) lost or forked acknowledged steps")

    def _check_final(self, session_id: str) -> None:
        known = self.known[session_id]
        try:
            record = self.faulty.inner.get(session_id)
        except (SessionNotFound, SessionExpired):
            self._gone(session_id, "the end")
            return
        except Exception as error:
            self._fail(f"final read of {session_id}: undocumented {type(error).__name__}: {error}")
            return
        if known.gone:
            self._fail(f"{session_id} came back after it was seen gone (v{record.version})")
            return
        machine = self.sessions.restore(record)
        self._check_prefix(session_id, _steps(machine), record.version, "the end")

    def _event(self, text: str) -> None:
        self.report.events.append(text)

    def _fail(self, text: str) -> None:
        self.report.failures.append(f"seed {self.report.seed} ({self.report.backend}) {text}")
        self._event(f"FAILURE {text}")


def _steps(machine: ClarificationMachine) -> list[Any]:
    """The machine's inputs (C9), as JSON values comparable across snapshots."""
    return list(json.loads(machine.snapshot().model_dump_json())["steps"])


@contextmanager
def backend_factory(backend: str) -> Iterator[StoreFactory]:
    """The stores one backend's runs use: each run gets a fresh one."""
    if backend == "memory":
        yield lambda clock: MemoryStore(clock=clock)
    elif backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="sim-") as directory:
            made = iter(range(1_000_000))
            # A short write wait: a lock_holder fault then costs 50 ms, not the default 5 s.
            yield lambda clock: SqliteStore(
                Path(directory) / f"{next(made)}.sqlite3", clock=clock, timeout=0.05
            )
    elif backend == "redis":
        from preflight_fsm.store.redis import RedisStore
        from redis_server import throwaway_redis

        with (
            tempfile.TemporaryDirectory(prefix="sim-redis-") as directory,
            throwaway_redis(Path(directory)) as url,
        ):
            made = iter(range(1_000_000))
            yield lambda clock: RedisStore(url, clock=clock, prefix=f"sim{next(made)}:")
    else:
        raise ValueError(f"unknown backend {backend!r}: memory, sqlite or redis")


def simulate(seeds: range, backends: tuple[str, ...], sessions: int) -> dict[str, list[Report]]:
    """Every seed on every backend; the reports by backend."""
    reports: dict[str, list[Report]] = {}
    for backend in backends:
        with backend_factory(backend) as make_store:
            reports[backend] = [
                Simulation(seed, backend, make_store, sessions).run() for seed in seeds
            ]
    return reports


def main(argv: list[str]) -> int:
    """``make sim``: run the seeds, print what they did and any failure; 1 if one failed."""
    parser = argparse.ArgumentParser(description="The seeded fault simulator (make sim).")
    parser.add_argument("--seeds", type=int, default=100, help="seeds per backend (from --first)")
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    parser.add_argument("--sessions", type=int, default=40, help="sessions per run")
    parser.add_argument("--backends", default="memory,sqlite", help="memory,sqlite,redis")
    parser.add_argument("--llm", action="store_true", help="the LLM mode (tests/sim_llm.py)")
    options = parser.parse_args(argv)
    began = time.perf_counter()
    seeds = range(options.first, options.first + options.seeds)
    backends = tuple(b for b in options.backends.split(",") if b)
    run = simulate
    if options.llm:  # Preflights' rounds through the LLM guard, the provider faulty too
        from sim_llm import simulate as run
    failed = 0
    for backend, reports in run(seeds, backends, options.sessions).items():
        faults = sum(len(r.faults) for r in reports)
        acked = sum(r.acknowledged for r in reports)
        failures = [f for r in reports for f in r.failures]
        failed += len(failures)
        print(
            f"{backend}{' (llm)' if options.llm else ''}: {len(reports)} seeded runs, "
            f"{acked} acknowledged steps, "
            f"{faults} faults injected, {len(failures)} failures"
        )
        for failure in failures[:20]:
            print(f"  {failure}")
    print(f"{time.perf_counter() - began:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
