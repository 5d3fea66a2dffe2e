"""Preflights' own ``pf`` command line, run with the engine as its clarification engine.

:func:`run_pf` runs ``preflights.cli.main.app`` — the same commands, arguments, prompts, session
files (``.preflights/current_session.json`` in the repository, ``~/.preflights/sessions``) and
artifacts — after installing, as the application ``pf`` uses, Preflights' own
``PreflightsApp`` wiring with three parts swapped: the engine's :class:`FsmLLMAdapter` for the
mock (or, with pf's ``--llm`` options, Preflights' real adapter under the guard,
``llm_options``), :class:`FsmPreflightsApp` (the full hybrid flow) for the app class, and
:class:`FsmFileSessionAdapter` (keeps pre-filled answers) for the file sessions.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Final

import click
from preflights import application
from preflights.adapters.default_config import DefaultConfigLoader
from preflights.adapters.filesystem import FilesystemAdapter
from preflights.adapters.random_uid import RandomUIDProvider
from preflights.adapters.simple_file_context import SimpleFileContextBuilder
from preflights.adapters.system_clock import SystemClockProvider
from preflights.application.preflights_app import PreflightAppError
from preflights.application.types import PreflightStartResult
from preflights.cli.errors import ExitCode
from preflights.cli.main import app as pf_app
from preflights.cli.state import delete_session

from preflight_fsm.cli.report import EXIT_INTERRUPTED
from preflight_fsm.flow import Flow
from preflight_fsm.integrations.preflights.adapter import FsmLLMAdapter
from preflight_fsm.integrations.preflights.application import FsmPreflightsApp
from preflight_fsm.integrations.preflights.compat import compat_problems
from preflight_fsm.integrations.preflights.hints import (
    INPUT_ENDED,
    PF_COMMAND,
    pf_hints,
    stems_from_ctrl_c,
)
from preflight_fsm.integrations.preflights.llm_options import engine_header, split_llm_options
from preflight_fsm.integrations.preflights.position import logger
from preflight_fsm.integrations.preflights.prompts import near_miss_prompts
from preflight_fsm.integrations.preflights.sessions import FsmFileSessionAdapter

__all__ = [
    "LLM_OPTIONS",
    "PASSKEY_OPTION",
    "PEOPLE_OPTION",
    "WEB_OPTION",
    "PfApplication",
    "build_pf_app",
    "run_pf",
]

LLM_OPTIONS: Final = ("--llm", "--llm-strict", "--llm-provider")
"""pf's options that choose a real LLM: it runs under the guard (``preflight_fsm.llm``)."""
WEB_OPTION: Final = "--web"
"""pf's option (ours) answering the rounds on the answer page (``page_loop.py``)."""
WEB_HELP: Final = (
    "Answer on the answer page in your browser instead of at the prompt: prints a link, served "
    "on localhost while pf waits (docs/web.md)."
)
PASSKEY_OPTION: Final = "--passkey"
"""pf's option (ours, with ``--web``): each engine round confirmed with the person's passkey."""
PEOPLE_OPTION: Final = "--people"
"""pf's option (ours, with ``--passkey``): the people file (default .preflight-fsm/people.toml)."""


class PfApplication(FsmPreflightsApp):
    """The application of ``pf``: a non-interactive start that leaves nothing to ask asks the
    next round."""

    lists_next_round = False
    """Set for ``pf start --non-interactive``, which only lists the questions owed; interactive
    ``pf`` prompts the dependent questions itself (and Preflights' own tests keep it so)."""

    def start_preflight(
        self, intention: str, repo_path: str, *, debug_llm: bool = False
    ) -> PreflightStartResult:
        """Preflights' start; when the intention answered every question shown, the questions of
        the next round instead (issue 30): pf lists only questions without a parent, so an empty
        list and a ``<key>`` placeholder would be all a person is told, as ``mcp --preflights``
        continues at once in that case too."""
        started = super().start_preflight(intention, repo_path, debug_llm=debug_llm)
        if not self.lists_next_round or any(
            q.depends_on_question_id is None for q in started.questions
        ):
            return started
        try:
            following = self.continue_preflight(started.session_id, {}, debug_llm=debug_llm)
        except PreflightAppError:
            # A session adapter that keeps the session only once start returns (Preflights' own
            # tests wire one): pf then lists what start asked, as Preflights' own pf does.
            return started
        if following.status != "needs_clarification" or not following.questions:
            return started
        return dataclasses.replace(started, questions=following.questions)


def build_pf_app(
    flow: Flow | None = None, llm_adapter: FsmLLMAdapter | None = None
) -> PfApplication:
    """The application ``pf`` builds for itself (``_get_default_app``), on the engine (or on
    ``llm_adapter``, a guarded LLM)."""
    return PfApplication(
        session_adapter=FsmFileSessionAdapter(),
        llm_adapter=llm_adapter or FsmLLMAdapter(flow=flow),
        filesystem_adapter=FilesystemAdapter(),
        uid_provider=RandomUIDProvider(),
        clock_provider=SystemClockProvider(),
        file_context_builder=SimpleFileContextBuilder(),
        config_loader=DefaultConfigLoader(),
        answered_by="cli",  # pf's answers are typed at its prompt or given to `pf answer`
    )


def run_pf(args: Sequence[str], *, flow: Flow | None = None, prog_name: str = "pf") -> int:
    """Run ``pf ARGS`` on the engine; its exit code (0 done, 1 user error or stop, 2 failure,
    130 interrupted by Ctrl-C).

    A session the engine ends without a decision (NoPatch) is closed in ``pf``'s files too, so
    ``pf start`` works again. It, refused answers and a question pf cannot prompt exit 1
    (Preflights' "user" code), not 2 (its system error).
    """
    problems = compat_problems()
    if problems:
        _fail("this Preflights cannot run on preflight-fsm: " + "; ".join(problems))
        return int(ExitCode.SYSTEM_ERROR)
    web = WEB_OPTION in args
    try:
        passkey, people_file, args = _passkey_options([a for a in args if a != WEB_OPTION])
    except ValueError as exc:
        _fail(str(exc))
        return int(ExitCode.USER_ERROR)
    if passkey and not web:
        from preflight_fsm.cli.passkey_option import PASSKEY_NEEDS_WEB

        _fail(PASSKEY_NEEDS_WEB)
        return int(ExitCode.USER_ERROR)
    # The page runs on the mcp extra's parts (its server, py_webauthn), a second of CPU to
    # import: plain pf imports none of it.
    page: Callable[..., AbstractContextManager[None]] | None = None
    if web:
        try:
            from preflight_fsm.integrations.preflights.page_loop import on_the_page
        except ImportError as exc:
            from preflight_fsm.extras import install_hint

            _fail(
                f"{WEB_OPTION} needs the answer page ({exc}); install it with: "
                + install_hint("mcp")
            )
            return int(ExitCode.USER_ERROR)
        page = on_the_page
    people = None
    if passkey and _prompts(args):  # checked before pf starts a session: nothing left behind
        from preflight_fsm.cli.passkey_option import signers
        from preflight_fsm.errors import InvalidPeopleFile

        try:
            people = signers(people_file)
        except InvalidPeopleFile as exc:
            _fail(str(exc))
            return int(ExitCode.USER_ERROR)
    try:
        options, args = split_llm_options(args)
        guard = options.guard(flow)
    except ValueError as exc:  # a bad deadline, an unknown provider, no key with --llm-strict
        _fail(str(exc))
        return int(ExitCode.USER_ERROR)
    app = build_pf_app(flow, guard)
    app.debug_every_round = "--debug-llm" in args  # pf's loop drops it after start
    app.lists_next_round = "--non-interactive" in args
    app.answer_command = f"{PF_COMMAND} answer"
    with (
        _installed(app),
        _warnings_to_stderr(),
        engine_header(),
        pf_hints(pf_app, app.asked_last, lambda: app.user_errors.append(INPUT_ENDED)),
        near_miss_prompts(app.engine_flow.limits.max_answer_chars),
        page(app, people=people) if page is not None else nullcontext(),
        _listed_in_help(pf_app),
    ):
        code = _exit_code(lambda: pf_app.main(args=list(args), prog_name=prog_name))
    for stop in app.stops:
        delete_session(stop.repo_path)
    if app.user_errors and code == ExitCode.SYSTEM_ERROR:
        code = int(ExitCode.USER_ERROR)  # pf reports every app error as its system error
    return code


def _prompts(args: Sequence[str]) -> bool:
    """Whether pf prompts the person with ``args``: not under ``--non-interactive`` or
    ``--json``, nor ``pf answer`` without ``-i``. A command that prompts nothing answers
    nothing on the page, so ``--passkey`` has nothing to sign there and its people file is not
    read, as ``--web`` changes nothing there (docs/decisions.md D286)."""
    if "--non-interactive" in args or "--json" in args:
        return False
    command = next((arg for arg in args if not arg.startswith("-")), None)
    return command != "answer" or "-i" in args or "--interactive" in args


def _passkey_options(args: list[str]) -> tuple[bool, Path | None, list[str]]:
    """``--passkey`` and ``--people FILE`` (or ``--people=FILE``) taken out of ``args``: whether
    it was given, the file, and what is left for pf. ValueError for ``--people`` without FILE."""
    passkey, people, left = False, None, []
    given = iter(args)
    for arg in given:
        if arg == PASSKEY_OPTION:
            passkey = True
        elif arg == PEOPLE_OPTION or arg.startswith(PEOPLE_OPTION + "="):
            _, equals, value = arg.partition("=")
            value = value if equals else next(given, "")
            if not value or value.startswith("-"):
                raise ValueError(f"{PEOPLE_OPTION} needs the people file: {PEOPLE_OPTION} FILE")
            people = Path(value)
        else:
            left.append(arg)
    return passkey, people, left


@contextmanager
def _listed_in_help(commands: click.Group) -> Iterator[None]:
    """Within: the commands that prompt list our options in their ``--help``; pf never parses
    them (:func:`run_pf` takes them out first)."""
    from preflight_fsm.cli.passkey_option import PASSKEY_HELP, PEOPLE_HELP

    ours = [
        click.Option([WEB_OPTION], is_flag=True, expose_value=False, help=WEB_HELP),
        click.Option([PASSKEY_OPTION], is_flag=True, expose_value=False, help=PASSKEY_HELP),
        click.Option([PEOPLE_OPTION], metavar="FILE", expose_value=False, help=PEOPLE_HELP),
    ]
    prompting = [commands.commands[name] for name in ("start", "answer", "resume")]
    for command in prompting:
        command.params.extend(ours)
    try:
        yield
    finally:
        for command in prompting:
            command.params[:] = [p for p in command.params if p not in ours]


@contextmanager
def _installed(app: FsmPreflightsApp) -> Iterator[None]:
    """``app`` as the one pf's commands use, restoring whatever was there afterwards."""
    previous = application._default_app
    application._default_app = app
    try:
        yield
    finally:
        application._default_app = previous


@contextmanager
def _warnings_to_stderr() -> Iterator[None]:
    """Why the engine ran on another text than the intention, printed as pf prints its notes."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("preflight-fsm: %(message)s"))
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _exit_code(run: Callable[[], object]) -> int:
    """The exit code of a click command run in standalone mode (it exits, even on success);
    130 for an exit on a Ctrl-C (pf's own is 1, or 2 at a prompt), as ``chat`` exits."""
    try:
        run()
    except SystemExit as exc:
        if stems_from_ctrl_c(exc):
            return EXIT_INTERRUPTED
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    return 0


def _fail(message: str) -> None:
    print(f"✗ Error: {message}", file=sys.stderr)
