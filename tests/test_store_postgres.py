"""What is particular to the PostgreSQL store: its URL's password, an unreachable or refusing
server, its durability warning, and sessions shared by processes (the conformance suite, the
concurrency and the kill -9 tests run it beside the other stores)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import warm_processes
from postgres_server import PASSWORD, empty
from preflight_fsm.errors import StoreUnavailable
from preflight_fsm.store import open_store, shown_location
from store_backends import free_port

pytest.importorskip("psycopg")


def _wrong_password(url: str) -> str:
    return url.replace(PASSWORD, "not-the-password-42")


def _preflight_fsm(cwd: Path, *args: str) -> dict[str, Any]:
    """The command in a process of its own, its --json output."""
    command = warm_processes.program()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFLIGHT_FSM_")}
    done = subprocess.run(
        [command, *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
        check=False,
    )
    assert 0 == done.returncode, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_the_location_is_shown_without_its_password(postgres_url: str) -> None:
    """A store's location, as every message prints it, has its password replaced by ***."""
    with open_store(postgres_url) as store:
        assert PASSWORD not in store.location
        assert "postgres:***@127.0.0.1" in store.location
    assert store.location == shown_location(postgres_url)


def test_a_wrong_password_is_unavailable_without_showing_either_password(
    postgres_url: str,
) -> None:
    """A refused login raises StoreUnavailable naming the server and the refusal, never a
    password (neither the one sent nor the right one)."""
    url = _wrong_password(postgres_url)
    with pytest.raises(StoreUnavailable, match="password authentication failed") as caught:
        open_store(url)
    assert "not-the-password-42" not in str(caught.value)
    assert PASSWORD not in str(caught.value)


def test_an_unreachable_server_is_unavailable_naming_it() -> None:
    """A PostgreSQL URL nobody listens on raises StoreUnavailable naming where, in bounded time."""
    url = f"postgresql://me:hunter2@127.0.0.1:{free_port()}/db"
    with pytest.raises(StoreUnavailable, match=r"cannot reach .*127\.0\.0\.1") as caught:
        open_store(url)
    assert "hunter2" not in str(caught.value)


def test_a_server_without_fsync_is_named_by_the_durability_warning(postgres_url: str) -> None:
    """durability_warning() says that a PostgreSQL running with fsync off may lose steps (the
    throw-away server runs so); check() says the store answers."""
    with open_store(postgres_url) as store:
        assert "fsync" in (store.durability_warning() or "")
        assert store.check() is None


def test_start_and_answer_in_two_processes_share_one_session(
    tmp_path: Path, postgres_url: str
) -> None:
    """With --store postgresql://..., a session started by one process is answered by another,
    and listed by a third, nothing written to the working directory."""
    empty(postgres_url)
    started = _preflight_fsm(tmp_path, "start", "Add OAuth login", "--store", postgres_url)
    session_id = started["session_id"]
    done = _preflight_fsm(
        tmp_path, "answer", session_id, "auth_strategy=OAuth", "--store", postgres_url
    )
    assert ("Done", 2) == (done["turn"]["state"], done["version"])
    listed = _preflight_fsm(tmp_path, "list", "--store", postgres_url)["sessions"]
    assert [session_id] == [s["session_id"] for s in listed]
    assert [] == list(tmp_path.iterdir())
