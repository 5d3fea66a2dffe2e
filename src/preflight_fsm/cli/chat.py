"""`preflight-fsm chat`: run one clarification session in the terminal.

Three layers, each usable alone: pure functions that render a turn, its outcome and refused
answers (``cli/render.py``) and turn one line of input into a step's answers (``cli/replies.py``,
shared with ``answer``); :func:`run_chat`, the loop that drives
any :class:`ClarificationMachine` through a ``read_line``/``write`` pair (a restored session works
the same as a new one); and the typer command, which only wires the terminal or a pipe to that
loop and maps how it ends to an exit code.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TextIO

import typer

from preflight_fsm.cli import app
from preflight_fsm.cli.passkey_option import PASSKEY_HELP, PEOPLE_HELP
from preflight_fsm.cli.render import render_feedback, render_outcome, render_turn
from preflight_fsm.cli.replies import ChoiceOutOfRange, RefusedReply, Reply, parse_reply
from preflight_fsm.cli.report import EXIT_INTERRUPTED, EXIT_USAGE, reported

if TYPE_CHECKING:
    from preflight_fsm.machine import ClarificationMachine
    from preflight_fsm.people import People
    from preflight_fsm.turn import Turn

__all__ = [
    "EXIT_END_OF_INPUT",
    "EXIT_FINISHED",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "PROMPT",
    "ChoiceOutOfRange",
    "ReadLine",
    "Reply",
    "Write",
    "parse_reply",
    "render_feedback",
    "render_outcome",
    "render_turn",
    "run_chat",
]

PROMPT = "> "
MAX_LINE = 1024 * 1024
"""A line read from a pipe holds at most this many characters (an answer at most 100,000)."""
DECLINE_PROMPT = "Decline this question? The session then ends without a patch. [y/N] "
EXIT_FINISHED = 0  # with a patch or without one: stopping is an outcome, not a failure
EXIT_END_OF_INPUT = 1

ReadLine = Callable[[str], str]
"""Shows a prompt and returns one line of input without its line end; EOFError at the end."""
Write = Callable[[str], None]
"""Writes one block of output as a line (or lines)."""


# -- the loop --------------------------------------------------------------------------------------


def run_chat(machine: ClarificationMachine, read_line: ReadLine, write: Write) -> Turn:
    """Ask the machine's questions until its session ends, write the outcome, return the last turn.

    Refused input (RefusedReply, InvalidAnswers) is answered and the question asked again; the
    session never sees it. A near miss of an option asks "did you mean" first; an empty answer
    that would end the session declines only once confirmed; a refused "Other (specify)" text
    asks for the text again, not the choice. EOFError and KeyboardInterrupt from ``read_line``
    propagate, and leave the machine at the turn it had reached, so a caller can store it and
    resume later.
    """
    from preflight_fsm.cli.render import question_texts

    texts = question_texts(machine.flow)
    turn = machine.turn
    first = True
    asked = [""]  # the last prompt read: an Other text left empty is not asked twice

    def reading(prompt: str) -> str:
        asked[0] = prompt
        return read_line(prompt)

    while not turn.finished:
        shown = render_turn(turn, machine.flow)
        if shown.strip() != asked[0].strip():
            if not first:
                write("")
            write(shown)
        first = False
        try:
            turn = _answer_turn(machine, turn, reading, write, texts)
        except RefusedReply as refused:
            write(str(refused))
    if not first:
        write("")
    write(render_outcome(turn, machine.flow))
    return turn


def _answer_turn(
    machine: ClarificationMachine,
    turn: Turn,
    read_line: ReadLine,
    write: Write,
    texts: dict[str, str],
) -> Turn:
    """One typed answer to the turn's question, confirmed where it must be; the next turn (the
    same one when the person took the answer back or the engine refused it)."""
    from preflight_fsm.answers import described
    from preflight_fsm.errors import InvalidAnswers

    reply = parse_reply(turn, read_line(PROMPT), machine.flow.other_option)
    if reply.confirm_decline and not _yes(read_line(DECLINE_PROMPT)):
        return turn  # not declined: ask the question again
    answers = reply.answers
    if reply.suggestion is not None:
        (qid, typed), suggested = next(iter(answers.items())), reply.suggestion
        if _yes(read_line(f'Did you mean "{suggested}"? [Y/n] '), default=True):
            answers = {qid: suggested}
        else:
            write(f'Kept as typed: "{typed.strip()}".')
    answers = described(machine.flow, answers)  # a NeedOther turn asks the category's text
    follow_up = reply.follow_up
    while True:
        if follow_up is not None:
            # Sent as given, blank included: the engine then asks for it alone (NeedOther, C5),
            # unless no turn is left for that: then it is a decline, confirmed first.
            text = read_line(f"{follow_up.question} ")
            last_turn = turn.number >= machine.flow.limits.max_turns
            if not text.strip() and last_turn and not _yes(read_line(DECLINE_PROMPT)):
                continue
            answers = described(machine.flow, {**answers, follow_up.id: text})
        try:
            return machine.step(answers, answered_by="cli")
        except InvalidAnswers as refused:
            issues = refused.feedback.get("issues", {})
            fields = {str(i.get("field")) for i in issues.get("invalid", ())}
            description = machine.flow.other_category.description_id
            if follow_up is None or not fields or not fields <= {follow_up.id, description}:
                write(render_feedback(refused.feedback, texts))
                return turn
            # Only the text was refused: keep the choice, ask for the text again.
            only_text = [i for i in issues["invalid"] if i.get("field") == follow_up.id]
            write(render_feedback({"issues": {"invalid": only_text}}, texts))


def _yes(line: str, *, default: bool = False) -> bool:
    """A typed y/yes (or, with ``default``, an empty line) as yes; anything else no."""
    answer = line.strip().casefold()
    return answer in {"y", "yes"} or (default and not answer)


def _line_writer(stdout: TextIO) -> Write:
    """Writes through the same stream the reader echoes to, so a transcript keeps its order; on
    a terminal, each question in bold, refusals in red and the decision in green."""
    from preflight_fsm.cli.colour import in_colour

    colour = in_colour(stdout)

    def write(text: str) -> None:
        stdout.write(f"{_emphasised(text) if colour else text}\n")
        stdout.flush()

    return write


def _emphasised(text: str) -> str:
    from preflight_fsm.cli.colour import BOLD, GREEN, RED, styled

    lines = text.split("\n")
    if lines[0].startswith(("Not accepted", "There is no option", "That line")):
        return styled(text, RED)
    if lines[0].startswith("Category: "):
        return "\n".join(styled(line, GREEN) for line in lines)
    if len(lines) > 1 and lines[1].startswith("  1. "):  # a turn: its question
        return "\n".join([styled(lines[0], BOLD), *lines[1:]])
    return text


def _line_reader(stdin: TextIO | None, stdout: TextIO, interactive: bool) -> ReadLine:
    """A terminal reads through ``input()`` with ``readline``'s line editing and history where
    the platform has it; from a pipe, the prompt and the line read are written after the fact,
    so the output is a clean transcript and never ends on a bare prompt."""
    if interactive:
        # Importing readline gives input() line editing and history; without it (Windows, or a
        # Python built without it) plain input() still works.
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401

        def read_terminal(prompt: str) -> str:
            stdout.flush()
            return input(prompt)

        return read_terminal

    def read_pipe(prompt: str) -> str:
        # At most MAX_LINE characters and one: `chat ... < /dev/zero` holds no endless line.
        line = stdin.readline(MAX_LINE + 1) if stdin is not None else ""
        if not line:
            raise EOFError
        if len(line) > MAX_LINE:
            from preflight_fsm.cli.report import usage_error

            raise usage_error(
                f"a line of input is longer than {MAX_LINE:,} characters; an answer is one line "
                "of at most the flow's max_answer_chars"
            )
        line = line.rstrip("\r\n")
        stdout.write(f"{prompt}{line}".rstrip() + "\n")
        return line

    return read_pipe


# -- the command -----------------------------------------------------------------------------------


_HELP = "\n\n".join(
    [
        "Clarify INTENTION with a few questions, then print the decision patch and hint.",
        "Answer with an option's number or with text; a near miss of an option asks 'did you "
        "mean' first; picking 'Other (specify)' asks for its text next. Type 'skip' to decline "
        "a question (the session then ends without a patch); an empty answer that would end the "
        "session asks to confirm first. Invalid input is explained and asked again. On a "
        "terminal, arrow keys edit the line and recall earlier answers. When standard input is "
        "not a terminal, each line is one answer.",
        "Exit codes: "
        f"{EXIT_FINISHED} the session finished, with or without a patch; "
        f"{EXIT_END_OF_INPUT} input ended before the session finished; "
        f"{EXIT_USAGE} invalid intention, flow file or options; "
        "4-8 with --session, as for `answer` (docs/sessions.md); "
        f"{EXIT_INTERRUPTED} interrupted (Ctrl-C).",
    ]
)


@app.command(help=_HELP, no_args_is_help=False)
def chat(
    intention: Annotated[
        str | None,
        typer.Argument(metavar="INTENTION", help="What you want to change, in one sentence."),
    ] = None,
    flow: Annotated[
        Path | None,
        typer.Option(
            "--flow",
            metavar="FLOW.toml",
            help="Run the session on this flow file instead of the default flow.",
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            metavar="SESSION_ID",
            help="Resume this stored session instead of starting one; each step is saved.",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option("--store", metavar="URL_OR_PATH", help="The store of --session."),
    ] = None,
    seal_key_file: Annotated[
        Path | None,
        typer.Option(
            "--seal-key-file",
            metavar="FILE",
            envvar="PREFLIGHT_FSM_SEAL_KEY_FILE",
            help="With --session: the keys that seal the store's snapshots (as for `answer`).",
            show_default=False,
        ),
    ] = None,
    web: Annotated[
        bool,
        typer.Option(
            "--web",
            help="Answer on the answer page in your browser instead of the terminal: prints a "
            "one-turn link (served on localhost while the command waits); docs/web.md.",
        ),
    ] = False,
    link_ttl: Annotated[
        float,
        typer.Option(
            "--link-ttl", metavar="SECONDS", min=1.0, help="With --web: how long a link is good."
        ),
    ] = 900.0,
    passkey: Annotated[
        bool,
        typer.Option(
            "--passkey",
            help=PASSKEY_HELP,
        ),
    ] = False,
    people_file: Annotated[
        Path | None,
        typer.Option(
            "--people",
            metavar="FILE",
            help=PEOPLE_HELP,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run one clarification session on standard input and output (help: ``_HELP``)."""
    from preflight_fsm.cli.report import usage_error

    if (intention is None) == (session is None):
        raise usage_error("give an INTENTION, or --session SESSION_ID to resume one")
    if passkey and not web:
        from preflight_fsm.cli.passkey_option import PASSKEY_NEEDS_WEB

        raise usage_error(PASSKEY_NEEDS_WEB)
    if web:
        people = None
        if passkey:
            from preflight_fsm.cli.passkey_option import signers

            with reported():
                people = signers(people_file)
        raise typer.Exit(
            _chat_on_page(intention, session, store, flow, seal_key_file, link_ttl, people)
        )
    if intention is not None:
        from preflight_fsm.flow import load_flow
        from preflight_fsm.machine import ClarificationMachine

        with reported():
            machine = ClarificationMachine(intention, load_flow(flow) if flow is not None else None)
    else:  # --session: a stored session, saved after every step (cli/sessions.py)
        from preflight_fsm.cli.sessions import stored_machine

        machine, session = stored_machine(str(session), store, flow, seal_key_file)
    stdin = sys.stdin
    interactive = stdin is not None and stdin.isatty() and sys.stdout.isatty()
    reconfigure = getattr(stdin, "reconfigure", None)
    if reconfigure is not None:
        # Undecodable bytes stay visible as lone surrogates; parse_reply refuses the line.
        reconfigure(errors="surrogateescape")
    try:
        run_chat(machine, _line_reader(stdin, sys.stdout, interactive), _line_writer(sys.stdout))
    except KeyboardInterrupt:
        _end("interrupted", EXIT_INTERRUPTED, interactive, session)
    except EOFError:
        _end("end of input", EXIT_END_OF_INPUT, interactive, session)


def _chat_on_page(
    intention: str | None,
    session: str | None,
    store: str | None,
    flow: Path | None,
    seal_key_file: Path | None,
    link_ttl: float,
    people: People | None = None,
) -> int:
    """``chat --web``: the session (new, in memory; or ``--session`` in its store) answered on
    the answer page; the exit code."""
    from preflight_fsm.cli.web import answer_on_page

    write = _line_writer(sys.stdout)
    if session is not None:
        from preflight_fsm.cli.stores import open_sessions

        opened = open_sessions(store, flow, seal_key_file=seal_key_file)
        with opened as (sessions, shown), reported(shown):
            return answer_on_page(sessions, session, write, link_ttl=link_ttl, people=people)
    from preflight_fsm.flow import load_flow
    from preflight_fsm.machine import ClarificationMachine
    from preflight_fsm.store import Sessions
    from preflight_fsm.store.memory import MemoryStore

    with reported():
        loaded = load_flow(flow) if flow is not None else None
        sessions = Sessions(MemoryStore(), flow=loaded)
        record = sessions.create(ClarificationMachine(str(intention), loaded))
        return answer_on_page(sessions, record.id, write, link_ttl=link_ttl, people=people)


def _end(reason: str, code: int, interactive: bool, session: str | None) -> NoReturn:
    # On a terminal the cursor still stands after the prompt (or ^C): start a fresh line.
    lead = "\n" if interactive else ""
    if session is None:
        outcome = "the session ended without an outcome"
    else:
        outcome = (
            f"session {session} is saved at its last answered question; resume it with "
            f"`preflight-fsm chat --session {session}`"
        )
    typer.echo(f"{lead}preflight-fsm: {reason}: {outcome}", err=True)
    raise typer.Exit(code)
