"""`preflight-fsm start/answer/show/list/delete`: the installed command end to end in separate
processes (SQLite default store and Redis), then its output and exit codes, mostly in-process
(typer's CliRunner) to keep the suite fast."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from preflight_fsm.cli import app
from preflight_fsm.cli import chat as _chat  # noqa: F401 - register commands
from preflight_fsm.cli.sessions import (
    EXIT_CONFLICT,
    EXIT_CORRUPT,
    EXIT_FINISHED,
    EXIT_INVALID_ANSWERS,
    EXIT_STORE_UNAVAILABLE,
    EXIT_UNKNOWN_SESSION,
    EXIT_USAGE,
    parse_pairs,
)
from preflight_fsm.store import Sessions, SqliteStore
from store_backends import flush, free_port, running_redis

TIMEOUT = 30.0


def _command() -> str:
    beside = Path(sys.executable).parent / "preflight-fsm"
    found = str(beside) if beside.exists() else shutil.which("preflight-fsm")
    assert found, "the preflight-fsm command is not installed"
    return found


COMMAND = _command()


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory, also the in-process one, and no PREFLIGHT_FSM_* settings."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("PREFLIGHT_FSM_"):
            monkeypatch.delenv(name)
    return tmp_path


class _Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _invoke(*args: str, stdin: str = "") -> _Result:
    """The command run in this process (the cwd fixture's directory is the working one)."""
    result = CliRunner().invoke(app, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return _Result(result.exit_code, result.stdout, result.stderr)


def _ok(*args: str, stdin: str = "") -> dict[str, Any]:
    done = _invoke(*args, "--json", stdin=stdin)
    assert 0 == done.returncode, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _run(
    cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFLIGHT_FSM_")}
    environ.update(env or {})
    return subprocess.run(
        [COMMAND, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=environ,
        check=False,
    )


def _json(cwd: Path, *args: str, **kwargs: Any) -> dict[str, Any]:
    done = _run(cwd, *args, "--json", **kwargs)
    assert 0 == done.returncode, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# -- done when: start, then answer in another process ------------------------------------------


def test_start_then_answer_completes_a_session_in_the_default_store(cwd: Path) -> None:
    """start and answer, each its own process, complete a session kept in
    .preflight-fsm/sessions.sqlite3 under the working directory."""
    started = _json(cwd, "start", "Add a new feature")
    session_id = started["session_id"]
    assert (1, "NeedCategory") == (started["version"], started["turn"]["state"])
    assert (cwd / ".preflight-fsm" / "sessions.sqlite3").is_file()
    second = _json(cwd, "answer", session_id, "change_category=Database")
    assert (2, ["db_type"]) == (second["version"], second["turn"]["missing_info"])
    done = _json(cwd, "answer", session_id, "db_type=postgresql")
    assert (3, "Done", True) == (done["version"], done["turn"]["state"], done["turn"]["finished"])
    assert {"category": "Database", "fields": [["Type", "PostgreSQL"]], "references": []} == done[
        "turn"
    ]["patch"]
    assert done == _json(cwd, "show", session_id)


def test_start_then_answer_completes_a_session_in_redis(cwd: Path, redis_url: str) -> None:
    """With --store redis://..., start and answer in separate processes complete a session, and
    nothing is written to the working directory."""
    flush(redis_url)
    started = _json(cwd, "start", "Add OAuth login", "--store", redis_url)
    done = _json(cwd, "answer", started["session_id"], "auth_strategy=OAuth", "--store", redis_url)
    assert ("Done", [["Strategy", "OAuth"]]) == (
        done["turn"]["state"],
        done["turn"]["patch"]["fields"],
    )
    assert [] == list(cwd.iterdir())
    listed = _json(cwd, "list", "--store", redis_url)["sessions"]
    assert [started["session_id"]] == [s["session_id"] for s in listed]


def test_the_environment_names_the_store(cwd: Path) -> None:
    """PREFLIGHT_FSM_STORE picks the store file when --store is not given."""
    env = {"PREFLIGHT_FSM_STORE": str(cwd / "elsewhere.sqlite3")}
    session_id = _json(cwd, "start", "Add OAuth login", env=env)["session_id"]
    assert not (cwd / ".preflight-fsm").exists()
    with SqliteStore(cwd / "elsewhere.sqlite3") as store:
        assert [session_id] == store.list()


# -- human output ---------------------------------------------------------------------------------


def test_start_prints_the_id_the_question_and_how_to_answer(cwd: Path) -> None:
    """Without --json, start prints the session id, the question with its id and options, its
    companion, and the answer command to run next."""
    done = _run(cwd, "start", "Add OAuth login")
    assert 0 == done.returncode
    with SqliteStore(cwd / ".preflight-fsm" / "sessions.sqlite3") as store:
        (session_id,) = store.list()
    lines = done.stdout.splitlines()
    assert f"session  {session_id}" == lines[0]
    assert "Which authentication approach?  [auth_strategy]" in lines
    assert "  3. Magic Link" in lines
    assert any("auth_strategy__other=TEXT" in line for line in lines)
    assert f"answer:  preflight-fsm answer {session_id} auth_strategy=1" == lines[-1]


def test_a_finished_session_prints_its_outcome(cwd: Path) -> None:
    """answer prints the patch and hint once the session is Done."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("answer", session_id, "auth_strategy=Magic Link")
    assert 0 == done.returncode
    assert done.stdout.endswith(
        "Category: Authentication\nStrategy: Magic Link\nDecision hint: adr\n"
    )


def test_list_prints_a_table(cwd: Path) -> None:
    """list prints one row per session with its state, turn, age and intention."""
    assert _invoke("list").stdout.startswith("no sessions in .preflight-fsm/sessions.sqlite3")
    session_id = _ok("start", "Add OAuth login")["session_id"]
    lines = _invoke("list").stdout.splitlines()
    assert ["SESSION", "STATE", "TURN", "CHANGED", "INTENTION"] == lines[0].split()
    row = lines[1].split()
    assert [session_id, "NeedPrimaryField", "1"] == row[:3]
    assert ["ago", "Add", "OAuth", "login"] == row[4:]


def test_delete_prints_what_it_deleted(cwd: Path) -> None:
    """delete confirms the id, and the session is then unknown."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    assert f"deleted {session_id}\n" == _invoke("delete", session_id).stdout
    assert EXIT_UNKNOWN_SESSION == _invoke("show", session_id).returncode


# -- answers input --------------------------------------------------------------------------------


def test_answers_come_as_json_or_from_stdin(cwd: Path) -> None:
    """--answers takes a JSON object and '-' reads one from stdin (of the real process); both
    step the session."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    _ok("answer", session_id, "--answers", '{"change_category": "Other (specify)"}')
    done = _json(cwd, "answer", session_id, "-", stdin='{"change_category__other": "Billing"}')
    assert {"category": "Other", "fields": [["Description", "Add a new feature"]]} == {
        k: done["turn"]["patch"][k] for k in ("category", "fields")
    }


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["auth_strategy=OAuth"], [("auth_strategy", "OAuth")]),
        (["a=x=y"], [("a", "x=y")]),
        (["a="], [("a", "")]),
        ([" a =OAuth"], [("a", "OAuth")]),
    ],
    ids=["one", "equals-in-value", "blank-value", "padded-key"],
)
def test_key_value_pairs_split_at_the_first_equals_sign(
    pairs: list[str], expected: list[tuple[str, str]]
) -> None:
    """key=value splits at the first '='; the key is stripped, the value kept as typed."""
    assert expected == parse_pairs(pairs)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        ([], ""),
        (["novalue"], ""),
        (["=x"], ""),
        (["--answers", "[1]"], ""),
        (["--answers", "{nope"], ""),
        (["a=b", "--answers", "{}"], ""),
        (["-", "--answers", "{}"], "{}"),
        (["-"], "not json"),
    ],
    ids=[
        "none",
        "no-equals",
        "no-key",
        "not-an-object",
        "not-json",
        "pairs-and-json",
        "stdin-and-json",
        "stdin-not-json",
    ],
)
def test_malformed_answers_input_is_a_usage_error(cwd: Path, args: list[str], stdin: str) -> None:
    """Missing, malformed or doubled answers input exits with the usage code, touching nothing."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("answer", session_id, *args, stdin=stdin)
    assert (EXIT_USAGE, "") == (done.returncode, done.stdout)
    assert done.stderr.startswith("preflight-fsm: ")
    assert 1 == _ok("show", session_id)["version"]


def test_malformed_input_is_a_usage_error_for_the_real_command(cwd: Path) -> None:
    """The installed command exits 2 on malformed answers, saying what to send, no traceback."""
    done = _run(cwd, "answer", "some-id", "novalue")
    assert EXIT_USAGE == done.returncode
    assert "'novalue' is not question_id=answer" in done.stderr
    assert "Traceback" not in done.stderr


# -- exit codes -----------------------------------------------------------------------------------


def test_invalid_answers_print_the_feedback_in_the_json_error(cwd: Path) -> None:
    """Refused answers exit 3; with --json one error object on stdout carries error, message,
    exit_code and the engine's structured feedback; the stored session is unchanged."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("answer", session_id, "colour=blue", "--json")
    assert EXIT_INVALID_ANSWERS == done.returncode
    error = json.loads(done.stdout)
    assert ("invalid_answers", EXIT_INVALID_ANSWERS) == (error["error"], error["exit_code"])
    feedback = error["feedback"]
    assert ("validation_failed", ["colour"]) == (
        feedback["result"],
        feedback["issues"]["unknown"],
    )
    assert ["auth_strategy"] == [m["field"] for m in feedback["issues"]["missing"]]
    assert 1 == _ok("show", session_id)["version"]


def test_invalid_answers_are_explained_to_a_person_by_question_text(cwd: Path) -> None:
    """Without --json, refused answers are explained on stderr, naming the question's text."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("answer", session_id, "colour=blue")
    assert (EXIT_INVALID_ANSWERS, "") == (done.returncode, done.stdout)
    assert '"Which authentication approach?" is missing' in done.stderr


def test_an_unknown_session_exits_4(cwd: Path) -> None:
    """show, answer and delete of an id never stored exit 4; --json prints the error object."""
    for command in (["show"], ["answer", "--answers", "{}"], ["delete"]):
        done = _invoke(command[0], "no-such-session", *command[1:])
        assert EXIT_UNKNOWN_SESSION == done.returncode, done.stderr
        assert "no session has the id 'no-such-session'" in done.stderr
    done = _invoke("show", "no-such-session", "--json")
    assert {
        "error": "session_not_found",
        "exit_code": EXIT_UNKNOWN_SESSION,
        "session_id": "no-such-session",
    } == {k: v for k, v in json.loads(done.stdout).items() if k not in ("message", "store")}
    assert "store searched: .preflight-fsm/sessions.sqlite3" in json.loads(done.stdout)["message"]


def test_an_expired_session_exits_4_and_is_removed(cwd: Path) -> None:
    """A session started with --expire-after expires after that long, whatever later commands
    say: answer exits 4 saying it expired (start again); then it is unknown. (Real processes:
    the clock moves between them.)"""
    session_id = _json(cwd, "start", "Add OAuth login", "--expire-after", "0.001")["session_id"]
    done = _run(cwd, "answer", session_id, "auth_strategy=OAuth")
    assert EXIT_UNKNOWN_SESSION == done.returncode
    assert "expired" in done.stderr
    assert "start a new session" in done.stderr
    done = _invoke("show", session_id, "--json")
    assert "session_not_found" == json.loads(done.stdout)["error"]


def test_a_finished_session_exits_6(cwd: Path) -> None:
    """Answering a session that already ended exits 6 and writes nothing."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    _ok("answer", session_id, "auth_strategy=OAuth")
    done = _invoke("answer", session_id, "auth_strategy=OAuth", "--json")
    assert (EXIT_FINISHED, "session_finished") == (
        done.returncode,
        json.loads(done.stdout)["error"],
    )
    assert 2 == _ok("show", session_id)["version"]


def test_a_corrupt_session_exits_7_and_is_flagged_in_list(cwd: Path) -> None:
    """A tampered row makes show exit 7 for that session; list still lists every session, the
    tampered one flagged corrupt; delete removes it."""
    bad = _ok("start", "Add OAuth login")["session_id"]
    good = _ok("start", "Add OAuth login")["session_id"]
    db = sqlite3.connect(cwd / ".preflight-fsm" / "sessions.sqlite3")
    try:
        with db:
            db.execute(
                "UPDATE sessions SET snapshot = replace(snapshot, 'OAuth', 'Evil') WHERE id = ?",
                (bad,),
            )
    finally:
        db.close()
    done = _invoke("show", bad)
    assert EXIT_CORRUPT == done.returncode
    assert "digest" in done.stderr
    listed = {s["session_id"]: s["corrupt"] for s in _ok("list")["sessions"]}
    assert {bad: True, good: False} == listed
    assert "CORRUPT" in _invoke("list").stdout
    _ok("delete", bad)
    assert [good] == [s["session_id"] for s in _ok("list")["sessions"]]


def test_an_unreachable_store_exits_8(cwd: Path) -> None:
    """A Redis URL nobody listens on exits 8, naming the store, without a traceback."""
    pytest.importorskip("redis")
    done = _run(cwd, "list", "--store", f"redis://127.0.0.1:{free_port()}/0")
    assert EXIT_STORE_UNAVAILABLE == done.returncode
    assert "cannot reach the session store" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_invalid_intention_is_a_usage_error(cwd: Path) -> None:
    """start with a blank intention exits 2 and stores nothing."""
    done = _invoke("start", "  ", "--json")
    assert (EXIT_USAGE, "invalid_intention") == (done.returncode, json.loads(done.stdout)["error"])
    assert [] == _ok("list")["sessions"]


def test_a_lost_race_exits_5(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When another process steps the session between this command's read and its write, answer
    exits 5 and the other process's step is what stays stored."""
    path = cwd / "sessions.sqlite3"
    with SqliteStore(path) as store:
        session_id = Sessions(store).start("Add a new feature").id
    load = Sessions.load

    def load_then_lose_the_race(self: Sessions, sid: str) -> Any:
        loaded = load(self, sid)
        with SqliteStore(path) as other:
            machine, record = load(Sessions(other), sid)
            machine.step({"change_category": "Frontend"})
            Sessions(other).save(sid, machine, record.version)
        return loaded

    monkeypatch.setattr(Sessions, "load", load_then_lose_the_race)
    done = _invoke("answer", session_id, "change_category=Backend", "--store", str(path), "--json")
    assert (EXIT_CONFLICT, "session_conflict") == (
        done.returncode,
        json.loads(done.stdout)["error"],
    )
    monkeypatch.undo()
    with SqliteStore(path) as store:
        shown = Sessions(store).show(session_id)
    assert (2, ("frontend_framework",)) == (shown.version, shown.turn.missing_info)


def test_help_documents_the_exit_codes(cwd: Path) -> None:
    """Every session command's --help lists the exit codes."""
    for command in ("start", "answer", "show", "list", "delete"):
        done = _invoke(command, "--help")
        assert "4 unknown or expired session" in " ".join(done.stdout.split()), command


# -- chat --session -------------------------------------------------------------------------------


def test_chat_resumes_a_stored_session_and_saves_every_step(cwd: Path) -> None:
    """chat --session asks the stored session's current question; each answered step is saved,
    so input ending mid-session leaves it at its last step, and a later chat finishes it."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _run(cwd, "chat", "--session", session_id, stdin="3\n")
    assert done.stdout.startswith("What type of change is this?")
    assert 1 == done.returncode  # input ended before the session finished
    shown = _ok("show", session_id)
    assert (2, ["db_type"]) == (shown["version"], shown["turn"]["missing_info"])
    done = _run(cwd, "chat", "--session", session_id, stdin="4\nSQLite\n")
    assert 0 == done.returncode, done.stderr
    assert done.stdout.startswith("Which database type?")
    assert done.stdout.endswith("Category: Database\nType: SQLite\nDecision hint: adr\n")
    shown = _ok("show", session_id)
    assert (3, "Done") == (shown["version"], shown["turn"]["state"])


def test_chat_refuses_a_finished_or_unknown_session(cwd: Path) -> None:
    """chat --session on a finished session exits 6, on an unknown one 4; with both an
    intention and --session it is a usage error."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    _ok("answer", session_id, "auth_strategy=OAuth")
    assert EXIT_FINISHED == _invoke("chat", "--session", session_id).returncode
    assert EXIT_UNKNOWN_SESSION == _invoke("chat", "--session", "nope").returncode
    assert EXIT_USAGE == _invoke("chat", "Add OAuth login", "--session", session_id).returncode
