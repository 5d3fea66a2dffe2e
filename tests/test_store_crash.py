"""Crash safety: a writer (SQLite, PostgreSQL) killed with SIGKILL mid-loop leaves every session
whole.

The writer reports each write before and after it (one atomic pipe message each), so the test
knows, for every session, the last version confirmed and the one possibly in flight when it died.
Each writer is forked from the run's fork server (``store_backends.FORK_SERVER``: this module
and the stores already imported, nothing inherited from the test's process).
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from store_backends import FORK_SERVER, open_backend

SEED = 20240611
ROUNDS = 8
SESSIONS = 5


def _content(session_id: str, version: int, rng: random.Random) -> str:
    """A snapshot stand-in that says which version it is, padded so writes span many pages."""
    pad = "x" * rng.randint(0, 40_000)
    return json.dumps({"session": session_id, "version": version, "pad": pad})


def _writer(backend: str, location: str, ids: list[str], seed: int, report: Connection) -> None:
    """Write forever: pick a session, read it, write its next version; report around each put."""
    rng = random.Random(seed)
    with open_backend(backend, location) as store:
        report.send_bytes(b"ready")
        while True:
            session_id = rng.choice(ids)
            version = store.get(session_id).version
            report.send_bytes(f"try {session_id} {version + 1}".encode())
            store.put(session_id, _content(session_id, version + 1, rng), version)
            report.send_bytes(f"done {session_id} {version + 1}".encode())


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "postgres":
        from postgres_server import empty

        url: str = request.getfixturevalue("postgres_url")
        empty(url)
        return "postgres", url
    return "sqlite", str(tmp_path / "sessions.sqlite3")


def test_a_killed_writer_leaves_every_session_at_its_old_or_new_version(
    location: tuple[str, str],
) -> None:
    """Killing a writer with SIGKILL at random points (fixed seed) leaves the store intact and
    readable (a SQLite file passes its integrity check), and each session at its last confirmed
    version or the one being written, with that version's full content, over several kill
    rounds."""
    rng = random.Random(SEED)
    backend, path = location
    ids = [f"s{n}" for n in range(SESSIONS)]
    with open_backend(backend, path) as store:
        for session_id in ids:
            store.create(session_id, _content(session_id, 1, rng))
    confirmed = dict.fromkeys(ids, 1)
    writes = 0
    for round_ in range(ROUNDS):
        receiver, sender = FORK_SERVER.Pipe(duplex=False)
        args = (backend, path, ids, SEED + round_, sender)
        writer = FORK_SERVER.Process(target=_writer, args=args)
        writer.start()
        sender.close()
        assert receiver.poll(60), "the writer never started"
        assert b"ready" == receiver.recv_bytes()
        time.sleep(rng.uniform(0.0, 0.1))  # the kill point: a write takes milliseconds
        writer.kill()
        writer.join()
        assert -signal.SIGKILL == writer.exitcode
        in_flight: dict[str, int] = {}
        try:
            while True:
                kind, session_id, version = receiver.recv_bytes().decode().split()
                if kind == "try":
                    in_flight[session_id] = int(version)
                else:
                    confirmed[session_id] = int(version)
                    del in_flight[session_id]
                    writes += 1
        except EOFError:
            receiver.close()

        if backend == "sqlite":
            db = sqlite3.connect(path)
            try:
                assert [("ok",)] == db.execute("PRAGMA integrity_check").fetchall()
            finally:
                db.close()
        with open_backend(backend, path) as store:
            assert ids == store.list()
            for session_id in ids:
                record = store.get(session_id)
                allowed = {confirmed[session_id], in_flight.get(session_id, confirmed[session_id])}
                assert record.version in allowed, (round_, session_id, record.version, allowed)
                content = json.loads(record.snapshot)
                assert (session_id, record.version) == (content["session"], content["version"])
                confirmed[session_id] = record.version
    assert writes > ROUNDS, "the writer was killed before it wrote anything: no crash was tested"
