"""Shared test settings."""

from __future__ import annotations

import compileall
import functools
import gc
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from _pytest.doctest import DoctestModule  # pytest exports no name for it
from hypothesis import HealthCheck, settings

import warm_processes
from built_package import BuiltPackage, Wheelhouse, build_once, wheelhouse_once

# `make bench-check` (and a bare pytest run under `CI`): each property on 250 inputs; `make test`
# runs `dev`'s 50 (D283), on CI too (D314): CI tries 300 inputs a property, as with 100 and 200
# before (D323).
settings.register_profile(
    "ci", max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
# `make test-core`: the loop run while changing the engine, each property on a few inputs; the
# full counts run in `make test` (dev) and `make bench-check` (ci), many more in `make fuzz`.
settings.register_profile("core", max_examples=20, deadline=None)
# `make fuzz`: the same properties, many more inputs (FUZZ_EXAMPLES each, 20,000 by default).
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def _ram_temp_root(path: str = "/dev/shm", room: int = 4 << 30) -> bool:
    """Whether ``path`` can hold the tests' files: writable, its programs executable (the README
    paths' virtual environments, the warm launcher) and ``room`` bytes free (a container's
    /dev/shm is often 64 MB and noexec)."""
    try:
        found = os.statvfs(path)
    except OSError:
        return False
    free = found.f_bavail * found.f_frsize
    return os.access(path, os.W_OK) and not found.f_flag & os.ST_NOEXEC and free >= room


# Temporary files on a RAM file system where there is one (D289): each test's tmp_path, the
# other temporary directories of the tests (the shared servers' stores, the simulator's) and of
# the processes they start. A SQLite store made there costs 6 ms instead of 130 (its fsyncs, on
# the team's disk), and most tests make one. Not where the run was given its place (TMPDIR, or
# pytest's own PYTEST_DEBUG_TEMPROOT); xdist's workers inherit the TMPDIR set here.
if not {"TMPDIR", "PYTEST_DEBUG_TEMPROOT"} & os.environ.keys() and _ram_temp_root():
    os.environ["TMPDIR"] = "/dev/shm"
    tempfile.tempdir = None  # read TMPDIR again, had anything asked for the place already

# Preflights' own suite runs in a venv of its own (`make preflights-suite`); its plugin routes
# Preflights' mock to the engine process-wide, so it is never imported (doctests) here.
collect_ignore = ["preflights_suite"]


def pytest_configure(config: pytest.Config) -> None:
    """Write the package's bytecode (``_compile_package``); collect doctests only from the files
    that hold one (``DoctestsWhereExamplesAre``)."""
    _compile_package(config)
    config.pluginmanager.register(DoctestsWhereExamplesAre(), "doctests-where-examples-are")


def _compile_package(config: pytest.Config) -> None:
    """Write the package's bytecode once, before any test starts a `preflight-fsm` process.

    Hundreds of tests run the command line or a server in a fresh interpreter. Where bytecode is
    not written (``PYTHONDONTWRITEBYTECODE``, as on the team's machines), each would compile
    every module it imports, about 30 ms of CPU that no installed command pays (D163); compiled
    here once, a file like tests/test_cli_sessions.py takes 15 % less CPU. Only the controlling
    process compiles (xdist workers have ``workerinput``); unchanged modules are skipped.
    """
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        package = Path(__file__).resolve().parent.parent / "src" / "preflight_fsm"
        compileall.compile_dir(package, quiet=2)


class DoctestsWhereExamplesAre:
    """``--doctest-modules`` without the modules that cannot hold a doctest (D327).

    Each pytest-xdist worker collects the whole suite, and ``--doctest-modules`` made it import
    every module of ``src`` (160) and run the doctest finder over them and over every module of
    ``tests`` (150), for the 13 modules that hold an example: about 0.3 s of CPU per worker. A
    doctest starts with the ``>>>`` prompt, so a ``.py`` file without one yields none: its
    doctest collector is dropped before it imports anything. Registered as a plugin (not a
    conftest hook) so that it sees ``src``, which this directory's conftest hooks do not.
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(
        self, file_path: Path
    ) -> Generator[None, list[pytest.Collector], list[pytest.Collector]]:
        collected = yield
        if file_path.suffix != ".py" or b">>>" in file_path.read_bytes():
            return collected
        return [each for each in collected if not isinstance(each, DoctestModule)]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Freeze what this test process built (``gc.freeze``) once the run is over: the collections
    its interpreter runs when it shuts down would scan a worker's 260,000 objects (its modules, the
    collected tests) for nothing, about 0.6 s of CPU and a second of wall that the run waits for
    at its end (D326). The fixtures are torn down by then, and pytest's own last collection (for
    the unraisable exceptions of leaked objects) has run in its earlier ``pytest_unconfigure``;
    what is left (the warm interpreter's stop, the temporary files' removal) needs none."""
    gc.freeze()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Write this test run's ``preflight-fsm`` launcher (``warm_processes``) before the test
    modules, which read its path, are imported. Under pytest-xdist the process that hands out
    the tests writes it and starts the warm interpreter at once, and every worker uses that one
    (``pytest_configure_node``): each worker starting its own cost about 4.5 s of CPU (D294)."""
    shared = getattr(session.config, "workerinput", {}).get(_WARM_DIRECTORY)
    if shared is not None:
        warm_processes.attach(Path(shared))
        return
    directory = Path(tempfile.mkdtemp(prefix="pfsm-zygote-"))
    session.config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
    warm_processes.prepare(directory)
    session.config.add_cleanup(warm_processes.stop)
    if _xdist_controller(session.config) and not session.config.option.collectonly:
        session.config.stash[_SHARED_WARM] = warm_processes.share()


_WARM_DIRECTORY = "preflight_fsm_warm_processes"
_SHARED_WARM = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand each pytest-xdist worker the directory of the run's warm interpreter."""
    directory = node.config.stash.get(_SHARED_WARM, None)
    if directory is not None:
        node.workerinput[_WARM_DIRECTORY] = str(directory)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the warm interpreter the collected tests' processes fork from, if any test module
    asked for it (``warm_processes.program``); a run of the engine's tests alone starts none."""
    if session.items and not _xdist_controller(session.config):
        warm_processes.start()
    _build_each_typer_command_once()
    _compile_each_output_schema_once()


def _build_each_typer_command_once() -> None:
    """typer's CliRunner builds the click command from the Typer app at every ``invoke`` (10 to
    17 ms of CPU for this command line: each command's parameters read from its signature), and
    the command-line tests invoke it about a thousand times a run: build it once per app (D289).
    A click command is made to be run many times; the app's commands are all registered when
    the modules are imported, before any test runs."""
    testing = sys.modules.get("typer.testing")  # imported by the collected tests that use it
    if testing is not None:
        import typer.main

        assert hasattr(testing, "_get_command"), "typer's CliRunner changed: drop this cache"
        testing._get_command = functools.cache(typer.main.get_command)  # type: ignore[attr-defined]


def _compile_each_output_schema_once() -> None:
    """The MCP SDK's client checks every tool result against the tool's output schema, with a
    validator it compiles once per session and tool: ``check_schema`` validates the schema
    against its metaschema first, about 22 ms of CPU for this server's schemas, and the MCP tests
    open hundreds of sessions with the same few schemas. Compile each schema once per test process
    (a validator depends on the schema alone and holds no state); every result is still checked,
    and a schema the SDK refuses is refused at every session as before (D315)."""
    session = sys.modules.get("mcp.client.session")  # imported by the collected tests that use it
    if session is None:
        return
    client = session.ClientSession
    assert hasattr(client, "_output_schema_validator"), "the SDK's client changed: drop this cache"
    compile_once = client._output_schema_validator
    compiled: dict[str, Any] = {}

    def validator(self: Any, name: str, output_schema: dict[str, Any]) -> Any:
        if name in self._tool_output_validators:  # the session's own, as the SDK keeps it
            return self._tool_output_validators[name]
        key = json.dumps(output_schema, sort_keys=True)
        if key not in compiled:
            compiled[key] = compile_once(self, name, output_schema)  # raises on a bad schema
        self._tool_output_validators[name] = compiled[key]
        return compiled[key]

    client._output_schema_validator = validator


def _xdist_controller(config: pytest.Config) -> bool:
    """Whether this process only hands tests to pytest-xdist's workers (it runs none)."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


@pytest.fixture(scope="module")
def llm_provider_server() -> Iterator[object]:
    """A local Anthropic/OpenAI-speaking server (``llm_server``) for a module's tests."""
    from llm_server import llm_server

    with llm_server() as server:
        yield server


@pytest.fixture
def provider_server(llm_provider_server: object) -> object:
    """The module's provider server, compliant again, its script and exchanges emptied."""
    from llm_server import LLMServer, Reply

    assert isinstance(llm_provider_server, LLMServer)
    llm_provider_server.script.clear()
    llm_provider_server.default = Reply()
    llm_provider_server.exchanges.clear()
    return llm_provider_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test id that holds a memory address (``<object object at 0x...>``); put the
    tests marked ``starts_first`` first, the longest first.

    `make test` runs the suite on several workers (pytest-xdist), each collecting it in a process
    of its own, and they must agree on every id; an address differs from process to process. Give
    such a parameter ``ids=`` (its type's name, a word) instead.

    pytest-xdist (``--dist load``, 3.x) sends each worker first a run of consecutive tests in this
    order (a quarter of its share: the first worker gets the first ones), then more as it drains:
    a test of several seconds in one piece collected near the end would start when the other
    workers have little left, and the run would wait for it alone. Put first, the longest tests
    start at once, on the first worker, and the other workers take the rest of the suite. To add
    one, mark it ``@pytest.mark.starts_first(seconds=S)``, S about its wall time on an idle
    machine (``--durations``): the marked tests start in decreasing S. All of them are in the
    first worker's first run, which no other worker can take: keep their sum well under half the
    suite's wall time (the README test's paths, about 18 s, are the one marked now).
    """
    unstable = [item.nodeid for item in items if " at 0x" in item.nodeid]
    if unstable:
        raise pytest.UsageError(
            "test ids must be the same in every process (give these parameters ids=): "
            + ", ".join(unstable)
        )

    def longest_first(item: pytest.Item) -> tuple[bool, float]:
        marker = item.get_closest_marker("starts_first")
        return (marker is None, -float(marker.kwargs.get("seconds", 0)) if marker else 0.0)

    items.sort(key=longest_first)  # stable: the others keep their order


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One throw-away PostgreSQL server for the whole test process (``postgres_server``),
    stopped at the end; a test that needs it empty calls ``postgres_server.empty``. The
    pytest-xdist workers' servers start from one ``initdb`` for the run, copied."""
    from postgres_server import postgres_missing, throwaway_postgres

    reason = postgres_missing()
    if reason is not None:
        pytest.skip(reason)
    initialized = _run_shared(tmp_path_factory) / "postgres-initdb"
    with throwaway_postgres(initialized=initialized) as url:
        yield url


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_http_servers() -> Iterator[None]:
    """Stop the HTTP servers tests shared (``mcp_servers.shared_http_server``) when they end."""
    yield
    servers = sys.modules.get("mcp_servers")  # never imported by a run that started none
    if servers is not None:
        servers.stop_shared_http_servers()


def _run_shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of the run's that every pytest-xdist worker sees."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Wheelhouse:
    """The wheels every install of a test takes its dependencies from (``built_package``), kept
    in the virtualenv, made once if missing."""
    return wheelhouse_once(_run_shared(tmp_path_factory))


@pytest.fixture(scope="session")
def built_package(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> BuiltPackage:
    """The sdist and the wheel (``built_package``), built once for the whole run: under
    pytest-xdist in the directory all workers share."""
    return build_once(_run_shared(tmp_path_factory), wheelhouse)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium for the whole test session (the answer page's tests)."""
    from web_browser import chromium

    with chromium() as driver:
        yield driver


@pytest.fixture(scope="session")
def enrolled(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Ada's passkey (``person_passkey.Enrolled``), enrolled once for the test process (each
    test puts it in the browser and carries its signature counter on: ``ada``)."""
    from person_passkey import enroll

    return enroll(browser, tmp_path_factory.mktemp("person"))


@pytest.fixture
def ada(browser: Any, enrolled: Any) -> Iterator[Any]:
    """Ada's passkey in the browser's authenticator for this test only."""
    from person_passkey import passkey_in

    with passkey_in(browser, enrolled):
        yield enrolled


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """A stdio server's standard error, checked afterwards to hold no traceback."""
    path = tmp_path / "stdio.stderr"
    with path.open("w+") as handle:
        yield handle
    assert "Traceback" not in path.read_text()
