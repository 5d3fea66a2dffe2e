"""``preflight-fsm mcp``: serve the clarification sessions to AI coding agents (``docs/mcp.md``).

Stdio by default (what ``claude mcp add`` and Cursor's ``mcp.json`` start); ``--transport http``
serves streamable HTTP at ``/mcp``. The sessions are the same stored sessions the other commands
use: the store is opened by the same function, with the same default, so ``preflight-fsm show``
prints a session an agent started.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import shlex
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from preflight_fsm.cli import app, serving
from preflight_fsm.cli.report import EXIT_INTERRUPTED, usage_error
from preflight_fsm.cli.server_enroll import EnrollOption, enrolling_rp_id
from preflight_fsm.cli.sessions import _reported
from preflight_fsm.cli.stores import (
    ExpireOption,
    FlowOption,
    SealKeyFileOption,
    StoreOption,
    _seal_keys,
)
from preflight_fsm.flow_registry import load_registry
from preflight_fsm.store import DEFAULT_EXPIRE_AFTER, Sessions, open_store

PREFLIGHTS_BUILDER = "preflight_fsm.integrations.preflights.agent_tools"


_SDK_SERVER = "mcp.server.mcpserver"
"""The module the server is built on: SDK 2.x's (1.x has none)."""


def missing_sdk() -> str | None:
    """Why the server cannot run here (the SDK missing, with its install command), or None.
    Imports the SDK's server, as serving is about to."""
    try:
        importlib.import_module(_SDK_SERVER)
    except ImportError:
        return _sdk_not_installed()
    return None


def absent_sdk() -> str | None:
    """:func:`missing_sdk` for a command that does not serve (``setup``): the SDK's server module
    looked up where it would be imported from, without running any of the SDK's code. Importing
    it costs most of a second (0.8 of ``setup``'s 0.9 s of CPU, 27 November 2026); the server
    imports it when it starts, and says :func:`missing_sdk`'s words if that fails."""
    parts = _SDK_SERVER.split(".")
    spec = importlib.util.find_spec(parts[0])  # a top-level package is found, not run
    for part in parts[1:]:
        if spec is None or spec.submodule_search_locations is None:
            return _sdk_not_installed()
        spec = importlib.machinery.PathFinder.find_spec(
            f"{spec.name}.{part}", list(spec.submodule_search_locations)
        )
    return None if spec is not None else _sdk_not_installed()


def _sdk_not_installed() -> str:
    from preflight_fsm.extras import install_hint

    return f"the MCP SDK is not installed; install it with: {install_hint('mcp')}"


def _preflights_builder() -> Any:
    """The builder of Preflights' own tool shapes, imported only when asked for."""
    try:
        module = importlib.import_module(PREFLIGHTS_BUILDER)
    except ImportError as exc:
        raise typer.BadParameter(
            f"--preflights needs {PREFLIGHTS_BUILDER}, which is not available ({exc})",
            param_hint="--preflights",
        ) from None
    builder = getattr(module, "build_preflights_server", None)
    if builder is None:
        raise typer.BadParameter(
            f"{PREFLIGHTS_BUILDER} has no build_preflights_server", param_hint="--preflights"
        )
    return builder


if TYPE_CHECKING:
    from preflight_fsm.mcp.http import HttpOptions


def stdio_greeting(store: str | None, preflights: bool = False) -> str:
    """What a person who runs the stdio server in a terminal is told on standard error: what it
    is, and how an agent is connected to it instead (standard output stays the protocol's)."""
    from preflight_fsm.extras import server_command
    from preflight_fsm.store.location import resolve_location, shown_location

    where = shown_location(resolve_location(store))
    name = "preflights" if preflights else "preflight-fsm"
    command = [
        *server_command(),
        "mcp",
        "--store",
        where,
        *(["--preflights"] if preflights else []),
    ]
    return (
        f"preflight-fsm: an MCP server on stdio (sessions in {where}), waiting for an agent's "
        "JSON-RPC on standard input: an agent starts this command itself.\n"
        f"  Connect Claude Code: {shlex.join(['claude', 'mcp', 'add', name, '--', *command])}\n"
        "  Cursor, VS Code and the others: preflight-fsm setup --write\n"
        "  Ctrl-C stops it."
    )


def _serve_stdio(
    server: Any, store: str | None, closing: Callable[[], None] | None, preflights: bool
) -> None:
    """Serve over stdio until standard input ends; on a terminal, greet on standard error.

    Ctrl-C ends the process with 130 at once: the line being read is abandoned in its blocked
    thread, which the interpreter's exit would otherwise wait for (until Ctrl-D). The store is
    closed first; nothing else is in flight between two requests.
    """
    from preflight_fsm.mcp import serve

    interrupted = False

    def interrupt(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        raise KeyboardInterrupt

    # Whatever the interrupt unwinds into (an exception group of the transport's tasks, the
    # event loop's own cancellation while it starts or stops), a Ctrl-C ends with 130.
    signal.signal(signal.SIGINT, interrupt)
    try:
        if sys.stdin.isatty():
            typer.echo(stdio_greeting(store, preflights), err=True)
        serve(server, "stdio")
    except BaseException:
        if not interrupted:
            raise
        if closing is not None:
            closing()
        typer.echo("\npreflight-fsm: stopped (Ctrl-C)", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)


def _serve_announced(
    server: Any,
    transport: Literal["stdio", "http"],
    options: HttpOptions,
    store: str | None,
    closing: Callable[[], None] | None = None,
    *,
    preflights: bool = False,
) -> None:
    """Serve; over HTTP, say on standard error where, with which store, and when it stops."""
    from preflight_fsm.mcp import serve
    from preflight_fsm.store.location import resolve_location, shown_location

    if transport == "stdio":  # standard output is the protocol's; the agent started it
        _serve_stdio(server, store, closing, preflights)
        return
    served: list[str] = []

    def announce(url: str) -> None:
        served.append(url)
        where = shown_location(resolve_location(store))
        typer.echo(
            f"preflight-fsm: serving MCP at {url} (sessions in {where}); Ctrl-C stops it",
            err=True,
        )

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # uvicorn re-raises the SIGTERM it caught once it has stopped

    import signal

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(server, transport, announce=announce, options=options)
    except SystemExit as stopped:
        # The HTTP server's own startup failure exits 3 (the code of refused answers): it is
        # reported below as the usage error it is.
        if stopped.code not in (0, None) and served:
            raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    if served:
        typer.echo(f"preflight-fsm: stopped serving {served[0]}", err=True)
    else:  # taken between _check_listenable and the server's own bind
        raise usage_error(
            f"cannot listen on {options.host}:{options.port}: pass another --port (or --host), "
            "or stop what listens there"
        )


def _check_listenable(host: str, port: int) -> None:
    """A usage error (exit 2) when ``host:port`` cannot be listened on, before the server runs:
    the HTTP server would log the failure and exit 3, the code of refused answers."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            # As the server binds: a port left in TIME_WAIT by a previous run is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        raise usage_error(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): pass another --port "
            "(or --host), or stop what listens there"
        ) from None


def _enroll_on(
    server: Any, names: list[str], people_file: Path | None, url: str, page: Any
) -> None:
    """Serve an enrollment for each of ``names`` on ``server``; print their links once."""
    from preflight_fsm.cli.server_enroll import serve_enrollments
    from preflight_fsm.people import DEFAULT_PEOPLE_FILE

    path = people_file or DEFAULT_PEOPLE_FILE
    for enrollment in serve_enrollments(server, names, path, url, page):
        typer.echo(
            f"preflight-fsm: open this link in your browser to enroll {enrollment.name}'s "
            f"passkey in {path} (it is for {enrollment.name} alone, good once; it expires): "
            f"{enrollment.link}",
            err=True,
        )


@app.command("mcp")
def mcp_command(
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            metavar="stdio|http",
            help="stdio (for agents that start the server) or http (streamable HTTP at /mcp).",
        ),
    ] = "stdio",
    host: Annotated[
        str, typer.Option("--host", help="HTTP: the address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port",
            metavar="PORT",
            callback=serving.checked_port,
            help="HTTP: the port to listen on (1 to 65535).",
        ),
    ] = 8000,
    store: StoreOption = None,
    flow: FlowOption = None,
    expire_after: ExpireOption = DEFAULT_EXPIRE_AFTER,
    seal_key_file: SealKeyFileOption = None,
    answers_from: Annotated[
        str | None,
        typer.Option(
            "--answers-from",
            metavar="any|user|web|person",
            help="Who may answer: any (tool arguments and forms, each recorded as such), user "
            "(only the person, through forms: answers passed by the agent are refused), web "
            "(only the person, on the answer page) or person (on the answer page, each turn "
            "confirmed with a passkey the people file lists: docs/web.md). "
            "Default: PREFLIGHT_FSM_ANSWERS_FROM, else any.",
            show_default=False,
        ),
    ] = None,
    people_file: Annotated[
        Path | None,
        typer.Option(
            "--people",
            metavar="FILE",
            help="With --answers-from person: the people file whose passkeys sign. Default: "
            ".preflight-fsm/people.toml.",
            show_default=False,
        ),
    ] = None,
    preflights: Annotated[
        bool,
        typer.Option(
            "--preflights",
            help="Serve Preflights' own tool shapes (its agent tools, docs/preflights.md).",
        ),
    ] = False,
    public_url: serving.PublicUrlOption = None,
    enroll: EnrollOption = None,
    allowed_origin: serving.AllowedOriginOption = None,
    allowed_host: serving.AllowedHostOption = None,
    tokens: serving.TokensOption = None,
    oidc_issuer: serving.OidcIssuerOption = None,
    oidc_audience: serving.OidcAudienceOption = None,
    insecure_no_auth: serving.InsecureNoAuthOption = False,
    repo_root: serving.RepoRootOption = None,
    accept_evicting_store: serving.AcceptEvictingStoreOption = False,
    max_request_bytes: serving.MaxRequestBytesOption = None,
    max_sessions: serving.MaxSessionsOption = None,
    max_sessions_per_client: serving.MaxSessionsPerClientOption = None,
    session_idle_timeout: serving.SessionIdleTimeoutOption = None,
    header_timeout: serving.HeaderTimeoutOption = None,
    reclaim_interval: serving.ReclaimIntervalOption = None,
) -> None:
    """Serve the clarification tools over MCP (stdio by default)."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(
            f"{transport!r} is not a transport: use stdio or http", param_hint="--transport"
        )
    why = missing_sdk()
    if why is not None:
        typer.echo(f"preflight-fsm: {why}", err=True)
        raise typer.Exit(2)
    from preflight_fsm.mcp.policy import ANSWERS_FROM_ENV, answers_from_setting

    policy = answers_from_setting(answers_from)
    if policy is None:
        shown = answers_from if answers_from is not None else os.environ.get(ANSWERS_FROM_ENV)
        where = "--answers-from" if answers_from is not None else ANSWERS_FROM_ENV
        raise typer.BadParameter(
            f"{shown!r} is not a policy: use any, user, web or person", param_hint=where
        )
    from preflight_fsm.mcp import HTTP_PATH, build_server
    from preflight_fsm.mcp.http import HttpOptions
    from preflight_fsm.mcp.origins import OriginPolicy

    chosen: Literal["stdio", "http"] = "http" if transport == "http" else "stdio"
    url = serving.public_url_of(public_url, host, port, HTTP_PATH)
    if enroll and chosen != "http":
        raise typer.BadParameter(
            "enrollment is served only by mcp --transport http; over stdio enroll with "
            "preflight-fsm people enroll NAME",
            param_hint="--enroll",
        )
    if enroll:
        enrolling_rp_id(url)  # before anything opens: a usage error for an IP address
    auth = None
    if chosen == "http":
        auth = serving.server_auth(tokens, oidc_issuer, oidc_audience, url)
        if auth is None and not serving.is_loopback(host) and not insecure_no_auth:
            raise usage_error(
                f"serving {host} without authentication lets anyone who reaches the port start, "
                "read and answer sessions: pass --tokens FILE or --oidc-issuer URL, or "
                "--insecure-no-auth to serve it anyway"
            )
        _check_listenable(host, port)
    options = HttpOptions(
        host=host,
        port=port,
        public_url=url,
        policy=OriginPolicy.of(url, allowed_origin or (), allowed_host or ()),
        limits=serving.limits_of(
            max_request_bytes,
            max_sessions,
            max_sessions_per_client,
            session_idle_timeout,
            header_timeout,
            reclaim_interval,
        ),
    )
    if preflights:
        # Preflights' own tools on its own application, whose sessions live in the same store.
        build = _preflights_builder()
        with _reported(as_json=False):
            # Before the store opens: a person level nobody can sign is refused at start.
            people = serving.people_for(policy, people_file, bool(enroll))
            checked = open_store(store, expire_after=expire_after)
        serving.check_store(checked, accept_evicting_store)
        with contextlib.ExitStack() as closing:  # the answer page's loopback listener, the store
            closing.callback(checked.close)
            with _reported(as_json=False):
                keys = _seal_keys(seal_key_file)
            enrolling: dict[str, Any] = {}
            if enroll and url is not None:
                names = enroll

                def enroll_on(server: Any, page: Any) -> None:
                    _enroll_on(server, names, people_file, url, page)

                enrolling["enroll"] = enroll_on
            try:
                # The seal keys seal the forms' round state, so rounds continue on any server
                # sharing them (Preflights' sessions themselves are stored unsealed).
                with _reported(as_json=False):  # a people file nobody enrolled the page in
                    server = build(
                        store,
                        str(flow) if flow is not None else None,
                        answers_from=policy,
                        request_state_keys=keys.keys if keys else (),
                        auth=auth,
                        # Over HTTP clients are remote: files only under the roots named.
                        repo_roots=(repo_root or [Path.cwd()]) if chosen == "http" else None,
                        transport=chosen,
                        public_url=url,
                        closing=closing,
                        opened=checked,
                        people=people,
                        **enrolling,
                    )
            except RuntimeError as exc:
                typer.echo(f"preflight-fsm: {exc}", err=True)
                raise typer.Exit(2) from None
            # The tools' one store answers /healthz and reclaims expired sessions
            # periodically, as for the engine's tools (issue 29).
            served = replace(options, health=checked.check, reclaim=checked.reclaim)
            _serve_announced(server, chosen, served, store, checked.close, preflights=True)
        return
    with _reported(as_json=False):
        # Before the store opens: a person level nobody can sign is refused at start.
        people = serving.people_for(policy, people_file, bool(enroll))
        loaded = load_registry(flow) if flow is not None else None
        keys = _seal_keys(seal_key_file)
        opened = open_store(store, expire_after=expire_after)
    # Before listening: exit 8, not a server that answers every call store_unavailable.
    serving.check_store(opened, accept_evicting_store)
    health = opened.check
    # One set of keys seals the stored snapshots and the elicitation rounds' state (C11), so
    # servers sharing a store and keys serve each other's sessions and rounds.
    sessions = Sessions(opened, flow=loaded, keys=keys)
    try:
        with _reported(as_json=False):
            page, listener = serving.answer_page(
                sessions, chosen, url, people, enrolling=bool(enroll)
            )
    except BaseException:
        opened.close()
        raise
    try:
        server = build_server(
            sessions,
            request_state_keys=keys.keys if keys else (),
            answers_from=policy,
            auth=auth,
            page=page,
        )
        if enroll and url is not None:
            _enroll_on(server, enroll, people_file, url, page.page)
        _serve_announced(
            server,
            chosen,
            replace(options, health=health, reclaim=opened.reclaim),
            store,
            opened.close,
        )
    finally:
        if listener is not None:
            listener.stop()  # stopped with the server
        opened.close()
