"""Stored sessions from the shell: ``start``, ``answer``, ``show`` (``list``, ``migrate`` and
``delete``, which act on the store, are in ``cli/store_admin.py``).

Each command is one short process: it opens the store (``cli/stores.py``), does one thing through
:class:`~preflight_fsm.store.Sessions`, prints it (``--json`` for scripts) and exits with one of
the stable codes of ``cli/report.py`` (``docs/sessions.md``). ``chat --session`` resumes a stored
session interactively through :func:`stored_machine`. The engine is imported inside each command,
so ``--help`` does not pay for it.
"""

from __future__ import annotations

import json
import sys
import weakref
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.cli import app
from preflight_fsm.cli.report import (
    EXIT_CONFLICT,
    EXIT_CORRUPT,
    EXIT_FINISHED,
    EXIT_INVALID_ANSWERS,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_STORE_UNAVAILABLE,
    EXIT_UNKNOWN_SESSION,
    EXIT_USAGE,
    CommandFailed,
    check_text,
    reported,
    usage_error,
)
from preflight_fsm.cli.stores import (
    ExpireOption,
    FlowOption,
    SealKeyFileOption,
    StoreOption,
    full_id,
    open_sessions,
)
from preflight_fsm.states import DONE, NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD, NO_PATCH

MAX_ANSWERS_BYTES = 1024 * 1024
"""`answer ID -` reads at most this much JSON (a step holds at most 32 answers of 500 characters
with the default flow, 100,000 with any): more is refused, not read to its end."""

if TYPE_CHECKING:
    from preflight_fsm.answered_by import AnsweredBy
    from preflight_fsm.flow import Flow
    from preflight_fsm.flow_data import FlowData
    from preflight_fsm.machine import ClarificationMachine
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.store import SessionState
    from preflight_fsm.turn import Turn
    from preflight_fsm.turn_data import TurnData

__all__ = [
    "DEFAULT_EXPIRE_AFTER",
    "EXIT_CONFLICT",
    "EXIT_CORRUPT",
    "EXIT_FINISHED",
    "EXIT_HELP",
    "EXIT_INVALID_ANSWERS",
    "EXIT_OK",
    "EXIT_STORE_UNAVAILABLE",
    "EXIT_UNKNOWN_SESSION",
    "EXIT_USAGE",
    "ExpireOption",
    "FlowOption",
    "JsonOption",
    "SessionArgument",
    "StoreOption",
    "exit_help",
    "parse_pairs",
    "stored_machine",
]

DEFAULT_EXPIRE_AFTER = 30 * 60.0  # preflight_fsm.store.DEFAULT_EXPIRE_AFTER, without importing it

_EXIT_MEANINGS = {
    EXIT_OK: "done",
    EXIT_USAGE: "usage error",
    EXIT_INVALID_ANSWERS: "answers refused",
    EXIT_UNKNOWN_SESSION: "unknown or expired session",
    EXIT_CONFLICT: "conflict (another process stepped it first)",
    EXIT_FINISHED: "session already finished",
    EXIT_CORRUPT: "corrupt session",
    EXIT_STORE_UNAVAILABLE: "store unavailable or not a session store",
    EXIT_OUTPUT: "standard output could not be written",
}


def exit_help(*codes: int) -> str:
    """The help page's paragraph on the exit codes a command can return (``codes``; 0 and 9,
    output that could not be written, are every command's)."""
    listed = "; ".join(f"{code} {_EXIT_MEANINGS[code]}" for code in (EXIT_OK, *codes, EXIT_OUTPUT))
    return f"Exit codes: {listed}. With --json every error is one JSON object on standard output."


EXIT_HELP = exit_help(
    EXIT_USAGE,
    EXIT_INVALID_ANSWERS,
    EXIT_UNKNOWN_SESSION,
    EXIT_CONFLICT,
    EXIT_FINISHED,
    EXIT_CORRUPT,
    EXIT_STORE_UNAVAILABLE,
)
"""Every code a session command can return: ``answer``'s."""

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of text.")]
SessionArgument = Annotated[str, typer.Argument(metavar="SESSION_ID", show_default=False)]


def _reported(as_json: bool = False) -> AbstractContextManager[None]:
    """Errors of the engine and the store as this CLI reports them (``cli/report.py``).

    Kept under its old name for command modules written against it (``cli/mcp.py``); new code
    uses :func:`preflight_fsm.cli.report.reported`. ``as_json`` is decided from the command line.
    """
    return reported()


# -- answers input -------------------------------------------------------------------------------


def parse_pairs(pairs: list[str]) -> list[tuple[str, str]]:
    """``key=value`` arguments as (key, value) pairs, split at the first ``=``; a usage error
    (CommandFailed) for one without ``=`` or without a key."""
    parsed: list[tuple[str, str]] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise usage_error(
                f"{pair!r} is not question_id=answer; `preflight-fsm show SESSION_ID` lists the "
                "questions of the current turn with their ids"
            )
        parsed.append((key.strip(), value))
    return parsed


def _json_answers(data: bytes | str, source: str) -> dict[str, Any]:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise usage_error(
                f"{source} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
            ) from None
    check_text(data, source)
    try:
        answers = json.loads(data)
    except RecursionError:
        raise usage_error(f"{source} is nested too deeply to be answers") from None
    except ValueError as exc:
        raise usage_error(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(answers, dict):
        raise usage_error(
            f'{source} must be a JSON object of question ids to answers: {{"id": "…"}}'
        )
    return answers


# -- output --------------------------------------------------------------------------------------


_STATUS: dict[str, str] = {
    NEED_CATEGORY: "asking the type of change",
    NEED_PRIMARY_FIELD: "asking its question",
    NEED_OTHER: 'waiting for the text of "Other (specify)"',
    DONE: "decided",
    NO_PATCH: "ended without a decision",
}
"""Each state as a person reads it; the state names stay in ``--json`` (issue 24)."""


def _print_state(
    state: SessionState, as_json: bool, flow: Flow | FlowData | None, *, sources: bool = False
) -> None:
    if as_json:
        typer.echo(json.dumps(state.to_json(), ensure_ascii=False))
        return
    turn = state.turn_data
    status = _STATUS[turn.state]
    if turn.state == NEED_PRIMARY_FIELD and turn.questions:  # the question named, as asked
        status = f'asking "{turn.questions[0].question}"'
    lines = [
        f"session  {state.id}",
        f"status   {status} (turn {turn.number}, progress {turn.progress:g}, "
        f"version {state.version})",
        "",
        *_describe_turn(turn, flow),
        *(_describe_sources(state) if sources else ()),
    ]
    if not turn.finished:
        lines += ["", f"answer:  preflight-fsm answer {state.id} {_example(turn)}"]
    typer.echo("\n".join(lines))


def _describe_sources(state: SessionState) -> list[str]:
    """Who supplied each step's answers, and each decided value (``docs/contract.md``)."""
    if not state.steps:
        return []
    lines = ["", "answered by (who supplied each step)"]
    if state.owner is not None:
        lines.append(f"  started by  {state.owner}")
    for step in state.steps:
        given = ", ".join(
            f"{key}={'(blank)' if value is None else value}" for key, value in step.answers.items()
        )
        who: list[str] = [step.answered_by]
        if step.principal is not None:
            who.append(f"as {step.principal}")
        if step.proof is not None:
            who.append(f"signed by {step.proof.person}")
        lines.append(f"  step {step.step}  {' '.join(who):<9}  {given}")
    if state.decided_by:
        decided = ", ".join(f"{field}: {source}" for field, source in state.decided_by)
        lines.append(f"  decided by  {decided}")
    return lines


def _describe_turn(turn: Turn | TurnData, flow: Flow | FlowData | None) -> list[str]:
    if turn.finished:
        from preflight_fsm.cli.render import render_outcome

        return render_outcome(turn, flow).splitlines()
    lines: list[str] = []
    for question in turn.questions:
        if question.depends_on_question_id is not None:
            lines.append(
                f"  if {question.depends_on_value}: also send {question.id}=TEXT "
                f"({question.question})"
            )
            continue
        # The id is shown because `answer` takes it as the key.
        lines.append(f"{question.question}  [{question.id}]")
        lines += [f"  {n}. {option}" for n, option in enumerate(question.options or (), start=1)]
        if question.type == "free_text":
            lines.append("  (your own text; skip declines the question)")
        else:
            lines.append("  (a number picks that option; skip declines the question)")
    return lines


def _example(turn: Turn | TurnData) -> str:
    question = next(q for q in turn.questions if q.depends_on_question_id is None)
    return f"{question.id}={'1' if question.options else 'TEXT'}"


# -- the commands --------------------------------------------------------------------------------


@app.command(epilog=exit_help(EXIT_USAGE, EXIT_STORE_UNAVAILABLE))
def start(
    intention: Annotated[
        str, typer.Argument(metavar="INTENTION", help="What you want to change, in one sentence.")
    ],
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    seal_key_file: SealKeyFileOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
) -> None:
    """Start a stored session; print its id and first turn."""
    with open_sessions(store, flow, create=True, warn=True, seal_key_file=seal_key_file) as (
        sessions,
        _,
    ):
        state = sessions.start(intention, expire_after=expire_after)
    _print_state(state, as_json, sessions.flows.current_data)


@app.command(epilog=EXIT_HELP)
def answer(
    session_id: SessionArgument,
    pairs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ANSWERS",
            help="question_id=answer pairs (a number picks that option, skip declines), or - "
            "to read a JSON object from standard input.",
            show_default=False,
        ),
    ] = None,
    answers_json: Annotated[
        str | None,
        typer.Option(
            "--answers",
            metavar="JSON",
            help='The answers as a JSON object, sent as given: {"id": "value"}.',
        ),
    ] = None,
    literal: Annotated[
        bool,
        typer.Option("--text", help="Send key=value answers as typed: numbers stay text."),
    ] = False,
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    seal_key_file: SealKeyFileOption = None,
) -> None:
    """Answer the session's current turn; print the next turn or the outcome."""
    pairs = pairs or []
    given: dict[str, Any] | None = None
    parsed: list[tuple[str, str]] = []
    if pairs == ["-"]:
        if answers_json is not None:
            raise usage_error("give the answers as - (standard input) or --answers, not both")
        try:
            data = read_bounded(sys.stdin.buffer, MAX_ANSWERS_BYTES)
        except Unreadable as exc:
            raise usage_error(f"standard input {exc.problem}: send one step's answers") from None
        given = _json_answers(data, "standard input")
    elif answers_json is not None:
        if pairs:
            raise usage_error("give the answers as key=value pairs or --answers, not both")
        given = _json_answers(answers_json, "--answers")
    elif not pairs:
        raise usage_error(
            "no answers given: pass question_id=answer pairs, --answers '{json}', or - for JSON "
            "on standard input"
        )
    else:
        parsed = parse_pairs(pairs)
    from preflight_fsm.cli.render import question_texts, render_feedback
    from preflight_fsm.cli.replies import RefusedReply, answers_from_pairs
    from preflight_fsm.errors import InvalidAnswers

    with open_sessions(store, flow, warn=True, seal_key_file=seal_key_file) as (sessions, shown):
        session_id = full_id(sessions, session_id)
        machine, record = sessions.load(session_id)
        if given is None:
            try:
                given = answers_from_pairs(
                    machine.turn_data, parsed, literal=literal, known=machine.flow_data.answer_ids
                )
            except RefusedReply as refused:
                raise usage_error(str(refused)) from None
        try:
            machine.advance(given, answered_by="cli")
        except InvalidAnswers as refused:
            texts = question_texts(machine.flow_data)
            raise CommandFailed(
                refused.code,
                "the answers were not accepted; nothing was recorded",
                EXIT_INVALID_ANSWERS,
                details={"session_id": session_id, "store": shown, "feedback": refused.feedback},
                lines=tuple(render_feedback(refused.feedback, texts).splitlines()),
            ) from None
        saved = sessions.save(session_id, machine, record.version)
        state = sessions.state_of(saved, machine)
    _print_state(state, as_json, machine.flow_data)


@app.command(
    epilog=exit_help(EXIT_USAGE, EXIT_UNKNOWN_SESSION, EXIT_CORRUPT, EXIT_STORE_UNAVAILABLE)
)
def show(
    session_id: SessionArgument,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            "--snapshot",
            metavar="FILE",
            help="Also write the session's snapshot (JSON) to FILE; - writes only the snapshot, "
            "to standard output (for `diagram --snapshot`, or ClarificationMachine.from_snapshot).",
            dir_okay=False,
        ),
    ] = None,
    decision: Annotated[
        bool,
        typer.Option(
            "--decision",
            help="Print the session's decision as a Markdown file ending with its decision record "
            "(Who answered, and the attestation `preflight-fsm verify` checks); the session must "
            "have decided.",
        ),
    ] = False,
    store: StoreOption = None,
    as_json: JsonOption = False,
    flow: FlowOption = None,
    seal_key_file: SealKeyFileOption = None,
) -> None:
    """Print where a stored session stands, without changing it."""
    if snapshot is not None and str(snapshot) == "-" and as_json:
        raise usage_error("--snapshot - writes the snapshot to standard output: leave out --json")
    if decision and (as_json or snapshot is not None):
        raise usage_error(
            "--decision prints the decision file alone: leave out --json and --snapshot"
        )
    with open_sessions(store, flow, seal_key_file=seal_key_file) as (sessions, _):
        session_id = full_id(sessions, session_id)
        machine, record = sessions.load(session_id)
        state = sessions.state_of(record, machine)
        snapshot_json = sessions.snapshot_json(record)
    if decision:
        from preflight_fsm.decision_record import decision_document

        if state.turn_data.patch is None:
            raise CommandFailed(
                "no_decision",
                f"session {session_id} has not decided (it is {state.turn_data.state}); "
                "answer its turns first, or show it without --decision",
                EXIT_USAGE,
            )
        typer.echo(decision_document(machine, session_id), nl=False)
        return
    if snapshot is not None:
        if str(snapshot) == "-":
            typer.echo(snapshot_json)
            return
        try:
            snapshot.write_text(snapshot_json + "\n", encoding="utf-8")
        except OSError as exc:
            raise usage_error(f"cannot write the snapshot to {snapshot}: {exc.strerror}") from None
    _print_state(state, as_json, machine.flow_data, sources=True)


# -- resuming in `chat --session` ----------------------------------------------------------------


def stored_machine(
    session_id: str,
    store: str | None = None,
    flow: Path | None = None,
    seal_key_file: Path | None = None,
) -> tuple[ClarificationMachine, str]:
    """The stored session as a machine that saves each step, for ``run_chat`` to drive, and the
    session's whole id (``session_id`` may be a unique prefix of it).

    The store stays open as long as the machine lives. Errors end the command with their code
    (``cli/report.py``); a conflict in mid-chat (another process stepped the session) ends it.
    """
    from preflight_fsm.errors import SessionFinished
    from preflight_fsm.machine import ClarificationMachine

    class StoredMachine(ClarificationMachine):
        """A restored machine that writes itself back (compare-and-set) after every step."""

        __slots__ = ("__weakref__",)

        def step(
            self,
            answers: Mapping[str, Any],
            answered_by: AnsweredBy = "cli",
            *,
            principal: str | None = None,
            proof: PasskeyProof | None = None,
        ) -> Turn:
            turn = super().step(answers, answered_by, principal=principal, proof=proof)
            with reported(shown):
                saved = sessions.save(session_id, self, version[0])
            version[0] = saved.version
            return turn

    opened = open_sessions(store, flow, seal_key_file=seal_key_file)
    sessions, shown = opened.__enter__()
    try:
        with reported(shown):
            session_id = full_id(sessions, session_id)
            loaded, record = sessions.load(session_id)
            if loaded.finished:
                how = "with a decision" if loaded.state == DONE else "without a decision"
                raise SessionFinished(
                    f"session {session_id!r} already ended {how}; "
                    "`preflight-fsm show` prints its outcome"
                )
            machine = StoredMachine.from_snapshot(loaded.snapshot(), flow=sessions.flows)
    except BaseException:
        opened.__exit__(None, None, None)
        raise
    version = [record.version]
    weakref.finalize(machine, opened.__exit__, None, None, None)
    return machine, session_id
