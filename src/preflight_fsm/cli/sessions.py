"""Stored sessions from the shell: ``start``, ``answer``, ``show``, ``list``, ``delete``.

Each command is one short process: it opens the store (``--store``, else ``PREFLIGHT_FSM_STORE``,
else ``.preflight-fsm/sessions.sqlite3`` in the working directory), does one thing through
:class:`~preflight_fsm.store.Sessions`, prints it (``--json`` for scripts) and exits with one of
the stable codes below (``docs/sessions.md``). ``chat --session`` resumes a stored session
interactively through :func:`stored_machine`.
"""

from __future__ import annotations

import json
import sys
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn

import typer

from preflight_fsm.cli import app
from preflight_fsm.errors import (
    CorruptSession,
    InvalidAnswers,
    InvalidFlow,
    InvalidIntention,
    PreflightFsmError,
    SessionConflict,
    SessionExpired,
    SessionFinished,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.flow import Flow, load_flow
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.store import Sessions, SessionState, StoredSession, open_store
from preflight_fsm.store.base import DEFAULT_EXPIRE_AFTER
from preflight_fsm.turn import Turn

__all__ = [
    "EXIT_CODES",
    "EXIT_CONFLICT",
    "EXIT_CORRUPT",
    "EXIT_FINISHED",
    "EXIT_INVALID_ANSWERS",
    "EXIT_OK",
    "EXIT_STORE_UNAVAILABLE",
    "EXIT_UNKNOWN_SESSION",
    "EXIT_USAGE",
    "parse_answers",
    "stored_machine",
]

EXIT_OK: Final = 0
EXIT_USAGE: Final = 2
"""Bad arguments or options, malformed answers input, an invalid intention or flow file."""
EXIT_INVALID_ANSWERS: Final = 3
"""The engine refused the answers; its structured feedback (C5) is printed as JSON."""
EXIT_UNKNOWN_SESSION: Final = 4
"""No such session: never created, deleted, or expired (the message says which)."""
EXIT_CONFLICT: Final = 5
"""Another process stepped the session first; nothing was written."""
EXIT_FINISHED: Final = 6
"""The session already ended (Done or NoPatch); it takes no more answers."""
EXIT_CORRUPT: Final = 7
"""The stored session is unreadable or was tampered with."""
EXIT_STORE_UNAVAILABLE: Final = 8
"""The store cannot be opened or reached."""

EXIT_CODES: Final[dict[type[PreflightFsmError], tuple[int, str]]] = {
    SessionNotFound: (EXIT_UNKNOWN_SESSION, "session_not_found"),
    SessionExpired: (EXIT_UNKNOWN_SESSION, "session_expired"),
    SessionConflict: (EXIT_CONFLICT, "session_conflict"),
    SessionFinished: (EXIT_FINISHED, "session_finished"),
    CorruptSession: (EXIT_CORRUPT, "corrupt_session"),
    StoreUnavailable: (EXIT_STORE_UNAVAILABLE, "store_unavailable"),
    InvalidIntention: (EXIT_USAGE, "invalid_intention"),
    InvalidFlow: (EXIT_USAGE, "invalid_flow"),
}
"""How each error ends a command: its exit code and the ``error`` name ``--json`` prints."""

_EXIT_HELP = (
    "Exit codes: "
    f"{EXIT_OK} done; "
    f"{EXIT_USAGE} usage error; "
    f"{EXIT_INVALID_ANSWERS} answers refused (feedback JSON on stdout); "
    f"{EXIT_UNKNOWN_SESSION} unknown or expired session; "
    f"{EXIT_CONFLICT} conflict (another process stepped it first); "
    f"{EXIT_FINISHED} session already finished; "
    f"{EXIT_CORRUPT} corrupt session; "
    f"{EXIT_STORE_UNAVAILABLE} store unavailable."
)

# -- shared options ----------------------------------------------------------------------------

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL_OR_PATH",
        help="A SQLite file path or a redis:// URL. Default: $PREFLIGHT_FSM_STORE, else "
        ".preflight-fsm/sessions.sqlite3 in the working directory.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of text.")]
ExpireOption = Annotated[
    float,
    typer.Option(
        "--expire-after",
        metavar="SECONDS",
        envvar="PREFLIGHT_FSM_EXPIRE_AFTER",
        callback=lambda value: _positive(value),
        help="Seconds without a step after which a session expires.",
    ),
]


def _positive(value: float) -> float:
    if not value > 0:
        raise typer.BadParameter(f"must be a positive number of seconds, not {value:g}")
    return value


FlowOption = Annotated[
    Path | None,
    typer.Option("--flow", metavar="FLOW.toml", help="The flow file the sessions run on."),
]
SessionArgument = Annotated[str, typer.Argument(metavar="SESSION_ID", show_default=False)]


@contextmanager
def _sessions(
    store: str | None, flow: Path | None, expire_after: float, as_json: bool
) -> Iterator[Sessions]:
    """The Sessions service on the chosen store, closed afterwards; errors end the command."""
    with _reported(as_json):
        loaded: Flow | None = load_flow(flow) if flow is not None else None
        opened = open_store(store, expire_after=expire_after)
        try:
            yield Sessions(opened, flow=loaded)
        finally:
            opened.close()


@contextmanager
def _reported(as_json: bool) -> Iterator[None]:
    """Turn the errors a session command expects into their message and exit code."""
    try:
        yield
    except InvalidAnswers as error:
        # The structured feedback is the result a script needs, so it goes to stdout either way.
        typer.echo(json.dumps(error.feedback, ensure_ascii=False, indent=None if as_json else 2))
        if not as_json:
            typer.echo(
                "preflight-fsm: the answers were not accepted; nothing was recorded", err=True
            )
        raise typer.Exit(EXIT_INVALID_ANSWERS) from None
    except tuple(EXIT_CODES) as error:
        _fail(error, as_json)


def _fail(error: PreflightFsmError, as_json: bool) -> NoReturn:
    code, name = next(v for k, v in EXIT_CODES.items() if isinstance(error, k))
    if as_json:
        payload: dict[str, Any] = {"error": name, "message": str(error), "exit_code": code}
        session_id = getattr(error, "session_id", None)
        if session_id is not None:
            payload["session_id"] = session_id
        typer.echo(json.dumps(payload, ensure_ascii=False))
    else:
        typer.echo(f"preflight-fsm: {error}", err=True)
    raise typer.Exit(code)


# -- answers input -------------------------------------------------------------------------------


def _Usage(message: str) -> typer.BadParameter:  # noqa: N802 - reads as the exception it makes
    """A usage error about the answers (exit 2, with the usage line), via typer's public API."""
    return typer.BadParameter(message, param_hint="answers")


def parse_answers(pairs: list[str], answers_json: str | None, stdin: str | None) -> dict[str, Any]:
    """One step's answers from ``key=value`` pairs, a JSON object, or JSON read from stdin.

    Exactly one source; a repeated key collects its values in a list (the engine refuses several
    values for a single choice, C5). Raises typer.BadParameter (a usage error) for malformed input.
    """
    if pairs == ["-"]:
        if answers_json is not None:
            raise _Usage("give the answers as '-' (stdin) or --answers, not both")
        return _json_object(stdin or "", "standard input")
    if answers_json is not None:
        if pairs:
            raise _Usage("give the answers as key=value pairs or --answers, not both")
        return _json_object(answers_json, "--answers")
    if not pairs:
        raise _Usage(
            "no answers given: pass key=value pairs, --answers '{json}', or - for JSON on stdin"
        )
    answers: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise _Usage(f"{pair!r} is not key=value (e.g. auth_strategy=OAuth)")
        key = key.strip()
        if key in answers:
            previous = answers[key]
            answers[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            answers[key] = value
    return answers


def _json_object(text: str, source: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _Usage(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _Usage(f"{source} must be a JSON object of question ids to answers")
    return data


# -- output --------------------------------------------------------------------------------------


def _print_state(state: SessionState, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(state.to_json(), ensure_ascii=False))
        return
    turn = state.turn
    lines = [
        f"session  {state.id}",
        f"state    {turn.state} (turn {turn.number}, progress {turn.progress:g}, "
        f"version {state.version})",
        "",
        *_describe_turn(turn),
    ]
    if not turn.finished:
        lines += ["", f"answer:  preflight-fsm answer {state.id} {_example(turn)}"]
    typer.echo("\n".join(lines))


def _describe_turn(turn: Turn) -> list[str]:
    if turn.finished:
        from preflight_fsm.cli.chat import render_outcome

        return render_outcome(turn).splitlines()
    lines: list[str] = []
    for question in turn.questions:
        if question.depends_on_question_id is not None:
            lines.append(
                f"  if {question.depends_on_value}: also send "
                f"{question.id}=TEXT ({question.question})"
            )
            continue
        lines.append(f"{question.question}  [{question.id}]")
        lines += [f"  - {option}" for option in question.options or ()]
        if question.type == "free_text":
            lines.append("  (free text)")
    return lines


def _example(turn: Turn) -> str:
    question = next(q for q in turn.questions if q.depends_on_question_id is None)
    if question.options:
        return f"{question.id}={_quoted(question.options[0])}"
    return f"{question.id}=TEXT"


def _quoted(text: str) -> str:
    return text if text.replace("/", "").replace("-", "").isalnum() else f"'{text}'"


# -- the commands --------------------------------------------------------------------------------


@app.command(epilog=_EXIT_HELP)
def start(
    intention: Annotated[
        str, typer.Argument(metavar="INTENTION", help="What you want to change, in one sentence.")
    ],
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """Start a stored session; print its id and first turn."""
    with _sessions(store, flow, expire_after, as_json) as sessions:
        state = sessions.start(intention)
    _print_state(state, as_json)


@app.command(epilog=_EXIT_HELP)
def answer(
    session_id: SessionArgument,
    pairs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ANSWERS",
            help="question_id=value pairs, or - to read a JSON object from standard input.",
            show_default=False,
        ),
    ] = None,
    answers_json: Annotated[
        str | None,
        typer.Option(
            "--answers", metavar="JSON", help='The answers as a JSON object: {"id": "value"}.'
        ),
    ] = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """Answer the session's current turn; print the next turn or the outcome."""
    pairs = pairs or []
    stdin = sys.stdin.read() if pairs == ["-"] else None
    answers = parse_answers(pairs, answers_json, stdin)
    with _sessions(store, flow, expire_after, as_json) as sessions:
        state = sessions.answer(session_id, answers)
    _print_state(state, as_json)


@app.command(epilog=_EXIT_HELP)
def show(
    session_id: SessionArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """Print where a stored session stands, without changing it."""
    with _sessions(store, flow, expire_after, as_json) as sessions:
        state = sessions.show(session_id)
    _print_state(state, as_json)


@app.command("list", epilog=_EXIT_HELP)
def list_sessions(
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """List the stored sessions (expired ones are removed; corrupt ones are flagged)."""
    with _sessions(store, flow, expire_after, as_json) as sessions:
        found = sessions.list()
    if as_json:
        entries = [
            {"session_id": s.session_id, "corrupt": True, "problem": s.problem}
            if isinstance(s, CorruptSession)
            else {**s.to_json(), "corrupt": False}
            for s in found
        ]
        typer.echo(json.dumps({"sessions": entries}, ensure_ascii=False))
        return
    if not found:
        typer.echo("no sessions")
        return
    rows = [("SESSION", "VERSION", "STATE", "TURN", "INTENTION")]
    for s in found:
        if isinstance(s, CorruptSession):
            rows.append((str(s.session_id), "-", "CORRUPT", "-", s.problem))
        else:
            intention = s.intention if len(s.intention) <= 50 else s.intention[:49] + "…"
            rows.append((s.id, str(s.version), s.turn.state, str(s.turn.number), intention))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        typer.echo("  ".join([*padded, row[4]]))


@app.command(epilog=_EXIT_HELP)
def delete(
    session_id: SessionArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """Delete a stored session (an expired or corrupt one too)."""
    with _sessions(store, None, expire_after, as_json) as sessions:
        sessions.delete(session_id)
    typer.echo(
        json.dumps({"session_id": session_id, "deleted": True})
        if as_json
        else f"deleted {session_id}"
    )


# -- resuming in `chat --session` ----------------------------------------------------------------


class _StoredMachine(ClarificationMachine):
    """A restored machine that writes itself back (compare-and-set) after every step it takes."""

    __slots__ = ("__weakref__", "_record", "_sessions")

    _sessions: Sessions
    _record: StoredSession

    def step(self, answers: Mapping[str, Any]) -> Turn:
        turn = super().step(answers)
        with _reported(as_json=False):
            self._record = self._sessions.save(self._record.id, self, self._record.version)
        return turn


def stored_machine(
    session_id: str,
    store: str | None = None,
    flow: Path | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
) -> ClarificationMachine:
    """The stored session as a machine that saves each step, for ``run_chat`` to drive.

    The store stays open as long as the machine lives. Errors print their message and exit with
    their code (EXIT_CODES); a conflict in mid-chat (another process stepped the session) ends it.
    """
    with _reported(as_json=False):
        loaded: Flow | None = load_flow(flow) if flow is not None else None
        opened = open_store(store, expire_after=expire_after)
        sessions = Sessions(opened, flow=loaded)
        try:
            record = opened.get(session_id)
            machine = _StoredMachine.from_snapshot(
                sessions.restore(record).snapshot(), flow=sessions.flow
            )
        except BaseException:
            opened.close()
            raise
        assert isinstance(machine, _StoredMachine)
        weakref.finalize(machine, opened.close)
        if machine.finished:
            raise SessionFinished(
                f"session {session_id!r} already ended in {machine.state}; "
                "`preflight-fsm show` prints its outcome"
            )
    machine._sessions = sessions
    machine._record = record
    return machine
