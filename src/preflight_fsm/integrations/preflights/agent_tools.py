"""Preflights' agent tools on preflight-fsm, served by the official ``mcp`` SDK (2.x).

The two tools of Preflights' own MCP server, with its arguments and result shapes:

- ``require_clarification`` starts a session (``user_intention``, ``optional_context``,
  ``repo_path``) or continues one (``session_id``, ``answers``). It runs Preflights' own
  application (:class:`FsmPreflightsApp`: the full hybrid flow on the engine), so the ADR and task
  files are written by Preflights' code into the repository ``repo_path`` names (else the one
  around the server's working directory), and a completed result lists them in
  ``artifacts_created``.
- ``read_architecture`` reads ``docs/ARCHITECTURE_STATE.md`` as Preflights' tool does.

Unlike Preflights' server (written for the 1.x SDK, never imported here): sessions are durable,
kept in a preflight-fsm store (``--store``, else ``PREFLIGHT_FSM_STORE``, else the CLI's SQLite
file), so they survive a restart; every question is listed, the ``<id>__other`` companions too,
with ``depends_on_question_id``/``depends_on_value``, so an agent can take the "Other (specify)"
path; and a session whose intention Preflights already answered ("Add OAuth login") completes at
once instead of returning an empty list of questions.

Run it alone (stdio) with
``python -m preflight_fsm.integrations.preflights.agent_tools [--store S]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult
from preflights.adapters.default_config import DefaultConfigLoader
from preflights.adapters.filesystem import FilesystemAdapter
from preflights.adapters.random_uid import RandomUIDProvider
from preflights.adapters.simple_file_context import SimpleFileContextBuilder
from preflights.adapters.system_clock import SystemClockProvider
from preflights.application.preflights_app import PreflightAppError
from preflights.application.types import (
    PreflightArtifacts,
    PreflightContinueResult,
    PreflightError,
    Question,
)

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.errors import PreflightFsmError, SessionConflict
from preflight_fsm.flow import Flow, load_flow
from preflight_fsm.integrations.preflights.adapter import FsmLLMAdapter
from preflight_fsm.integrations.preflights.application import FsmPreflightsApp
from preflight_fsm.integrations.preflights.compat import compat_problems
from preflight_fsm.integrations.preflights.forms import ANSWERS_NEED_USER, PreflightsForms
from preflight_fsm.integrations.preflights.llm_options import configured_guard
from preflight_fsm.integrations.preflights.page_setup import preflights_page
from preflight_fsm.integrations.preflights.sessions import StoreSessionAdapter
from preflight_fsm.mcp.auth import ServerAuth, current_caller
from preflight_fsm.mcp.policy import AnswersFrom, answers_from_setting, policy_note
from preflight_fsm.mcp.request_state import RoundSealer
from preflight_fsm.people import People
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.store import SessionStore, open_store
from preflight_fsm.web import AnswerPage

__all__ = [
    "PreflightsTools",
    "build_preflights_server",
    "main",
    "must_answer",
    "questions_result",
]

logger = logging.getLogger("preflight_fsm.integrations.preflights.agent_tools")

SERVER_NAME: Final = "preflight-fsm-preflights"
REQUIRE_CLARIFICATION: Final = (
    "Start or continue a clarification session (Preflights on preflight-fsm). Call it before "
    "writing code for an ambiguous or structurally impactful request: start with "
    "user_intention (and repo_path); then answer the questions returned, by id, with session_id "
    "and answers. A choice answered 'Other (specify)' needs its '<id>__other' text too. When "
    "complete, the ADR and task files are written into the repository (artifacts_created)."
)
READ_ARCHITECTURE: Final = (
    "Read the repository's current architecture decisions (docs/ARCHITECTURE_STATE.md)."
)
ARCHITECTURE_FILE: Final = "docs/ARCHITECTURE_STATE.md"
_REPO_ROOTS_HINT: Final = "Pass a repo_path inside the roots the error names."
_CONFLICT_HINT: Final = (
    "Nothing of this call was written. Call again with the session_id and no answers to see "
    "the question the session asks now, then answer it."
)


class PreflightsTools:
    """The two tools as plain methods returning Preflights' JSON shapes; they never raise."""

    def __init__(
        self,
        app: FsmPreflightsApp,
        default_repo_path: str | None = None,
        repo_roots: Sequence[Path] | None = None,
        principal: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.app = app
        # The authenticated caller of the request being served (mcp/auth.py), per round.
        self.principal = principal
        self.default_repo_path = default_repo_path
        # None: any repository (stdio: the agent runs as its user); else only those inside.
        self.repo_roots = None if repo_roots is None else tuple(r.resolve() for r in repo_roots)

    def require_clarification(
        self,
        user_intention: str,
        optional_context: str | None = None,
        session_id: str | None = None,
        answers: dict[str, Any] | None = None,
        preferences: dict[str, Any] | None = None,
        repo_path: str | None = None,
        answered_by: AnsweredBy = "agent",
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> dict[str, Any]:
        """Start (no ``session_id``) or continue a session; Preflights' result as a dict. The
        answers are the agent's (tool arguments) unless ``answered_by`` says otherwise, given
        through ``principal`` (None: the caller of the request being served) with ``proof``
        (a ``user_passkey`` round's)."""
        try:
            if session_id is None:
                return self._start(user_intention, optional_context, repo_path)
            return self._continue(session_id, answers or {}, answered_by, principal, proof)
        except _RepoNotFound as exc:
            return _error("REPO_NOT_FOUND", str(exc), "Pass repo_path: a git repository.")
        except _RepoNotServed as exc:
            return _error("REPO_NOT_ALLOWED", str(exc), _REPO_ROOTS_HINT)
        except PreflightAppError as exc:
            return _error(exc.code, exc.message, exc.recovery_hint, exc.details)
        except SessionConflict as exc:  # another round on this session was taken first
            return _error("SESSION_CONFLICT", str(exc), _CONFLICT_HINT)
        except PreflightFsmError as exc:  # a store that cannot be reached, or is busy
            return _error(exc.code.upper(), str(exc), "Retry the call; nothing was written.")
        except Exception as exc:  # no traceback reaches the agent; the log keeps it
            logger.exception("require_clarification failed")
            return _error("INTERNAL_ERROR", str(exc), "Check the server log and retry.")

    def read_architecture(self, repo_path: str | None = None) -> dict[str, Any]:
        """The architecture decisions recorded in the repository, as Preflights' tool gives them."""
        try:
            state = self.app._fs.read_architecture_state(self._repo(repo_path))
        except _RepoNotFound as exc:
            return _error("REPO_NOT_FOUND", str(exc), "Pass repo_path: a git repository.")
        except _RepoNotServed as exc:
            return _error("REPO_NOT_ALLOWED", str(exc), _REPO_ROOTS_HINT)
        except Exception as exc:
            return _error("FILESYSTEM_ERROR", f"Failed to read architecture: {exc}", None)
        if state is None:
            architecture: dict[str, Any] = {"uid": None, "categories": {}}
        else:
            categories = {
                name: {key: re.sub(r"\s*\(ADR [^)]+\)", "", value) for key, value in fields}
                for name, fields in state.categories
            }
            architecture = {"uid": state.uid, "categories": categories}
        return {"status": "success", "architecture": architecture, "source_file": ARCHITECTURE_FILE}

    # -- rounds ---------------------------------------------------------------------------------

    def _start(
        self, user_intention: str, optional_context: str | None, repo_path: str | None
    ) -> dict[str, Any]:
        intention = user_intention
        if optional_context:  # as Preflights' own tool builds it
            intention = f"{user_intention}\n\nContext: {optional_context}"
        started = self.app.start_preflight(intention, self._repo(repo_path))
        detected = [{"label": k, "value": v} for k, v in started.detected_from_intent]
        if not any(must_answer(q) for q in started.questions):
            # Preflights answered everything from the intention: finish now, not with [] to ask.
            result = self._continue(started.session_id, {})
        else:
            result = questions_result(started.session_id, started.questions, answered=0)
        if detected:
            result["detected_from_intent"] = detected
        return result

    def _continue(
        self,
        session_id: str,
        answers: dict[str, Any],
        answered_by: AnsweredBy = "agent",
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> dict[str, Any]:
        delta = _delta(answers)
        result = self.app.continue_preflight(
            session_id,
            delta,
            answered_by=answered_by,
            principal=principal if principal is not None else self.principal(),
            proof=proof,
        )
        return _result(session_id, result, answered=len(delta))

    def step_challenge(self, session_id: str, answers: dict[str, Any]) -> bytes | None:
        """What a passkey signs for ``answers`` to continue ``session_id`` (None: the round
        takes no engine step); InvalidAnswers when the engine refuses them. Records nothing."""
        return self.app.step_challenge(session_id, _delta(answers))

    def _repo(self, repo_path: str | None) -> str:
        start = Path(repo_path or self.default_repo_path or os.getcwd()).resolve()
        for folder in (start, *start.parents):
            if (folder / ".git").exists():
                roots = self.repo_roots
                if roots is not None and not any(folder.is_relative_to(r) for r in roots):
                    shown = ", ".join(str(r) for r in roots)
                    raise _RepoNotServed(
                        f"the repository {folder} is outside the roots this server writes in "
                        f"({shown}); the operator adds one with --repo-root; nothing was written"
                    )
                return str(folder)
        raise _RepoNotFound(
            f"No git repository found from {start}. Pass repo_path: a git repository."
        )


def build_preflights_server(
    store: str | None = None,
    flow_path: str | None = None,
    *,
    answers_from: AnswersFrom = "any",
    request_state_keys: Sequence[bytes] = (),
    auth: ServerAuth | None = None,
    repo_roots: Sequence[Path] | None = None,
    transport: str = "stdio",
    public_url: str | None = None,
    closing: ExitStack | None = None,
    opened: SessionStore | None = None,
    people: People | None = None,
    enroll: Callable[[MCPServer, AnswerPage | None], object] | None = None,
) -> MCPServer:
    """An MCPServer with Preflights' two tools on preflight-fsm; sessions in ``store``, or in
    ``opened``, that store already open (its opener closes it; ``mcp`` passes the store it
    checked, reclaims from and asks for /healthz, so one process holds one store).

    ``store`` is a store location as ``--store`` takes it (None: ``PREFLIGHT_FSM_STORE``, else
    the CLI's SQLite file); ``flow_path`` a flow file (None: the default flow). Clients that show
    forms are asked through them (``forms.py``); ``answers_from`` is the policy
    (``user``: only through forms, the answer page's link when none reaches the person;
    ``web``: only on the answer page, ``page.py``, served over ``transport`` "http" as a route
    at ``public_url``'s origin, else by a loopback listener that ``closing`` stops; ``person``:
    there, each engine step signed with a passkey ``people`` lists, ``signed_page.py``). ``auth``
    authenticates every HTTP request; ``repo_roots`` (None: any) bounds the repositories
    ``repo_path`` may name; ``enroll`` (``mcp --enroll``, over HTTP) mounts the enrollment
    pages on the server, told the answer page they sign on. Raises RuntimeError when the
    installed Preflights is not the one this integration relies on.
    """
    problems = compat_problems()
    if problems:
        raise RuntimeError("this Preflights cannot run on preflight-fsm: " + "; ".join(problems))
    if answers_from == "person" and people is None:
        raise RuntimeError("--answers-from person needs the people file whose passkeys sign")
    flow: Flow | None = load_flow(flow_path) if flow_path else None
    try:  # a provider in PREFLIGHTS_LLM_PROVIDER: Preflights' adapter, under the guard
        guard = configured_guard(flow, report=logger.warning)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None
    teams = auth.teams if auth is not None else {}

    def principal() -> str | None:
        return current_caller(teams).principal

    def may_use(owner: str | None) -> bool:
        return current_caller(teams).may_use(owner, teams)

    sessions = StoreSessionAdapter(opened or open_store(store), owner=principal, may_use=may_use)
    app = build_store_app(store, flow, guard, answered_by="agent", sessions=sessions)
    tools = PreflightsTools(app, repo_roots=repo_roots, principal=principal)
    forms = PreflightsForms(
        tools.require_clarification, answers_from, RoundSealer(request_state_keys)
    )
    note = policy_note(answers_from).replace("answers_need_user", ANSWERS_NEED_USER)
    server = MCPServer(
        SERVER_NAME,
        instructions="Preflights' clarification tools, on the preflight-fsm engine." + note,
        # The SDK logs every request at INFO, several lines each: only what needs a look.
        log_level="WARNING",
        auth=auth.settings if auth else None,
        token_verifier=auth.verifier if auth else None,
    )

    page: AnswerPage | None = None
    if answers_from != "any":  # under user: the link when no form reaches the person
        from preflight_fsm.web import page_routes

        signed = None
        if answers_from == "person" and people is not None:
            signed = (people, tools.step_challenge)
        _, page, listener = preflights_page(
            forms, transport, public_url, signed=signed, enrolling=enroll is not None
        )
        if listener is not None and closing is not None:
            closing.callback(listener.stop)
        if transport == "http":
            for route in page_routes(page):
                methods = sorted((route.methods or {"GET"}) - {"HEAD"})
                server.custom_route(route.path, methods, include_in_schema=False)(route.endpoint)
    if enroll is not None and transport == "http":
        enroll(server, page)

    @server.tool(name="require_clarification", description=REQUIRE_CLARIFICATION + note)
    async def require_clarification(
        ctx: Context,
        user_intention: str,
        optional_context: str | None = None,
        session_id: str | None = None,
        answers: dict[str, Any] | None = None,
        preferences: dict[str, Any] | None = None,
        repo_path: str | None = None,
    ) -> dict[str, Any] | InputRequiredResult:
        return await forms.require_clarification(
            ctx,
            user_intention=user_intention,
            optional_context=optional_context,
            session_id=session_id,
            answers=answers,
            preferences=preferences,
            repo_path=repo_path,
        )

    @server.tool(name="read_architecture", description=READ_ARCHITECTURE)
    def read_architecture(repo_path: str | None = None) -> dict[str, Any]:
        return tools.read_architecture(repo_path)

    return server


def build_store_app(
    store: str | None = None,
    flow: Flow | None = None,
    llm_adapter: FsmLLMAdapter | None = None,
    *,
    answered_by: AnsweredBy = "api",
    sessions: StoreSessionAdapter | None = None,
) -> FsmPreflightsApp:
    """Preflights' application on the engine (or ``llm_adapter``, a guarded LLM), its sessions
    in a preflight-fsm store (or kept by ``sessions``, an adapter on one); its rounds supplied
    by ``answered_by`` unless a round says otherwise."""
    return FsmPreflightsApp(
        session_adapter=sessions or StoreSessionAdapter(open_store(store)),
        llm_adapter=llm_adapter or FsmLLMAdapter(flow=flow),
        filesystem_adapter=FilesystemAdapter(),
        uid_provider=RandomUIDProvider(),
        clock_provider=SystemClockProvider(),
        file_context_builder=SimpleFileContextBuilder(),
        config_loader=DefaultConfigLoader(),
        answered_by=answered_by,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m …integrations.preflights.agent_tools``: serve the tools over stdio."""
    parser = argparse.ArgumentParser(
        prog="python -m preflight_fsm.integrations.preflights.agent_tools",
        description="Preflights' agent tools on preflight-fsm, over stdio.",
    )
    parser.add_argument("--store", help="session store (default: PREFLIGHT_FSM_STORE, else SQLite)")
    parser.add_argument("--flow", help="a flow file (default: the default flow)")
    parser.add_argument(
        "--answers-from",
        choices=("user", "any", "web"),
        help="who may answer (default: PREFLIGHT_FSM_ANSWERS_FROM, else any)",
    )
    options = parser.parse_args(argv)
    policy = answers_from_setting(options.answers_from)
    if policy is None:
        parser.exit(2, "✗ Error: PREFLIGHT_FSM_ANSWERS_FROM must be user, any or web\n")
    with ExitStack() as closing:
        try:
            server = build_preflights_server(
                options.store, options.flow, answers_from=policy, closing=closing
            )
        except (RuntimeError, PreflightFsmError, OSError) as exc:
            parser.exit(2, f"✗ Error: {exc}\n")
        server.run("stdio")


# -- Preflights' result shapes ---------------------------------------------------------------


class _RepoNotFound(Exception):
    """No git repository at or above the path given."""


class _RepoNotServed(Exception):
    """The repository is outside every root the operator listed (``--repo-root``)."""


def _delta(answers: dict[str, Any]) -> dict[str, str | list[str]]:
    """Tool-argument answers as Preflights' answers delta (texts, or lists of texts)."""
    return {
        str(k): [str(x) for x in v] if isinstance(v, list | tuple) else str(v)
        for k, v in answers.items()
    }


def must_answer(question: Question) -> bool:
    """Whether ``question`` must be answered in its round (no parent, not optional)."""
    return question.depends_on_question_id is None and not question.optional


def _question(question: Question) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": question.id, "type": question.type}
    shown["question"] = question.question
    if question.options:
        shown["options"] = list(question.options)
    if question.min_selections:
        shown["min_selections"] = question.min_selections
    if question.max_selections:
        shown["max_selections"] = question.max_selections
    if question.optional:
        shown["optional"] = True
    if question.depends_on_question_id is not None:
        # Preflights' own server drops these companions; the "Other (specify)" text goes here.
        shown["depends_on_question_id"] = question.depends_on_question_id
        shown["depends_on_value"] = question.depends_on_value
    return shown


def questions_result(
    session_id: str, questions: Sequence[Question], *, answered: int
) -> dict[str, Any]:
    """Preflights' ``needs_clarification`` result asking ``questions``."""
    return {
        "status": "needs_clarification",
        "session_id": session_id,
        "questions": [_question(q) for q in questions],
        "progress": {"asked_so_far": len(questions) + answered, "answered": answered},
    }


def _result(session_id: str, result: PreflightContinueResult, *, answered: int) -> dict[str, Any]:
    if result.status == "completed":
        return _completed(result.artifacts)
    if result.status in ("needs_more_answers", "needs_clarification"):
        return questions_result(session_id, result.questions or (), answered=answered)
    error = result.error or PreflightError(code="UNKNOWN_ERROR", message="Unknown error")
    return _error(error.code, error.message, error.recovery_hint, error.details)


def _completed(artifacts: PreflightArtifacts | None) -> dict[str, Any]:
    if artifacts is None:  # pragma: no cover - Preflights always reports its artifacts
        return {"status": "completed", "artifacts_created": [], "summary": "Completed."}
    created: list[dict[str, Any]] = [{"path": artifacts.task_path, "type": "task"}]
    if artifacts.adr_path:
        uid = re.search(r"(\d{8}T\d{6}\.\d{3}Z(?:-[A-Za-z0-9]+)?)", artifacts.adr_path)
        adr: dict[str, Any] = {"path": artifacts.adr_path, "type": "adr"}
        if uid:
            adr["uid"] = uid.group(1)
        created.append(adr)
    if artifacts.architecture_state_path:
        created.append({"path": artifacts.architecture_state_path, "type": "projection"})
    summary = ("Decision documented and " if artifacts.adr_path else "") + "task created."
    return {"status": "completed", "artifacts_created": created, "summary": summary}


def _error(
    code: str,
    message: str,
    hint: str | None,
    details: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = {k: v for k, v in details}
    if hint:
        error["recovery_hint"] = hint
    return {"status": "error", "error": error}


if __name__ == "__main__":
    main()
