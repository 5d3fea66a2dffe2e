"""`preflight-fsm chat`: run one clarification session in the terminal.

Three layers, each usable alone: pure functions that render a turn, its outcome and refused
answers, and turn one line of input into a step's answers; :func:`run_chat`, the loop that drives
any :class:`ClarificationMachine` through a ``read_line``/``write`` pair (a restored session works
the same as a new one); and the typer command, which only wires the terminal or a pipe to that
loop and maps how it ends to an exit code.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn, TextIO

import typer

from preflight_fsm.cli import app
from preflight_fsm.errors import InvalidAnswers, InvalidFlow, InvalidIntention
from preflight_fsm.flow import load_flow
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.turn import Question, Turn

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
EXIT_FINISHED = 0  # with a patch or without one: stopping is an outcome, not a failure
EXIT_END_OF_INPUT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C

ReadLine = Callable[[str], str]
"""Shows a prompt and returns one line of input without its line end; EOFError at the end."""
Write = Callable[[str], None]
"""Writes one block of output as a line (or lines)."""

_NUMBER = re.compile(r"[0-9]+")
_OTHER_ALIAS = "other"  # C5: the engine reads "other" as the "Other (specify)" option too


class ChoiceOutOfRange(ValueError):
    """A number picks none of the options; the message says which numbers do."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one line of input answers.

    ``follow_up`` is a question to ask in the same turn before stepping (the text of "Other
    (specify)", C2); its answer joins ``answers`` under its id.
    """

    answers: dict[str, str]
    follow_up: Question | None = None


# -- pure: rendering and parsing -------------------------------------------------------------------


def render_turn(turn: Turn) -> str:
    """The turn's visible question, its options numbered from 1 (the last is "Other (specify)")."""
    question = _visible(turn)
    lines = [question.question]
    lines += [f"  {n}. {option}" for n, option in enumerate(question.options or (), start=1)]
    return "\n".join(lines)


def parse_reply(turn: Turn, text: str) -> Reply:
    """The answers one line of input gives the turn's visible question.

    A number picks that option; other text is sent as typed (the engine matches options and takes
    a custom value as "Other (specify)" with that text, C5); a blank line declines. Picking
    "Other (specify)", by number or by name, asks its companion next (C2). Raises
    ChoiceOutOfRange for a number that is no option.
    """
    question = _visible(turn)
    typed = text.strip()
    if not typed:
        return Reply({question.id: ""})  # C5: a blank pending answer is a decline
    options = question.options
    if not options:
        return Reply({question.id: text})
    value = text
    if _NUMBER.fullmatch(typed):
        number = int(typed)
        if not 1 <= number <= len(options):
            raise ChoiceOutOfRange(
                f"There is no option {typed}: choose a number from 1 to {len(options)}, "
                "or type your answer."
            )
        value = options[number - 1]
    companion = _companion(turn, question)
    if companion is not None and companion.depends_on_value is not None:
        other = companion.depends_on_value
        if value.strip().casefold() in {other.casefold(), _OTHER_ALIAS}:
            return Reply({question.id: other}, follow_up=companion)
    return Reply({question.id: value})


def render_outcome(turn: Turn) -> str:
    """A finished session: its patch, one field a line, or the key left unresolved; the hint."""
    if not turn.finished:
        raise ValueError(f"the session is still in {turn.state}; it has no outcome yet")
    if turn.patch is not None:
        lines = [f"Category: {turn.patch.category}"]
        lines += [f"{name}: {value}" for name, value in turn.patch.fields]
        lines += [f"Reference: {name}: {value}" for name, value in turn.patch.references]
    else:
        unresolved = ", ".join(turn.missing_info) or "a question"
        lines = [f"No patch: the session stopped with {unresolved} unresolved."]
    lines.append(f"Decision hint: {turn.decision_hint}")
    return "\n".join(lines)


def render_feedback(feedback: Mapping[str, Any]) -> str:
    """InvalidAnswers' structured feedback (C5) as one line per issue, for a person at a prompt."""
    issues = feedback.get("issues", {})
    lines = [
        f"Not accepted: {item['field']} {item['problem']}. Expected {item['requirement']}."
        for item in issues.get("invalid", [])
    ]
    lines += [
        f"Not accepted: {item['field']} is missing. Expected {item['requirement']}."
        for item in issues.get("missing", [])
    ]
    unknown = issues.get("unknown", [])
    if unknown:
        lines.append("Not accepted: unknown question ids: " + ", ".join(map(str, unknown)) + ".")
    return "\n".join(lines) or "Not accepted."


def _visible(turn: Turn) -> Question:
    for question in turn.questions:
        if question.depends_on_question_id is None:
            return question
    raise ValueError(f"the session is in {turn.state}; it asks no question")


def _companion(turn: Turn, question: Question) -> Question | None:
    for candidate in turn.questions:
        if candidate.depends_on_question_id == question.id:
            return candidate
    return None


# -- the loop --------------------------------------------------------------------------------------


def run_chat(machine: ClarificationMachine, read_line: ReadLine, write: Write) -> Turn:
    """Ask the machine's questions until its session ends, write the outcome, return the last turn.

    Refused input (ChoiceOutOfRange, InvalidAnswers) is answered and the question asked again; the
    session never sees it. EOFError and KeyboardInterrupt from ``read_line`` propagate, and leave
    the machine at the turn it had reached, so a caller can store it and resume later.
    """
    turn = machine.turn
    first = True
    while not turn.finished:
        if not first:
            write("")
        first = False
        write(render_turn(turn))
        try:
            reply = parse_reply(turn, read_line(PROMPT))
            answers = reply.answers
            if reply.follow_up is not None:
                # Sent as given, blank included: the engine then asks for it alone (NeedOther, C5).
                text = read_line(f"{reply.follow_up.question} ")
                answers = {**answers, reply.follow_up.id: text}
            turn = machine.step(answers)
        except ChoiceOutOfRange as refused:
            write(str(refused))
        except InvalidAnswers as refused:
            write(render_feedback(refused.feedback))
    if not first:
        write("")
    write(render_outcome(turn))
    return turn


def _line_writer(stdout: TextIO) -> Write:
    """Writes through the same stream the reader echoes to, so a transcript keeps its order."""

    def write(text: str) -> None:
        stdout.write(f"{text}\n")
        stdout.flush()

    return write


def _line_reader(stdin: TextIO | None, stdout: TextIO, interactive: bool) -> ReadLine:
    """A terminal shows the prompt and echoes what is typed; from a pipe, the prompt and the line
    read are written after the fact, so the output is a clean transcript and never ends on a bare
    prompt."""

    def read_line(prompt: str) -> str:
        if interactive:
            stdout.write(prompt)
            stdout.flush()
        line = stdin.readline() if stdin is not None else ""
        if not line:
            raise EOFError
        line = line.rstrip("\r\n")
        if not interactive:
            stdout.write(f"{prompt}{line}".rstrip() + "\n")
        return line

    return read_line


# -- the command -----------------------------------------------------------------------------------


# Typer's rich help keeps single line breaks, so each paragraph is one line here.
_HELP = "\n\n".join(
    [
        "Clarify INTENTION with a few questions, then print the decision patch and hint.",
        "Answer with an option's number or with text; picking 'Other (specify)' asks for its "
        "text next. An empty answer declines the question and ends the session without a patch. "
        "Invalid input is explained and the question asked again. When standard input is not a "
        "terminal, each line is one answer.",
        "Exit codes:\n"
        f"{EXIT_FINISHED}: the session finished, with or without a patch\n"
        f"{EXIT_END_OF_INPUT}: input ended before the session finished\n"
        f"{EXIT_USAGE}: invalid intention or flow file\n"
        f"{EXIT_INTERRUPTED}: interrupted (Ctrl-C)",
    ]
)


@app.command(help=_HELP)
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
            help="Resume this stored session instead of starting one; each step is saved "
            "(exit codes 4-8 as for `answer`, docs/sessions.md).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option("--store", metavar="URL_OR_PATH", help="The store of --session."),
    ] = None,
) -> None:
    """Run one clarification session on standard input and output (help: ``_HELP``)."""
    if (intention is None) == (session is None):
        raise typer.BadParameter("give an INTENTION, or --session SESSION_ID to resume one")
    try:
        if intention is not None:
            machine = ClarificationMachine(intention, load_flow(flow) if flow is not None else None)
        else:  # --session: a stored session, saved after every step (cli/sessions.py)
            from preflight_fsm.cli.sessions import stored_machine

            machine = stored_machine(str(session), store, flow)
    except (InvalidIntention, InvalidFlow) as error:
        typer.echo(f"preflight-fsm chat: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    stdin = sys.stdin
    interactive = stdin is not None and stdin.isatty()
    if isinstance(stdin, io.TextIOWrapper):
        stdin.reconfigure(errors="replace")  # undecodable bytes become U+FFFD, not a traceback
    try:
        run_chat(machine, _line_reader(stdin, sys.stdout, interactive), _line_writer(sys.stdout))
    except KeyboardInterrupt:
        _end("interrupted", EXIT_INTERRUPTED, interactive)
    except EOFError:
        _end("end of input", EXIT_END_OF_INPUT, interactive)


def _end(reason: str, code: int, interactive: bool) -> NoReturn:
    # On a terminal the cursor still stands after the prompt (or ^C): start a fresh line.
    lead = "\n" if interactive else ""
    typer.echo(f"{lead}{reason}: session ended without an answer", err=True)
    raise typer.Exit(code)
