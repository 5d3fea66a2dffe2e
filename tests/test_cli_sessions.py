"""`preflight-fsm start/answer/show/list/delete`: the installed command end to end in separate
processes (SQLite default store and Redis), then its output and exit codes, mostly in-process
(typer's CliRunner) to keep the suite fast."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import warm_processes
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


COMMAND = warm_processes.program()  # forked from a warm interpreter (warm_processes)


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
    """``preflight-fsm ARGS`` in ``cwd``, run in this process (the command line's own entry,
    through click's test runner): what the process would print and exit with. The tests of the
    process boundary (a session another process finished, what is on disk once commands exit,
    undecodable bytes in argv) use :func:`_process`."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PREFLIGHT_FSM_")}
    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            app, list(args), input=stdin, env={**unset, **(env or {})}, catch_exceptions=False
        )
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def _process(
    cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``preflight-fsm ARGS`` as a process of its own in ``cwd``, bounded by a timeout."""
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


def _json(cwd: Path, *args: str, process: bool = False, **kwargs: Any) -> dict[str, Any]:
    done = (_process if process else _run)(cwd, *args, "--json", **kwargs)
    assert 0 == done.returncode, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# -- done when: start, then answer in another process ------------------------------------------


def test_start_then_answer_completes_a_session_in_the_default_store(cwd: Path) -> None:
    """start and answer, each its own process, complete a session kept in
    .preflight-fsm/sessions.sqlite3 under the working directory."""
    started = _json(cwd, "start", "Add a new feature", process=True)
    session_id = started["session_id"]
    assert (1, "NeedCategory") == (started["version"], started["turn"]["state"])
    assert (cwd / ".preflight-fsm" / "sessions.sqlite3").is_file()
    second = _json(cwd, "answer", session_id, "change_category=Database", process=True)
    assert (2, ["db_type"]) == (second["version"], second["turn"]["missing_info"])
    done = _json(cwd, "answer", session_id, "db_type=postgresql", process=True)
    assert (3, "Done", True) == (done["version"], done["turn"]["state"], done["turn"]["finished"])
    assert {"category": "Database", "fields": [["Type", "PostgreSQL"]], "references": []} == done[
        "turn"
    ]["patch"]
    assert done == _json(cwd, "show", session_id)  # read back in this process


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


def test_the_environment_names_the_flow(cwd: Path) -> None:
    """PREFLIGHT_FSM_FLOW is the flow file when --flow is not given: sessions start on it, and
    later commands find it there, as PREFLIGHT_FSM_STORE's store."""
    flow = cwd / "mine.toml"
    flow.write_text('name = "mine"\n', encoding="utf-8")
    env = {"PREFLIGHT_FSM_FLOW": str(flow)}
    started = _json(cwd, "start", "Add OAuth login", env=env)
    answered = _json(cwd, "answer", started["session_id"], "auth_strategy=OAuth", env=env)
    assert ("933558696d03ac0d" != started["flow_fingerprint"], "Done") == (
        True,
        answered["turn"]["state"],
    )


# -- human output ---------------------------------------------------------------------------------


def test_show_names_the_question_it_is_asking(cwd: Path) -> None:
    """Past the type of change, the status line quotes the question the session asks."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("show", session_id)
    assert 'status   asking "Which authentication approach?" (turn 1' in done.stdout


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


def _start_with_ids(monkeypatch: pytest.MonkeyPatch, *ids: str) -> None:
    """Start one session under each of ``ids`` (the uuid4 they are drawn from, fixed)."""
    import uuid

    drawn = iter(uuid.UUID(i) for i in ids)
    monkeypatch.setattr(uuid, "uuid4", lambda: next(drawn))
    for _ in ids:
        _ok("start", "Add OAuth login")


def test_a_unique_prefix_of_a_session_id_names_that_session(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """show, answer and delete take the start of an id that begins one session only (as git)."""
    _start_with_ids(
        monkeypatch, "7b466035-0000-4000-8000-000000000001", "9c0a0000-0000-4000-8000-000000000002"
    )
    shown = _ok("show", "7b46")
    answered = _ok("answer", "7b466", "auth_strategy=OAuth")
    deleted = _ok("delete", "9c")
    first, second = "7b466035-0000-4000-8000-000000000001", "9c0a0000-0000-4000-8000-000000000002"
    assert (first, first, second) == (
        shown["session_id"],
        answered["session_id"],
        deleted["session_id"],
    )


def test_a_prefix_of_several_session_ids_is_refused_listing_them(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ambiguous prefix exits 2 naming every session it begins; nothing is changed."""
    first, second = "7b466035-0000-4000-8000-000000000001", "7b46ffff-0000-4000-8000-000000000002"
    _start_with_ids(monkeypatch, first, second)
    done = _invoke("delete", "7b46")
    assert (2, True, True) == (done.returncode, first in done.stderr, second in done.stderr)
    assert 2 == len(_ok("list")["sessions"])


def test_list_json_gives_the_store_as_a_path_and_whether_it_exists(cwd: Path) -> None:
    """Before the first start, list --json's store is the path a script can open, and
    store_exists says it is not there yet (no sentence in place of the path)."""
    store = str(cwd / ".preflight-fsm" / "sessions.sqlite3")
    before = _ok("list")
    _ok("start", "Add OAuth login")
    after = _ok("list")
    assert (store, False, store, True) == (
        before["store"],
        before["store_exists"],
        after["store"],
        after["store_exists"],
    )


def test_list_prints_a_table(cwd: Path) -> None:
    """list prints one row per session with its state, turn, age, flow version and intention."""
    store = cwd / ".preflight-fsm" / "sessions.sqlite3"
    assert _invoke("list").stdout.startswith(f"no sessions in {store}")
    session_id = _ok("start", "Add OAuth login")["session_id"]
    lines = _invoke("list").stdout.splitlines()
    assert ["SESSION", "STATE", "TURN", "CHANGED", "FLOW", "INTENTION"] == lines[0].split()
    row = lines[1].split()
    assert [session_id, "NeedPrimaryField", "1"] == row[:3]
    assert ["ago", "default@f89c69ac6331d44d", "(current)", "Add", "OAuth", "login"] == row[4:]


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
    done = _process(cwd, "answer", "some-id", "novalue")
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
    store = cwd / ".preflight-fsm" / "sessions.sqlite3"
    assert f"store searched: {store}" in json.loads(done.stdout)["message"]


def test_an_expired_session_exits_4_and_is_removed(cwd: Path) -> None:
    """A session started with --expire-after expires after that long, whatever later commands
    say: answer exits 4 saying it expired (start again); then it is unknown. (Real processes:
    the clock moves between them.)"""
    session_id = _json(cwd, "start", "Add OAuth login", "--expire-after", "0.001")["session_id"]
    done = _run(cwd, "answer", session_id, "auth_strategy=OAuth")
    assert EXIT_UNKNOWN_SESSION == done.returncode
    assert "expired" in done.stderr
    assert "start a new session" in done.stderr
    shown = _invoke("show", session_id, "--json")
    assert "session_not_found" == json.loads(shown.stdout)["error"]


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
    """Every session command's --help lists its exit codes (which ones: test_cli_help.py)."""
    for command in ("start", "answer", "show", "list", "delete"):
        done = _invoke(command, "--help")
        assert "Exit codes: 0 done; 2 usage error" in " ".join(done.stdout.split()), command


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


# -- issue 14: stores are never created, adopted or mistaken by accident ---------------------------


@pytest.mark.parametrize(
    "location",
    ["reddis://localhost:6379/0", "http://x", "s3:bucket/sessions"],
    ids=["mistyped-redis", "http", "other-scheme"],
)
@pytest.mark.parametrize("command", ["list", "start"])
def test_an_unknown_store_scheme_is_refused_and_creates_nothing(
    cwd: Path, location: str, command: str
) -> None:
    """A location with a scheme no store has exits 8 naming what is accepted; no file or
    directory of that name appears."""
    args = ["start", "Add OAuth login"] if command == "start" else ["list"]
    done = _invoke(*args, "--store", location, "--json")
    error = json.loads(done.stdout)
    assert (EXIT_STORE_UNAVAILABLE, "store_unavailable") == (done.returncode, error["error"])
    assert "redis://" in error["message"]
    assert [] == list(cwd.iterdir())


@pytest.mark.parametrize(
    "args",
    [["list"], ["show", "s-1"], ["answer", "s-1", "a=b"], ["delete", "s-1"]],
    ids=["list", "show", "answer", "delete"],
)
def test_commands_other_than_start_never_create_a_store(cwd: Path, args: list[str]) -> None:
    """On a store path that does not exist (nor its directory), list, show, answer and delete
    create nothing; the message says the store does not exist yet."""
    path = cwd / "nonexistent" / "dir" / "x.db"
    done = _invoke(*args, "--store", str(path))
    assert done.returncode in (0, EXIT_UNKNOWN_SESSION)
    assert "does not exist yet" in done.stdout + done.stderr
    assert [] == list(cwd.iterdir())


def test_an_existing_empty_file_is_refused_and_left_empty(cwd: Path) -> None:
    """start on an existing empty file exits 8 and does not turn it into a database."""
    (cwd / "empty.db").write_bytes(b"")
    done = _invoke("start", "Add OAuth login", "--store", "empty.db")
    assert EXIT_STORE_UNAVAILABLE == done.returncode
    assert "is an empty file, not a preflight-fsm session store" in done.stderr
    assert b"" == (cwd / "empty.db").read_bytes()


def test_another_applications_database_is_refused_and_left_as_it_was(cwd: Path) -> None:
    """A SQLite database of another application is refused by start and list (exit 8); it gains
    no table and stays in its own journal mode."""
    db = sqlite3.connect(cwd / "app.db")
    with db:
        db.execute("CREATE TABLE t (a)")
    db.close()
    for args in (["start", "Add OAuth login"], ["list"]):
        done = _invoke(*args, "--store", "app.db")
        assert EXIT_STORE_UNAVAILABLE == done.returncode
        assert "a SQLite database of another application" in done.stderr
    db = sqlite3.connect(cwd / "app.db")
    try:
        assert [("t",)] == db.execute("SELECT name FROM sqlite_master").fetchall()
        assert ("delete",) == db.execute("PRAGMA journal_mode").fetchone()
    finally:
        db.close()


def test_the_memory_store_is_refused_on_the_command_line(cwd: Path) -> None:
    """memory: cannot outlive one command, so the CLI refuses it as a usage error (exit 2)."""
    done = _invoke("start", "Add OAuth login", "--store", "memory:", "--json")
    assert (EXIT_USAGE, "usage") == (done.returncode, json.loads(done.stdout)["error"])
    assert "memory:" in json.loads(done.stdout)["message"]


def test_list_never_deletes_an_expired_session(cwd: Path) -> None:
    """list leaves out a session past its own expiry but does not remove it: it stays in the
    file, and show then says it expired rather than that it never existed."""
    session_id = _json(cwd, "start", "Add OAuth login", "--expire-after", "0.001")["session_id"]
    assert [] == _json(cwd, "list")["sessions"]
    db = sqlite3.connect(cwd / ".preflight-fsm" / "sessions.sqlite3")
    try:
        assert [(session_id,)] == db.execute("SELECT id FROM sessions").fetchall()
    finally:
        db.close()
    assert "session_expired" == json.loads(_invoke("show", session_id, "--json").stdout)["error"]


def test_a_session_keeps_the_expiry_it_started_with(cwd: Path) -> None:
    """--expire-after belongs to start and stays with the session: show reports it through
    expires_at, and later commands have no option to change it."""
    started = _json(cwd, "start", "Add OAuth login", "--expire-after", "3600")
    assert 3600 == pytest.approx(started["expires_at"] - started["updated_at"])
    shown = _json(cwd, "show", started["session_id"])
    assert 3600 == pytest.approx(shown["expires_at"] - shown["updated_at"])
    done = _invoke("answer", started["session_id"], "auth_strategy=1", "--expire-after", "1")
    assert EXIT_USAGE == done.returncode


def test_the_database_file_alone_holds_every_step_once_commands_exit(cwd: Path) -> None:
    """When no command runs, the steps are in the database file itself (the last connection
    folds the -wal file in): a copy of the file alone restores the last version."""
    session_id = _json(cwd, "start", "Improve the feedback form", process=True)["session_id"]
    _json(cwd, "answer", session_id, "change_category=3", process=True)
    _json(cwd, "answer", session_id, "db_type=1", process=True)
    copy = cwd / "copy"
    copy.mkdir()
    shutil.copy(cwd / ".preflight-fsm" / "sessions.sqlite3", copy / "sessions.sqlite3")
    shown = _json(copy, "show", session_id, "--store", "sessions.sqlite3")  # in this process
    assert (3, "Done") == (shown["version"], shown["turn"]["state"])


def test_a_damaged_store_schema_is_reported_without_a_traceback(cwd: Path) -> None:
    """A store whose schema text is not UTF-8 (a damaged file) exits 8 with one line."""
    _json(cwd, "start", "Add OAuth login")
    path = cwd / ".preflight-fsm" / "sessions.sqlite3"
    data = path.read_bytes()
    at = data.index(b"CREATE TABLE sessions")
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at + 2 :])
    done = _run(cwd, "list")
    assert EXIT_STORE_UNAVAILABLE == done.returncode
    assert done.stderr.startswith("preflight-fsm: ")
    assert "Traceback" not in done.stderr


# -- issue 14: Redis credentials, authentication and durability ----------------------------------


@pytest.fixture(scope="module")
def redis_with_password(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throw-away redis-server that requires the password 'topsecret'; yields host:port."""
    with running_redis(
        tmp_path_factory.mktemp("redis-auth"), options=("--requirepass", "topsecret")
    ) as url:
        yield url.removeprefix("redis://").removesuffix("/0")


@pytest.mark.parametrize(
    "userinfo", ["", ":wrongpass@", "default:wrongpass@"], ids=["none", "wrong", "user-wrong"]
)
def test_redis_authentication_errors_say_so_without_the_password(
    cwd: Path, redis_with_password: str, userinfo: str
) -> None:
    """A Redis that refuses the credentials exits 8 saying the credentials were refused; the
    password given never appears in the output."""
    done = _run(cwd, "list", "--store", f"redis://{userinfo}{redis_with_password}/0", "--json")
    error = json.loads(done.stdout)
    assert (EXIT_STORE_UNAVAILABLE, "store_unavailable") == (done.returncode, error["error"])
    assert "refused the credentials" in error["message"]
    assert "wrongpass" not in done.stdout + done.stderr


def test_the_redis_password_never_appears_in_output(cwd: Path) -> None:
    """An unreachable Redis named with a password is reported with the password as ***."""
    done = _run(cwd, "list", "--store", f"redis://:topsecret@127.0.0.1:{free_port()}/0")
    assert EXIT_STORE_UNAVAILABLE == done.returncode
    assert "topsecret" not in done.stdout + done.stderr
    assert ":***@127.0.0.1" in done.stderr


def test_the_right_redis_password_works(cwd: Path, redis_with_password: str) -> None:
    """With the password in the URL, a session starts and answers as on any Redis."""
    url = f"redis://:topsecret@{redis_with_password}/0"
    session_id = _json(cwd, "start", "Add OAuth login", "--store", url)["session_id"]
    assert (
        "Done"
        == _json(cwd, "answer", session_id, "auth_strategy=1", "--store", url)["turn"]["state"]
    )


def test_start_warns_when_redis_keeps_sessions_in_memory_only(cwd: Path, redis_url: str) -> None:
    """On a Redis without AOF or RDB save points, start still works and warns on stderr that a
    restart loses every session."""
    flush(redis_url)
    done = _run(cwd, "start", "Add OAuth login", "--store", redis_url, "--json")
    assert 0 == done.returncode
    assert "warning" in done.stderr
    assert "appendonly" in done.stderr
    json.loads(done.stdout)  # the warning never mixes into the JSON


# -- issue 14: answers typed as in chat ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "category"),
    [
        (["change_category=2"], "Backend"),
        (["change_category= 4 "], "Authentication"),
        (["change_category=Infra"], "Infra"),
    ],
    ids=["number", "padded-number", "name"],
)
def test_answer_maps_numbers_to_options_as_chat_does(
    cwd: Path, args: list[str], category: str
) -> None:
    """A number given for a choice question picks that option, counted from 1 as chat shows."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _ok("answer", session_id, *args)
    assert category == done["answers"]["change_category"]


def test_answer_text_sends_a_number_as_text(cwd: Path) -> None:
    """--text sends key=value answers as typed: 2 is then a custom category text (C5), which
    names no category, so the change is filed under Other."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _ok("answer", session_id, "change_category=2", "--text")
    assert ("Done", "Other") == (done["turn"]["state"], done["turn"]["patch"]["category"])


def test_answer_refuses_a_number_that_is_no_option(cwd: Path) -> None:
    """A number outside the options exits 2 naming the range and --text; nothing is written."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _invoke("answer", session_id, "change_category=9")
    assert EXIT_USAGE == done.returncode
    assert "choose a number from 1 to 6" in done.stderr
    assert 1 == _ok("show", session_id)["version"]


def test_an_empty_value_is_an_error_naming_the_key_not_a_decline(cwd: Path) -> None:
    """answer KEY= (an unset shell variable) exits 2 naming the key and skip; the session is
    untouched and still asks its question."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _invoke("answer", session_id, "change_category=", "--json")
    error = json.loads(done.stdout)
    assert (EXIT_USAGE, "usage") == (done.returncode, error["error"])
    assert "change_category=skip" in error["message"]
    assert (1, "NeedCategory") == (
        _ok("show", session_id)["version"],
        _ok("show", session_id)["turn"]["state"],
    )


def test_skip_declines_the_question(cwd: Path) -> None:
    """answer KEY=skip declines: NoPatch, the question left unanswered (C5)."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    assert "NoPatch" == _ok("answer", session_id, "auth_strategy=skip")["turn"]["state"]


def test_a_malformed_pair_names_no_unrelated_question(cwd: Path) -> None:
    """'foo' is refused with how to find the current question's id, not another question's."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _invoke("answer", session_id, "foo")
    assert EXIT_USAGE == done.returncode
    assert "auth_strategy" not in done.stderr
    assert "preflight-fsm show SESSION_ID" in done.stderr


# -- issue 14: one error format, no tracebacks -----------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["answer", "ID", "foo"], EXIT_USAGE),
        (["answer", "ID", "colour=blue"], EXIT_INVALID_ANSWERS),
        (["answer", "ID"], EXIT_USAGE),
        (["answer"], EXIT_USAGE),
        (["show", "nope"], EXIT_UNKNOWN_SESSION),
        (["start", " "], EXIT_USAGE),
        (["start", "x", "--expire-after", "-1"], EXIT_USAGE),
        (["list", "--bogus"], EXIT_USAGE),
        (["bogus"], EXIT_USAGE),
    ],
    ids=[
        "malformed-pair",
        "refused",
        "no-answers",
        "no-session-id",
        "unknown",
        "blank-intention",
        "bad-option-value",
        "unknown-option",
        "unknown-command",
    ],
)
def test_every_json_error_is_one_object_on_stdout(cwd: Path, args: list[str], code: int) -> None:
    """With --json, each failure prints exactly one JSON object on stdout holding error,
    message and exit_code, and exits with that code; nothing goes to stderr."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    args = [session_id if arg == "ID" else arg for arg in args]
    done = _invoke(*args, "--json")
    error = json.loads(done.stdout)
    assert code == done.returncode == error["exit_code"]
    assert {"error", "message", "exit_code"} <= set(error)
    assert "" == done.stderr


@pytest.mark.parametrize(
    "args",
    [["answer", "ID", "foo"], ["show", "nope"], ["list", "--bogus"], ["start"]],
    ids=["usage", "unknown-session", "unknown-option", "missing-argument"],
)
def test_every_error_line_has_one_prefix(cwd: Path, args: list[str]) -> None:
    """Without --json, every failure's message starts with 'preflight-fsm: ' on stderr."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke(*[session_id if arg == "ID" else arg for arg in args])
    assert 0 != done.returncode
    assert done.stderr.startswith("preflight-fsm: ")


def test_deeply_nested_json_answers_are_a_usage_error(cwd: Path) -> None:
    """A 100,000-deep JSON array on stdin exits 2 saying it is nested too deeply (no
    RecursionError)."""
    session_id = _json(cwd, "start", "Add OAuth login")["session_id"]
    done = _run(cwd, "answer", session_id, "-", stdin="[" * 100_000 + "]" * 100_000)
    assert EXIT_USAGE == done.returncode
    assert "nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr


def test_undecodable_arguments_and_stdin_are_usage_errors(cwd: Path) -> None:
    """Bytes that are not UTF-8 in an argument or on stdin exit 2 with one line, no traceback."""
    session_id = _json(cwd, "start", "Add OAuth login")["session_id"]
    for argv, stdin in (
        ([COMMAND.encode(), b"start", b"Add \xff login"], b""),
        ([COMMAND.encode(), b"answer", session_id.encode(), b"auth_strategy=\xff"], b""),
        ([COMMAND.encode(), b"answer", session_id.encode(), b"-"], b'{"auth_strategy": "\xff"}'),
    ):
        done = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, check=False)
        assert EXIT_USAGE == done.returncode
        assert b"not UTF-8" in done.stderr
        assert b"Traceback" not in done.stderr
    assert 1 == _json(cwd, "show", session_id)["version"]


# -- issue 14: snapshots out, version, list ----------------------------------------------------


def test_show_snapshot_writes_a_snapshot_the_engine_and_diagram_read(cwd: Path) -> None:
    """show --snapshot FILE writes the session's snapshot: it restores to the same turn, and
    `diagram --snapshot FILE` draws its path."""
    from preflight_fsm import ClarificationMachine

    session_id = _ok("start", "Improve the feedback form")["session_id"]
    _ok("answer", session_id, "change_category=3")
    assert 0 == _invoke("show", session_id, "--snapshot", "session.json").returncode
    restored = ClarificationMachine.from_snapshot((cwd / "session.json").read_text())
    assert ("NeedPrimaryField", ("db_type",)) == (restored.state, restored.turn.missing_info)
    assert (cwd / "session.json").read_text().strip() == _invoke(
        "show", session_id, "--snapshot", "-"
    ).stdout.strip()
    drawn = _run(cwd, "diagram", "--snapshot", "session.json")
    assert 0 == drawn.returncode, drawn.stderr


def test_version_prints_the_installed_version(cwd: Path) -> None:
    """--version prints the package's version and exits 0."""
    from importlib.metadata import version

    done = _invoke("--version")
    assert (0, f"preflight-fsm {version('preflight-fsm')}\n") == (done.returncode, done.stdout)


def test_list_sorts_by_last_change_and_shows_the_age(cwd: Path) -> None:
    """list puts the most recently changed session first, with its state and age."""
    older = _json(cwd, "start", "Add OAuth login")["session_id"]
    newer = _json(cwd, "start", "Improve the feedback form")["session_id"]
    _json(cwd, "answer", older, "auth_strategy=1")
    listed = _json(cwd, "list")["sessions"]
    assert [older, newer] == [s["session_id"] for s in listed]
    rows = _run(cwd, "list").stdout.splitlines()
    assert [older, "Done"] == rows[1].split()[:2]
    assert "ago" in rows[1]


def test_a_free_text_turn_says_to_type_text_not_a_number(cwd: Path) -> None:
    """A turn asking for text says so; only a choice says a number picks an option."""
    started = json.loads(_invoke("start", "Add OAuth login", "--json").stdout)
    shown = _invoke("answer", started["session_id"], "auth_strategy=Other (specify)").stdout
    assert "(your own text; skip declines the question)" in shown
    assert "a number picks" not in shown


def test_an_unknown_session_says_to_start_one_never_a_tool_that_lists(cwd: Path) -> None:
    """session_not_found says why a session may be gone and to start one."""
    done = _invoke("show", "nope")
    assert "(never started here, deleted, or expired); start a new one" in done.stderr
    assert "list the sessions" not in done.stderr


# -- who answered (answered_by) -------------------------------------------------------------------


def test_answer_records_each_step_as_typed_at_the_command_line(cwd: Path) -> None:
    """C9: `answer` steps say answered_by 'cli'; show --json lists each step and who decided."""
    session_id = _ok("start", "Improve the feedback form")["session_id"]
    _ok("answer", session_id, "change_category=Database")
    _ok("answer", session_id, "db_type=MySQL")
    shown = _ok("show", session_id)
    unauthenticated = {"principal": None, "proof": None}
    assert [
        {
            "step": 1,
            "answered_by": "cli",
            **unauthenticated,
            "answers": {"change_category": "Database"},
        },
        {"step": 2, "answered_by": "cli", **unauthenticated, "answers": {"db_type": "MySQL"}},
    ] == shown["steps"]
    assert {"Category": "cli", "Type": "cli"} == shown["decided_by"]


def test_show_prints_the_owner_each_steps_principal_and_signer(cwd: Path) -> None:
    """`show` (text) says who started the session, and beside each step's source the principal
    that sent it and the person whose passkey signed it."""
    from preflight_fsm import ClarificationMachine
    from preflight_fsm.proof import PasskeyProof

    proof = PasskeyProof(
        authenticator_data="YQ", client_data_json="Yg", credential_id="Yw", person="Ada",
        signature="ZA",
    )  # fmt: skip
    machine = ClarificationMachine("Improve the feedback form", owner="alice")
    machine.step({"change_category": "Database"}, answered_by="user_web", principal="alice")
    machine.step({"db_type": "MySQL"}, answered_by="user_passkey", principal="alice", proof=proof)
    with SqliteStore(cwd / "sessions.sqlite3") as store:
        session_id = Sessions(store).create(machine).id
    done = _invoke("show", session_id, "--store", str(cwd / "sessions.sqlite3"))
    assert 0 == done.returncode, done.stderr
    assert (
        "  started by  alice\n"
        "  step 1  user_web as alice  change_category=Database\n"
        "  step 2  user_passkey as alice signed by Ada  db_type=MySQL\n"
    ) in done.stdout


def test_show_prints_who_supplied_each_step_and_each_decided_value(cwd: Path) -> None:
    """`show` (text) has one line per step with its answered_by, then who decided each value."""
    from preflight_fsm import ClarificationMachine

    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"}, answered_by="user_form")
    with SqliteStore(cwd / "sessions.sqlite3") as store:
        session_id = Sessions(store).create(machine).id
    done = _invoke("show", session_id, "--store", str(cwd / "sessions.sqlite3"))
    assert 0 == done.returncode, done.stderr
    assert (
        "answered by (who supplied each step)\n"
        "  step 1  user_form  auth_strategy=OAuth\n"
        "  decided by  Category: intention, Strategy: user_form\n"
    ) in done.stdout


def test_chat_records_its_steps_as_typed_at_the_command_line(cwd: Path) -> None:
    """C9: steps answered in `chat --session` say answered_by 'cli'."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _run(cwd, "chat", "--session", session_id, stdin="4\nSQLite\n")
    assert 0 == done.returncode, done.stderr
    assert ["cli", "cli"] == [step["answered_by"] for step in _ok("show", session_id)["steps"]]


# -- issue 23: secrets, malformed URLs and phantom sessions on Redis --------------------------


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:{port}/0?password=topsecret",
        "unix:///nonexistent/redis.sock?db=0&password=topsecret",
        "unix://:topsecret@/nonexistent/redis.sock",
        "redis://:topsecret@[::1/0",
    ],
    ids=["query-password", "unix-query-password", "unix-userinfo", "malformed"],
)
def test_no_redis_url_shows_its_password_and_each_is_a_store_error(cwd: Path, url: str) -> None:
    """A password anywhere in a Redis URL (user part, ``password=`` in the query, ``unix://``) is
    printed as ***; an unreachable or malformed URL exits as a store error, never an internal
    one."""
    done = _run(cwd, "list", "--store", url.format(port=free_port()), "--json")
    assert "topsecret" not in done.stdout + done.stderr
    assert (EXIT_STORE_UNAVAILABLE, "store_unavailable") == (
        done.returncode,
        json.loads(done.stdout)["error"],
    )


def test_a_redis_start_with_a_huge_expiry_leaves_a_session_that_expires(
    cwd: Path, redis_url: str
) -> None:
    """`start --expire-after 1e300` on Redis either stores a session carrying a Redis TTL or
    fails leaving nothing: never a session Redis keeps forever."""
    import redis

    flush(redis_url)
    done = _run(cwd, "start", "Add OAuth login", "--store", redis_url, "--expire-after", "1e300")
    client = redis.Redis.from_url(redis_url)
    try:
        keys = client.keys("*")
        ttls = [client.pttl(key) for key in keys]
    finally:
        client.close()
    assert 0 == done.returncode, done.stderr
    assert 1 == len(keys)
    assert all(ttl > 0 for ttl in ttls), ttls


# -- issue 23: bounded reads, a full standard output, lone surrogates echoed --------------------


def test_answers_on_standard_input_beyond_the_limit_are_refused(cwd: Path) -> None:
    """`answer ID -` reads at most MAX_ANSWERS_BYTES and one byte of standard input and refuses
    more (exit 2), recording nothing."""
    from preflight_fsm.cli.sessions import MAX_ANSWERS_BYTES

    session_id = _ok("start", "Add OAuth login")["session_id"]
    done = _invoke("answer", session_id, "-", stdin=" " * (MAX_ANSWERS_BYTES + 1))
    assert EXIT_USAGE == done.returncode
    assert "larger than 1,048,576 bytes" in done.stderr
    assert 1 == _ok("show", session_id)["version"]


def test_start_with_an_endless_flow_file_is_refused(cwd: Path) -> None:
    """`start --flow /dev/zero` exits 2 at once instead of reading until memory runs out."""
    done = _run(cwd, "start", "Add OAuth login", "--flow", "/dev/zero")
    assert EXIT_USAGE == done.returncode
    assert "/dev/zero is a device, not a regular file" in done.stderr


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_full_standard_output_is_reported_not_an_internal_error(cwd: Path, as_json: bool) -> None:
    """Writing to /dev/full exits 9 with one line on standard error saying the output could not
    be written, never `internal error` nor a traceback."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [COMMAND, "start", "Add OAuth login", *(["--json"] if as_json else [])],
            cwd=cwd,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT,
        )
    assert 9 == done.returncode
    assert done.stderr.startswith("preflight-fsm: cannot write to standard output")
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_lone_surrogate_escape_in_answers_is_refused_without_a_traceback(
    cwd: Path, as_json: bool
) -> None:
    """`--answers '{"db_type": "\\ud800"}'` is refused (exit 3) naming U+D800; the value echoed
    back is written as its escape, never a traceback."""
    session_id = _run(cwd, "start", "Migrate the database", "--json").stdout
    session_id = json.loads(session_id)["session_id"]
    extra = ["--json"] if as_json else []
    done = _run(cwd, "answer", session_id, "--answers", '{"db_type": "\\ud800"}', *extra)
    assert EXIT_INVALID_ANSWERS == done.returncode
    assert "U+D800" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_every_state_has_a_status_a_person_reads() -> None:
    """Text output says where a session stands in words; state names stay in --json (issue 24)."""
    from preflight_fsm.cli.sessions import _STATUS
    from preflight_fsm.states import STATES

    assert sorted(STATES) == sorted(_STATUS)
    assert not any(name in text for name in STATES for text in _STATUS.values())


def test_text_output_shows_the_status_not_the_state_name(cwd: Path) -> None:
    """`start` prints a status line without the machine's state names."""
    done = _run(cwd, "start", "Add a new feature")
    assert 0 == done.returncode, done.stderr
    assert "status   asking the type of change (turn 1" in done.stdout
    assert "NeedCategory" not in done.stdout


def test_show_decision_prints_a_decision_file_that_verifies(cwd: Path) -> None:
    """`show --decision` prints the decided session as a Markdown file ending with its decision
    record; `verify` accepts it as written."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    _ok("answer", session_id, "auth_strategy=OAuth")
    shown = _invoke("show", session_id, "--decision")
    assert 0 == shown.returncode, shown.stderr
    assert shown.stdout.startswith("# Decision: Authentication\n")
    (cwd / "decision.md").write_text(shown.stdout, encoding="utf-8")
    checked = _invoke("verify", str(cwd / "decision.md"))
    assert (0, "verified: ") == (checked.returncode, checked.stdout[:10])


def test_show_decision_of_an_undecided_session_says_to_answer_it_first(cwd: Path) -> None:
    """A session still asking has no decision to print: a usage error that says so."""
    session_id = _ok("start", "Add OAuth login")["session_id"]
    shown = _invoke("show", session_id, "--decision")
    assert (2, True) == (shown.returncode, "has not decided" in shown.stderr)


def test_a_misspelled_answer_key_is_refused_naming_the_nearest_question(cwd: Path) -> None:
    """`answer ID change_categroy=3`: a usage error (exit 2) that suggests change_category=3,
    and nothing is recorded (issue 31 point 5)."""
    session_id = _ok("start", "Add a new feature")["session_id"]
    done = _invoke("answer", session_id, "change_categroy=3")
    shown = _ok("show", session_id)
    assert (2, 1) == (done.returncode, shown["version"])
    assert "did you mean change_category=3?" in done.stderr


def test_the_default_store_is_never_committed_by_git_add(cwd: Path) -> None:
    """After `start` in a git repository, `git status` shows nothing of the store and
    `git add -A` commits no session: its folder carries its own .gitignore (issue 30)."""
    subprocess.run(["git", "init", "-q"], cwd=cwd, check=True)
    assert 0 == _run(cwd, "start", "Add OAuth login").returncode
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "" == status.stdout


def test_a_people_file_beside_the_default_store_can_still_be_committed(cwd: Path) -> None:
    """The store folder's .gitignore keeps the sessions out, not the people file (committed and
    reviewed like CODEOWNERS)."""
    subprocess.run(["git", "init", "-q"], cwd=cwd, check=True)
    assert 0 == _run(cwd, "start", "Add OAuth login").returncode
    (cwd / ".preflight-fsm" / "people.toml").write_text("")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "?? .preflight-fsm/people.toml\n" == status.stdout
