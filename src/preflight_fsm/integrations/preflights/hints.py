"""What ``preflight-fsm pf`` tells a person to type next: always ``preflight-fsm pf ...``.

Preflights' ``pf`` prints hints for its own command (``preflights answer db_type=PostgreSQL``,
``Use 'pf answer' to continue``). Both ``preflights`` and ``pf`` are installed beside this
package and run Preflights' own mock on the same session files, so following such a hint from
``preflight-fsm pf`` asks other questions and writes another decision. While :func:`pf_hints` is
active, every line Preflights' command line prints and every help page it shows names
``preflight-fsm pf`` instead, and a hint with a placeholder (``<key>=<value>``) names the
question to answer.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Final

import click
from preflights.cli import main as pf_main
from preflights.cli import output as pf_output

__all__ = ["INPUT_ENDED", "PF_COMMAND", "pf_hints", "pf_text", "stems_from_ctrl_c"]

PF_COMMAND: Final = "preflight-fsm pf"
"""The command every hint of ``preflight-fsm pf`` starts with."""

# Preflights' own command names (`preflights start`, `pf answer`), not already ours.
_THEIR_COMMAND = re.compile(
    r"(?<!preflight-fsm )(?<![\w-])(?:preflights|pf) (start|answer|status|resume|reset)\b"
)
# Hints whose command cannot be followed as printed: what to print instead.
_REPLACED: Final = {
    "Use 'preflights answer' to continue, or 'preflights reset' to start fresh": (
        f"See its questions with '{PF_COMMAND} status', or start fresh with '{PF_COMMAND} reset'"
    ),
    "Use 'pf answer' to continue or 'pf reset' to cancel.": (
        f"Use '{PF_COMMAND} status' to see what is left, or '{PF_COMMAND} reset' to cancel."
    ),
}
_PLACEHOLDERS: Final = (('"<intention>"', '"..."'), ("=<value>", '="..."'))
_START_HINT: Final = "Use: preflights answer <key>=<value> ..."


def pf_text(text: str) -> str:
    """``text`` with every command of Preflights' own CLI as ``preflight-fsm pf``'s."""
    # click rewraps a help paragraph unless it starts with \b: keep the examples one a line.
    text = text.replace("\n\n    Examples:\n", "\n\n    \b\n    Examples:\n")
    for theirs, ours in _REPLACED.items():
        text = text.replace(theirs, ours)
    for theirs, ours in _PLACEHOLDERS:
        text = text.replace(theirs, ours)
    return _THEIR_COMMAND.sub(lambda m: f"{PF_COMMAND} {m.group(1)}", text)


class _Echo:
    """``click.echo`` for Preflights' CLI modules: each message through :func:`pf_text`."""

    def __init__(self) -> None:
        self.next_question: str | None = None  # the start hint's concrete command

    def __call__(self, message: Any = None, *args: Any, **kwargs: Any) -> None:
        if isinstance(message, str):
            if message == _START_HINT and self.next_question:
                message = f"Use: {PF_COMMAND} answer {self.next_question}"
            message = pf_text(message)
        click.echo(message, *args, **kwargs)


def _click_with(echo: _Echo) -> types.ModuleType:
    """A stand-in for the ``click`` module whose ``echo`` is ``echo``; all else is click's."""
    stand_in = types.ModuleType("click")
    stand_in.__dict__.update(vars(click))
    stand_in.echo = echo  # type: ignore[attr-defined]
    return stand_in


def _first_answer(state: Any) -> str | None:
    """``id=option`` for the first visible question of a pf session state, as pf's hints put it."""
    for question in state.questions:
        if question.depends_on_question_id is None:
            value = question.options[0] if question.options else "..."
            return f'{question.id}="{value}"' if " " in value else f"{question.id}={value}"
    return None


def _start_success(echo: _Echo, original: Callable[..., None]) -> Callable[..., None]:
    def print_start_success(state: Any, *args: Any, **kwargs: Any) -> None:
        echo.next_question = _first_answer(state)
        original(state, *args, **kwargs)

    return print_start_success


def _needs_more_answers(
    original: Callable[..., None], asked: Callable[[], tuple[str, ...]]
) -> Callable[..., None]:
    """pf's list of remaining questions, which hides an "Other (specify)" text pending alone."""

    def print_needs_more_answers(questions: list[Any], json_output: bool = False) -> None:
        original(questions, json_output)
        if json_output or any(q.depends_on_question_id is None for q in questions):
            return
        owed = asked()
        for question in questions:  # only companions left: say which text is owed, and how
            if question.id not in owed:
                continue
            click.echo(f"{question.question}")
            click.echo(f'Use: {PF_COMMAND} answer {question.id}="..."')

    return print_needs_more_answers


INPUT_ENDED: Final = "INPUT_ENDED"
"""pf's prompt met the end of its input: what pf reports as an empty SYSTEM_ERROR."""

_KEPT: Final = f"the session is kept: '{PF_COMMAND} status' shows what is left to answer"


def stems_from_ctrl_c(error: BaseException | None) -> bool:
    """Whether ``error`` was raised while handling a Ctrl-C (click's prompt turns it into an
    ``Abort``, pf into its error report or its exit)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__context__
    return False


def _app_error(original: Callable[..., None], ended: Callable[[], None]) -> Callable[..., None]:
    """pf's error printer, saying what an empty SYSTEM_ERROR is: a Ctrl-C or the end of input at
    a prompt (click's Abort carries no message for either), the session kept."""

    def print_app_error(code: str, message: str, hint: str | None, *args: Any, **kw: Any) -> None:
        if code == "SYSTEM_ERROR" and not message.strip():
            if stems_from_ctrl_c(sys.exc_info()[1]):
                # As `chat` says it; the cursor still stands after the ^C.
                click.echo(f"\npreflight-fsm: interrupted: {_KEPT}", err=True)
                return
            ended()
            code, message = INPUT_ENDED, "input ended before every question was answered"
            hint = _KEPT
        original(code, message, hint, *args, **kw)

    return print_app_error


@contextmanager
def pf_hints(
    commands: click.Group,
    asked: Callable[[], tuple[str, ...]],
    input_ended: Callable[[], None] = lambda: None,
) -> Iterator[None]:
    """Within: Preflights' CLI prints ``preflight-fsm pf`` commands, in output and in help.

    ``asked`` gives the ids of the questions the engine asked last (an "Other (specify)" text
    pf does not list); ``input_ended`` is called when a prompt met the end of its input.
    """
    echo = _Echo()
    stand_in = _click_with(echo)
    with ExitStack() as undo:
        for module in (pf_main, pf_output):
            undo.enter_context(_swapped(module, "click", stand_in))
        undo.enter_context(
            _swapped(
                pf_main,
                "print_start_success",
                _start_success(echo, vars(pf_main)["print_start_success"]),
            )
        )
        undo.enter_context(
            _swapped(
                pf_main,
                "print_needs_more_answers",
                _needs_more_answers(vars(pf_main)["print_needs_more_answers"], asked),
            )
        )
        printer = _app_error(vars(pf_main)["print_app_error"], input_ended)
        undo.enter_context(_swapped(pf_main, "print_app_error", printer))
        for command in (commands, *commands.commands.values()):
            for attribute in ("help", "short_help"):
                text = getattr(command, attribute, None)
                if isinstance(text, str):
                    undo.enter_context(_swapped(command, attribute, pf_text(text)))
        yield


@contextmanager
def _swapped(owner: Any, name: str, value: Any) -> Iterator[None]:
    previous = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, previous)
