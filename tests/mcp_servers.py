"""Test helpers: `preflight-fsm mcp` reached with the SDK's own client.

Over stdio the client starts the server itself (as Claude Code does); over HTTP the server runs
on a free loopback port until the block ends. Servers' standard error goes to a file, so tests
can check that nothing (a traceback) was printed there. In memory (:func:`connect_memory`) the
server the stdio command would serve is built in the test's process and joined to the client by
the SDK's in-memory transport: the same JSON-RPC messages without a process per test, for the
tests of what the tools do rather than of the transport (``test_mcp_stdio.py`` and the stdio
tests that remain keep the process boundary).
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import (
    AbstractContextManager,
    ExitStack,
    asynccontextmanager,
    contextmanager,
    suppress,
)
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client._memory import InMemoryTransport
from mcp.client.session import ElicitationFnT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp_types import CallToolResult

import warm_processes
from preflight_fsm.cli.serving import answer_page
from preflight_fsm.mcp import build_server
from preflight_fsm.mcp.policy import AnswersFrom
from preflight_fsm.people import People
from preflight_fsm.snapshot import SealKeys
from preflight_fsm.store import Sessions, SessionStore, open_store
from redis_server import redis_missing, throwaway_redis  # the one import of it in the MCP tests

__all__ = [
    "PREFLIGHT_FSM",
    "HttpServer",
    "call",
    "client_tls",
    "connect_http",
    "connect_memory",
    "connect_stdio",
    "free_port",
    "http_server",
    "redis_missing",
    "shared_http_server",
    "shared_preflights_server",
    "stdio_parameters",
    "throwaway_redis",
]

PREFLIGHT_FSM = warm_processes.program()  # forked from a warm interpreter (warm_processes)
START_TIMEOUT = 90.0
"""Seconds a server may take to listen, or to answer one request: far past any wait on the team's
2 loaded cores (a cold interpreter took over 30 s to show pf's first prompt at a load of 15)."""


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stdio_parameters(store: str, cwd: Path, *extra: str) -> StdioServerParameters:
    """How an agent starts the server over stdio, on ``store``."""
    return StdioServerParameters(
        command=PREFLIGHT_FSM, args=["mcp", "--store", store, *extra], cwd=str(cwd)
    )


@asynccontextmanager
async def connect_stdio(
    store: str,
    cwd: Path,
    errlog: TextIO,
    *,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    extra: tuple[str, ...] = (),
) -> AsyncIterator[Client]:
    """A client connected to a fresh stdio server (``mode``: "auto" = 2026-07-28, "legacy"),
    started with the options ``extra``."""
    transport = stdio_client(stdio_parameters(store, cwd, *extra), errlog=errlog)
    async with Client(
        transport,
        mode=mode,
        elicitation_callback=elicitation,
        read_timeout_seconds=START_TIMEOUT,
    ) as client:
        yield client


class _Records(logging.Handler):
    """The log records at ERROR or above: a server's traceback, which stdio would print."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(self.format(record))


@asynccontextmanager
async def connect_memory(
    store: str | SessionStore,
    *,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    answers_from: AnswersFrom = "any",
    preflights: bool = False,
    people: People | None = None,
    seal_key_file: Path | None = None,
) -> AsyncIterator[Client]:
    """A client connected in memory to the server `preflight-fsm mcp --store STORE` serves over
    stdio (``--answers-from``, ``--preflights``, ``--people``, ``--seal-key-file`` as given),
    built as the command builds it; no error may be logged (a traceback) while it is
    connected. ``store`` may be a store already open (a setting no location gives, such as
    SQLite's write wait), which the caller closes."""
    records = _Records()
    root = logging.getLogger()
    root.addHandler(records)
    closing: list[Any] = []
    try:
        if preflights:
            from preflight_fsm.integrations.preflights.agent_tools import (
                build_preflights_server,
            )

            assert isinstance(store, str), "the Preflights server opens its store by location"

            stack = ExitStack()  # the answer page's loopback listener, under web
            closing.append(stack.close)
            server = build_preflights_server(
                store, answers_from=answers_from, closing=stack, people=people
            )
        else:
            if isinstance(store, str):
                opened = open_store(store)
                closing.append(opened.close)
            else:
                opened = store
            keys = SealKeys.from_file(seal_key_file) if seal_key_file is not None else None
            sessions = Sessions(opened, keys=keys)
            page, listener = answer_page(sessions, "stdio", None, people)
            if listener is not None:
                closing.insert(0, listener.stop)
            server = build_server(
                sessions,
                request_state_keys=keys.keys if keys else (),
                answers_from=answers_from,
                page=page,
            )
        async with Client(
            InMemoryTransport(server),
            mode=mode,
            elicitation_callback=elicitation,
            read_timeout_seconds=START_TIMEOUT,
        ) as client:
            yield client
    finally:
        root.removeHandler(records)
        for close in closing:
            close()
    assert [] == records.seen


@functools.cache
def client_tls() -> ssl.SSLContext:
    """The default TLS context (certificates verified), built once, for the tests' HTTP clients
    (``verify=``): each client would load the CA bundle again, about 30 ms of CPU, for servers on
    loopback HTTP."""
    return httpx2.create_ssl_context()


def _mcp_http_client(headers: dict[str, str] | None) -> httpx2.AsyncClient:
    """The client the SDK's ``create_mcp_http_client`` builds (its timeouts, ``headers``), on the
    shared TLS context."""
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(headers=headers, timeout=timeout, verify=client_tls())


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    token: str | None = None,
) -> AsyncIterator[Client]:
    """A client connected to a running HTTP server at ``url`` (with ``token`` as its bearer
    token, sent as an MCP client configured by ``setup`` sends it)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with (
        _mcp_http_client(headers) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            elicitation_callback=elicitation,
            read_timeout_seconds=START_TIMEOUT,
        ) as client,
    ):
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool``; its structured result, checked to equal the JSON of its text content."""
    result: CallToolResult = await client.call_tool(tool, arguments)
    data = result.structured_content
    assert isinstance(data, dict), result
    texts = [json.loads(block.text) for block in result.content]  # type: ignore[union-attr]
    assert [data] == texts
    assert (data["status"] == "error") == bool(result.is_error)
    return data


@dataclass
class HttpServer:
    """A running `preflight-fsm mcp --transport http`."""

    url: str
    process: subprocess.Popen[bytes]
    stderr: Path
    store: str

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs (started warm or not: ``warm_processes.kill``)."""
        warm_processes.kill(self.process)
        self.process.wait(timeout=10)


@contextmanager
def http_server(
    store: str,
    cwd: Path,
    name: str = "http",
    *extra: str,
    host: str = "127.0.0.1",
    port: int | None = None,
    env: dict[str, str] | None = None,
    cold: bool = False,
) -> Iterator[HttpServer]:
    """Run an HTTP server on ``port`` (default: a free one) of ``host`` (a loopback address)
    for the block, with ``env`` added to its environment; stop it afterwards. ``cold``: in a
    fresh interpreter, not forked from the warm one (a test of what a fresh one does)."""
    for _attempt in range(5 if port is None else 1):  # another process may take a free port
        chosen = port or free_port()
        stderr = cwd / f"{name}-{chosen}.stderr"
        with stderr.open("wb") as errors:
            process = subprocess.Popen(
                [
                    warm_processes.cold(PREFLIGHT_FSM) if cold else PREFLIGHT_FSM,
                    "mcp",
                    "--transport",
                    "http",
                    "--host",
                    host,
                    "--port",
                    str(chosen),
                    "--store",
                    store,
                    *extra,
                ],
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + START_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection((host, chosen), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            process.kill()
            process.wait(timeout=10)
            continue
        try:
            yield HttpServer(f"http://{host}:{chosen}/mcp", process, stderr, store)
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        return
    raise RuntimeError(f"the HTTP server did not start on a loopback port ({stderr.read_text()})")


class SharedHttpServers:
    """HTTP servers shared by the tests of one process (:func:`shared_http_server`): one
    `preflight-fsm mcp --transport http` per set of options, started when a test first asks for
    it and stopped when the tests end (conftest.py) or the process exits.

    Starting the server costs about 2 s of CPU (importing the SDK builds its pydantic models),
    more than most tests that call it. A test that only calls the server (its own sessions, its own
    client) shares one; a test of the process itself (start-up, exit codes, kill -9, a restart,
    options read from the environment or from a file of its own) starts its own with
    :func:`http_server`. Each server has a SQLite store of its own, shared by the tests that share
    the server: a test reads back only the sessions it started.
    """

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="preflight-fsm-shared-http-"))
        self.running: dict[tuple[str, ...], HttpServer] = {}
        self.stack = ExitStack()

    def stop(self) -> None:
        """Stop every server started and remove their stores. Each is told to stop before any is
        waited for, so their shutdowns (about a second each under load) overlap."""
        stopping = [s.process for s in self.running.values() if s.process.poll() is None]
        for process in stopping:
            process.terminate()
        for process in stopping:
            with suppress(subprocess.TimeoutExpired):  # then killed by the block that started it
                process.wait(timeout=10)
        self.stack.close()
        self.running.clear()
        shutil.rmtree(self.directory, ignore_errors=True)

    @contextmanager
    def serving(self, *extra: str) -> Iterator[HttpServer]:
        """The running server started with the options ``extra`` (started now if none is, or if
        it has exited); what it prints on standard error meanwhile must hold no traceback."""
        server = self.running.get(extra)
        if server is None or server.process.poll() is not None:
            directory = Path(tempfile.mkdtemp(dir=self.directory))
            store = str(directory / "sessions.sqlite3")
            server = self.stack.enter_context(http_server(store, directory, "shared", *extra))
            self.running[extra] = server
        printed = server.stderr.stat().st_size
        yield server
        with server.stderr.open("rb") as errors:
            errors.seek(printed)
            assert b"Traceback" not in errors.read()


_shared: list[SharedHttpServers] = []


def shared_http_server(*extra: str) -> AbstractContextManager[HttpServer]:
    """This process's shared HTTP server started with the options ``extra``, for the block (see
    :class:`SharedHttpServers`); ``store`` names its store, ``url`` where it serves."""
    if not _shared:
        _shared.append(SharedHttpServers())
        atexit.register(stop_shared_http_servers)
    return _shared[0].serving(*extra)


def shared_preflights_server(tmp_path: Path, *extra: str) -> AbstractContextManager[HttpServer]:
    """The shared `mcp --preflights` HTTP server started with ``extra``: its one repository root
    is the parent of every ``tmp_path`` of this process's tests, so each test's repositories (under
    its own ``tmp_path``) are served."""
    return shared_http_server("--preflights", "--repo-root", str(tmp_path.parent), *extra)


def stop_shared_http_servers() -> None:
    """Stop the shared HTTP servers (conftest.py, when the tests end)."""
    while _shared:
        _shared.pop().stop()
