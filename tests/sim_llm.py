"""The fault simulator's second mode: Preflights' rounds through the LLM guard, under faults.

``tests/sim.py`` drives the session layer, where no LLM is asked, so a provider fault has
nothing to hit there. This mode drives what ``mcp --preflights`` runs: Preflights' application
on the engine (:func:`build_store_app`) with its sessions in a :class:`StoreSessionAdapter` over
the same :class:`~preflight_fsm.store.faults.FaultyStore` (busy and disk errors, lost replies,
expiry, SQLite's lock holder), and every turn and patch asked of Preflights' real OpenAI adapter,
under the guard (:class:`GuardedLLMAdapter`), pointed at ``llm_server`` on 127.0.0.1. Each call
the seed draws a provider fault for:

- ``drip``: headers, then one byte every 50 ms for a minute, each byte within any read timeout;
- ``stall``: no byte at all until the deadline passes;
- ``error``: an HTTP 500.

A model keeps what the client was told and checks: no acknowledged round is lost (the stored
session's rounds always begin with those acknowledged, one more for each acknowledged round the
engine recorded); a faulted call returns within its deadline (plus a generous allowance for a
loaded machine) with the engine's answer, the replacement reported; every error the client saw
is a documented one; and at the end of a run no dripping connection is left open and no thread
piles up (issue 30, item 5). ``make sim`` runs it after the session layer's seeds::

    python tests/sim.py --llm --seeds 20 --sessions 6 --backends memory,sqlite
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llm_server import LLMServer, Reply, llm_server
from preflight_fsm.errors import PreflightFsmError, SessionConflict, StoreUnavailable
from preflight_fsm.integrations.preflights.agent_tools import build_store_app
from preflight_fsm.integrations.preflights.sessions import (
    KEY_PREFIX,
    StoreSessionAdapter,
    recorded_rounds,
)
from preflight_fsm.llm import GuardedLLMAdapter
from preflight_fsm.llm.providers import provider_adapter
from preflight_fsm.store.faults import FaultyStore, SimClock
from sim import INTENTIONS, RATES, Report, StoreFactory, backend_factory

PROVIDER_FAULTS = {
    "drip": Reply(kind="drip"),
    "stall": Reply(kind="hold"),
    "error": Reply("status", 500),
}
FAULT_RATE = 0.3  # of provider calls: each costs a deadline, so fewer calls than sim.py's
DEADLINE = 0.15  # each faulted provider call waits it out
ALLOWANCE = 15.0  # seconds past the deadline a loaded machine may take; never a wait
DOCUMENTED_CODES = {
    "INVALID_ANSWER",
    "AWAITING_ANSWER",
    "NO_DECISION",  # the integration's (docs/preflights.md)
    "SESSION_NOT_FOUND",
    "SESSION_EXPIRED",
    "PATCH_EXTRACTION_FAILED",
    "VALIDATION_FAILED",  # Preflights' own, of a round's answers after the engine was done
}
"""The result codes a round may end with; any other (an LLM_* code: a provider error let
through) is a failure."""
FOLLOW_UPS = {"allowlist_paths": "src/", "acceptance_criteria": "It works"}


class LLMSimulation:
    """One seeded run of ``sessions`` Preflights sessions over one store (module docstring)."""

    def __init__(
        self,
        seed: int,
        backend: str,
        make_store: StoreFactory,
        sessions: int,
        server: LLMServer,
        repo: Path,
    ) -> None:
        self.random = random.Random(seed)
        self.clock = SimClock()
        self.faulty = FaultyStore(make_store(self.clock), self.clock, seed, RATES)
        self.server = server
        self.repo = repo
        with _environment(server.env("openai", DEADLINE)):
            adapter = provider_adapter("openai", deadline=DEADLINE)
        self.replaced = 0  # replacements the guard reported
        self.guard = GuardedLLMAdapter(adapter, deadline=DEADLINE, on_replacement=self._replaced)
        self.app = build_store_app(
            llm_adapter=self.guard, sessions=StoreSessionAdapter(self.faulty), answered_by="agent"
        )
        self.count = sessions
        self.run_report = Report(seed, backend)

    def run(self) -> Report:
        """Each session from its start until it completes, stops or is gone; then the checks."""
        threads = _threads()
        for _ in range(self.count):
            self._session()
        self.run_report.faults += self.faulty.log
        ends = time.monotonic() + ALLOWANCE
        while self.server.dripping or _threads() > threads + 1:
            if time.monotonic() > ends:
                break
            time.sleep(0.05)  # waiting for a condition (calls ending, bounded), not a sync
        if self.server.dripping:
            self._fail(f"{self.server.dripping} dripping connections left open after the run")
        if _threads() > threads + 1:
            self._fail(f"threads piled up: {threads} before the run, {_threads()} after")
        return self.run_report

    # -- one session -----------------------------------------------------------------------------

    def _session(self) -> None:
        intention = self.random.choice(INTENTIONS)
        try:
            started = self._ask(lambda: self.app.start_preflight(intention, str(self.repo)))
        except PreflightFsmError as error:
            self._documented("start", error)
            return
        except Exception as error:  # what an agent would get as INTERNAL_ERROR
            self._fail(f"start raised {type(error).__name__}: {error}")
            return
        session_id = started.session_id
        questions = started.questions
        known: list[dict[str, Any]] = []  # the rounds stored when the last one was acknowledged
        for _ in range(12):
            answers = self._answers(questions)
            before = self._stored(session_id)
            if before is None:
                return
            try:
                result = self._ask(
                    lambda: self.app.continue_preflight(session_id, answers)  # noqa: B023
                )
            except PreflightFsmError as error:
                self._documented(f"round {session_id[:8]}", error)
                if not self._check(session_id, known, acknowledged=False):
                    return
                continue
            except Exception as error:  # what an agent would get as INTERNAL_ERROR
                self._fail(f"round {session_id[:8]} raised {type(error).__name__}: {error}")
                return
            if result.status == "error":
                code = result.error.code if result.error else "UNKNOWN"
                self._event(f"round {session_id[:8]} {code}")
                if code not in DOCUMENTED_CODES:
                    self._fail(f"{session_id}: an undocumented result code {code}")
                if code in ("NO_DECISION", "SESSION_NOT_FOUND"):
                    return
                self._check(session_id, known, acknowledged=False)
                continue
            self.run_report.acknowledged += 1
            self._event(f"round {session_id[:8]} {result.status}")
            if result.status == "completed":
                return
            after = self._stored(session_id)
            if after is None:
                self._fail(f"{session_id}: gone right after a round was acknowledged")
                return
            rounds, engine_phase = after[0], not before[1]
            grown = len(rounds) == len(before[0]) + 1 and rounds[: len(before[0])] == before[0]
            if engine_phase and not grown:
                self._fail(f"{session_id}: an acknowledged round is not the one round stored")
            known = rounds
            if not self._check(session_id, known, acknowledged=True):
                return
            questions = result.questions or ()

    def _ask(self, call: Any) -> Any:
        """``call`` (which asks the provider) with a fault drawn for every provider request it
        makes; a faulted call must come back within the deadline and the allowance."""
        fault = (
            self.random.choice(sorted(PROVIDER_FAULTS))
            if self.random.random() < FAULT_RATE
            else None
        )
        self.server.default = PROVIDER_FAULTS[fault] if fault else Reply()
        replaced, exchanges = self.replaced, len(self.server.exchanges)
        began = time.monotonic()
        try:
            return call()
        finally:
            took = time.monotonic() - began
            self.server.default = Reply()
            for gate in self.server.held:
                gate.set()  # a stalled reply, past its deadline, is let go
            if fault is not None and len(self.server.exchanges) > exchanges:
                self.run_report.faults.append(f"{fault} provider")
                if took > DEADLINE * 4 + ALLOWANCE:
                    self._fail(f"a {fault} provider held a round {took:.1f} s")
                if self.replaced == replaced:
                    self._fail(f"a {fault} provider's reply was not replaced, or not reported")

    def _answers(self, questions: Any) -> dict[str, Any]:
        """A round for the first question to answer: an option (the "Other (specify)" one with
        a text, now and then), a follow-up's text, or a blank."""
        asked = [q for q in questions if q.depends_on_question_id is None]
        if not asked:
            return {}
        question = asked[0]
        if question.id in FOLLOW_UPS:
            return {question.id: FOLLOW_UPS[question.id]}
        options = list(question.options or ())
        kind = self.random.random()
        if options and kind < 0.8:
            return {question.id: self.random.choice(options[:-1] or options)}
        if options and kind < 0.9:
            return {question.id: options[-1], f"{question.id}__other": "CockroachDB"}
        return {question.id: ""}

    # -- the model -------------------------------------------------------------------------------

    def _stored(self, session_id: str) -> tuple[list[dict[str, Any]], bool] | None:
        """The rounds the store keeps for the session, read past the faults, and whether the
        engine was done (Preflights' own follow-ups then); None once it is gone."""
        session = StoreSessionAdapter(self.faulty.inner).get(session_id)
        if session is None:
            return None
        return [dict(r) for r in recorded_rounds(session)], bool(session.core_questions_asked)

    def _check(self, session_id: str, known: list[dict[str, Any]], *, acknowledged: bool) -> bool:
        """The stored rounds begin with every acknowledged one; False once the session is gone."""
        stored = self._stored(session_id)
        if stored is None:
            self._event(f"{KEY_PREFIX}{session_id} gone")
            return False
        if stored[0][: len(known)] != known:
            what = "acknowledged" if acknowledged else "an error"
            self._fail(f"{session_id}: after {what}, the store lost or forked acknowledged rounds")
        return True

    def _documented(self, where: str, error: PreflightFsmError) -> None:
        self._event(f"{where} {type(error).__name__}")
        if not isinstance(error, SessionConflict | StoreUnavailable):
            self._fail(f"{where} raised an undocumented {type(error).__name__}: {error}")

    def _replaced(self, replacement: Any) -> None:
        self.replaced += 1
        self._event(f"replaced: {replacement.reason}")

    def _event(self, text: str) -> None:
        self.run_report.events.append(text)

    def _fail(self, text: str) -> None:
        report = self.run_report
        report.failures.append(f"seed {report.seed} ({report.backend}, llm) {text}")
        self._event(f"FAILURE {text}")


def _threads() -> int:
    """This process's threads, but the provider server's own (one a request it answers)."""
    return sum("process_request" not in t.name for t in threading.enumerate())


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in os.environ for the block (the SDKs read their base URL there)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def simulate(seeds: range, backends: tuple[str, ...], sessions: int) -> dict[str, list[Report]]:
    """Every seed on every backend (memory, sqlite), one provider server for all."""
    reports: dict[str, list[Report]] = {}
    with llm_server() as server, tempfile.TemporaryDirectory(prefix="sim-llm-") as folder:
        repo = Path(folder) / "repo"
        subprocess.run(["git", "init", "--quiet", str(repo)], check=True)
        for backend in backends:
            with backend_factory(backend) as make_store:
                reports[backend] = [
                    LLMSimulation(seed, backend, make_store, sessions, server, repo).run()
                    for seed in seeds
                ]
    return reports
