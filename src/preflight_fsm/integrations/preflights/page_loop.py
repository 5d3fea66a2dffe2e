"""``pf --web``: pf's question loop on the answer page instead of the terminal (docs/web.md).

Preflights' ``pf start`` (and ``pf answer``, ``pf resume``) run an interactive loop that prompts
each round in the terminal. With ``--web`` that loop (:func:`page_loop`) prints a link instead,
serves the session's rounds on a loopback listener of its own (the way ``gh auth login`` serves
its callback) and waits while the person answers them in their browser, each round recorded
``user_web`` in the ADR and task Preflights writes; then it prints what pf prints at the end.
With ``--passkey`` the page is the signed one (``page_setup.py``, as under ``mcp --preflights
--answers-from person``): each round that takes an engine step is confirmed with a passkey the
people file lists and recorded ``user_passkey``, so the ADR passes ``verify --require person``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from preflights.application.types import Question as PreflightsQuestion
from preflights.cli import main as pf_main
from preflights.cli.errors import ExitCode
from preflights.cli.output import print_app_error, print_completed
from preflights.cli.state import SessionState, delete_session

from preflight_fsm.integrations.preflights.agent_tools import (
    PreflightsTools,
    must_answer,
    questions_result,
)
from preflight_fsm.integrations.preflights.application import FsmPreflightsApp
from preflight_fsm.integrations.preflights.forms import PreflightsForms, Result
from preflight_fsm.integrations.preflights.page_setup import preflights_page
from preflight_fsm.mcp.policy import AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer
from preflight_fsm.mcp.rounds import Round

if TYPE_CHECKING:
    from preflight_fsm.people import People

__all__ = ["on_the_page", "page_loop"]


def page_loop(
    app: FsmPreflightsApp, link_ttl: float | None = None, people: People | None = None
) -> Callable[[str, SessionState], None]:
    """pf's interactive loop for ``app``, answered on the page (``_run_interactive_loop``'s
    arguments: the repository and pf's saved session); with ``people``, on the signed page,
    served on the loopback port they enrolled on."""

    def loop(repo_root: str, state: SessionState) -> None:
        tools = PreflightsTools(app, default_repo_path=repo_root)
        policy: AnswersFrom = "web" if people is None else "person"
        forms = PreflightsForms(tools.require_clarification, policy, RoundSealer(()))
        answered = set(state.answers)
        questions = tuple(
            PreflightsQuestion(**vars(q))
            for q in state.questions
            if q.id not in answered and q.depends_on_question_id not in answered
        )
        if any(must_answer(q) for q in questions):
            result = questions_result(state.session_id, questions, answered=0)
        else:  # what the intention left open: the next round (pf's loop continues with {})
            result = tools.require_clarification("", session_id=state.session_id, answers={})
        asked = forms.remember(result, state.intention, state.session_id)
        if isinstance(asked, Round):
            signed = None if people is None else (people, tools.step_challenge)
            _, page, listener = preflights_page(forms, "stdio", None, link_ttl, signed)
            assert listener is not None  # served by a listener of its own, not as a route
            # pf's resume asks again from the intention, once pf's session is closed (while it
            # is active, resume refuses): closed here whenever the page cannot go on.
            resume = "preflight-fsm pf resume --web" + (" --passkey" if people else "")
            try:
                listener.start()
            except OSError as exc:  # the enrolled port is taken (by another page, say)
                delete_session(repo_root)
                click.echo(
                    f"✗ Error: cannot serve the answer page on localhost:{listener.port} "
                    f"({exc}); nothing was answered: free the port and run `{resume}`",
                    err=True,
                )
                sys.exit(ExitCode.USER_ERROR)
            with listener:
                link = page.link(state.session_id)
                click.echo("")
                click.echo(f"Answer in your browser (the link is yours alone; it expires): {link}")
                found = page.until_finished(state.session_id, page.links.ttl)
            if found is None:
                delete_session(repo_root)
                click.echo(
                    "The link expired before the round was answered; run "
                    f"`{resume}` to be asked again from the intention, on a new link.",
                    err=True,
                )
                sys.exit(ExitCode.USER_ERROR)
            result = found
        _finish(repo_root, result)

    return loop


def _finish(repo_root: str, result: Result) -> None:
    """Print the end as pf's own loop does: the files written, or the error (exit)."""
    click.echo("")
    if result.get("status") == "completed":
        delete_session(repo_root)
        paths = {a.get("type"): a.get("path") for a in result.get("artifacts_created") or ()}
        print_completed(
            str(paths.get("task") or "docs/CURRENT_TASK.md"),
            _text(paths.get("adr")),
            _text(paths.get("projection")),
            json_output=False,
        )
        return
    error = result.get("error") or {}
    print_app_error(
        str(error.get("code", "ERROR")),
        str(error.get("message", "the session ended")),
        _text(error.get("recovery_hint")),
        json_output=False,
    )
    sys.exit(ExitCode.SYSTEM_ERROR)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@contextmanager
def on_the_page(
    app: FsmPreflightsApp, link_ttl: float | None = None, *, people: People | None = None
) -> Iterator[None]:
    """Within: pf's interactive loop is :func:`page_loop`'s (signed by ``people`` if given)."""
    previous = pf_main._run_interactive_loop
    setattr(pf_main, "_run_interactive_loop", page_loop(app, link_ttl, people))  # noqa: B010
    try:
        yield
    finally:
        setattr(pf_main, "_run_interactive_loop", previous)  # noqa: B010
