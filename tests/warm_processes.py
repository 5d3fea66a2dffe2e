"""``preflight-fsm`` processes started from a warm interpreter, for tests that need a process.

A test that runs ``preflight-fsm`` in a process of its own (an MCP server over stdio or HTTP, a
command whose exit code, output or signals it checks) paid a fresh interpreter's imports each time:
about 1 s of CPU for the MCP SDK alone, 0.3 s for a command, hundreds of times a run. Here a test
run keeps one *zygote* (under pytest-xdist, one for all its workers, started by the process that
hands out the tests: ``share`` and ``attach``): an interpreter that has imported the command line,
the servers and the stores once, and forks a child for each program the tests start (the way
Android's zygote or ``multiprocessing``'s forkserver do). The test starts an ordinary executable,
``PROGRAM`` (a few lines of Python run with ``-I -S``): it hands its standard input, output and
error, its arguments, working directory and environment to the zygote, forwards the signals it
receives to the child, and exits as the child did (its code, or killed by the same signal). So the
program is a real process with its own pid, pipes, environment and exit status; what is shared is
only the imported modules, as if it had imported them itself.

What differs from a fresh interpreter, and which tests therefore start ``COLD_PROGRAM`` instead:
- modules are imported once, under the zygote's environment (nothing in the package reads its
  environment at import; ``TYPER_USE_RICH`` is the one variable typer reads then);
- ``sys.flags`` are the zygote's: a test of interpreter options starts its own interpreter;
- the objects the zygote's imports built are frozen (``gc.freeze``, D326): the child's
  collections skip them, where a fresh interpreter's full collections would scan them (they live
  until the program ends either way);
- SIGKILL cannot be forwarded: killed, the launcher leaves its child to the zygote, which kills
  it the moment it sees the launcher gone (a moment later). A test of what a kill -9 leaves
  behind calls ``kill``: a launcher is sent ``KILL_PROGRAM``, on which it SIGKILLs the program
  itself and then ends as it did (killed by SIGKILL), as the installed script's process would;
- a controlling terminal is handed over, not shared: a launcher started as the session leader of
  a pseudo-terminal (``pty.fork``, tests/terminal.py) lets go of it and the child makes it its
  own, so the terminal's Ctrl-C reaches the program's process group, not the launcher's; the
  program's pid is then the terminal's foreground process group (``os.tcgetpgrp``), not the
  launcher's.

If the zygote is not running (a test run without the fixture, or it died), the launcher runs the
real program itself: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

COLD_PROGRAM = str(Path(sys.executable).parent / "preflight-fsm")
"""The installed console script: a fresh interpreter each time."""

# What the zygote imports before it forks: every module of these packages (what the command
# line, the servers and the stores import when they run), so a child imports (almost) nothing.
PRELOAD_PACKAGES = ("preflight_fsm", "mcp.server", "mcp.client", "uvicorn", "redis", "psycopg")
# ...and these modules alone (not each of their thousands): the LLM SDKs, which a `pf
# --llm-provider` process or a Preflights server asking a provider imports (1.3 s of CPU for
# anthropic, 0.6 s for openai, in each of those processes before they were preloaded).
# The MCP SDK's server logs through rich (its MCPServer imports it when built: 40 ms of CPU);
# anyio.run imports its asyncio backend, and typer its adapters, when they first run (20 ms).
PRELOAD_MODULES = (
    "anthropic",
    "openai",
    "rich.console",
    "rich.logging",
    "anyio._backends._asyncio",
    "typer._adapters",
)

KILL_PROGRAM = signal.SIGRTMIN
"""The signal on which a launcher SIGKILLs its program (``kill``)."""

_MAX_REQUEST = 1 << 20
_LAUNCHER = """#!{python} -IS
# Started by tests/warm_processes.py: runs `preflight-fsm` in a child of the warm zygote.
import array, fcntl, json, os, signal, socket, sys, termios
SOCKET, COLD, STARTUP, KILL_PROGRAM = {socket!r}, {cold!r}, {startup!r}, {kill_program!r}
# A variable that changes how an interpreter starts (PYTHONPATH, ...) needs a fresh one.
ours = {{k: v for k, v in os.environ.items() if k.startswith("PYTHON")}}
if {{k: v for k, v in ours.items() if k not in {honoured!r}}} != STARTUP:
    os.execv(COLD, [COLD] + sys.argv[1:])
try:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(SOCKET)
except OSError:
    os.execv(COLD, [COLD] + sys.argv[1:])
umask = os.umask(0)
os.umask(umask)
# The session leader of a terminal (a test's pty.fork): let go of it for the child to take (the
# kernel hangs up the foreground group when its leader lets go: this process, which ignores it).
try:  # tcgetpgrp fails unless standard input is this process's controlling terminal
    terminal = os.getsid(0) == os.getpid() and os.tcgetpgrp(0) == os.getpgrp()
except OSError:
    terminal = False
if terminal:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    fcntl.ioctl(0, termios.TIOCNOTTY)
request = json.dumps(
    {{"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
      "terminal": terminal}}
).encode()
socket.send_fds(conn, [len(request).to_bytes(4, "big") + request], [0, 1, 2])
reader = conn.makefile("rb")
pid = int(reader.readline())
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
               signal.SIGUSR2):
    signal.signal(signum, lambda signum, frame: os.kill(pid, signum))
signal.signal(KILL_PROGRAM, lambda signum, frame: os.kill(pid, signal.SIGKILL))
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):  # the child holds them: the pipes close when it ends
    os.dup2(null, fd)
line = b""
while not line:
    try:
        line = reader.readline()
    except InterruptedError:
        continue
    if not line:
        os._exit(70)  # the zygote went away
status = int(line)
if os.WIFSIGNALED(status):
    if os.WTERMSIG(status) != signal.SIGKILL:  # the one signal no handler can be set for
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
os._exit(os.waitstatus_to_exitcode(status))
"""


# The interpreter variables a forked child honours itself (``_fresh_standard_streams``) or that
# change nothing once the modules are imported; any other ``PYTHON*`` variable that differs from
# the zygote's sends the launcher to the installed script (a test of a missing dependency puts
# a module on ``PYTHONPATH``).
_HONOURED = frozenset({"PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE"})


def _startup_variables(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k.startswith("PYTHON") and k not in _HONOURED}


def write_launcher(directory: Path, socket_path: Path) -> str:
    """Write the launcher for the zygote at ``socket_path`` into ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    launcher = directory / "preflight-fsm"
    launcher.write_text(
        _LAUNCHER.format(
            python=sys.executable,
            socket=str(socket_path),
            cold=COLD_PROGRAM,
            startup=_startup_variables(os.environ),
            honoured=sorted(_HONOURED),
            kill_program=int(KILL_PROGRAM),
        )
    )
    launcher.chmod(0o755)
    return str(launcher)


class Zygote:
    """The warm interpreter of one test run: ``start`` forks nothing yet, it imports."""

    def __init__(self, directory: Path, *, launcher_written: bool = False) -> None:
        self.directory = directory
        self.socket_path = directory / "zygote.sock"
        launcher = directory / "bin" / "preflight-fsm"
        self.program = (
            str(launcher) if launcher_written else write_launcher(launcher.parent, self.socket_path)
        )
        self._log = directory / "zygote.log"
        self._process: subprocess.Popen[bytes] | None = None

    def spawn(self) -> None:
        """Start the zygote's imports and return (``wait`` waits until it listens)."""
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

    def wait(self, timeout: float = 120.0) -> None:
        """Wait until the zygote listens (its imports take a few seconds of CPU), whichever
        process of the run started it."""
        deadline = time.monotonic() + timeout
        while not self.socket_path.exists():
            ended = self._process is not None and self._process.poll() is not None
            if ended or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the test zygote did not start: {self._log.read_text()}")
            time.sleep(0.02)

    def start(self, timeout: float = 120.0) -> None:
        """Start the zygote and wait until it listens."""
        self.spawn()
        self.wait(timeout)

    def stop(self) -> None:
        """End the zygote and every child it still has, if this process started it."""
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


_zygote: Zygote | None = None
_wanted = False
_shared = False


def prepare(directory: Path) -> None:
    """Write this test process's launcher into ``directory`` (the zygote starts on ``start``)."""
    global _zygote
    _zygote = Zygote(directory)


def share() -> Path:
    """Start the zygote of ``prepare`` for every pytest-xdist worker of the run, without waiting:
    its directory, which each worker ``attach``es to (one zygote's imports for the run, not one
    per worker). Called by the process that hands out the tests."""
    assert _zygote is not None, "prepare() first"
    _zygote.spawn()
    return _zygote.directory


def attach(directory: Path) -> None:
    """Run the launcher and zygote another process of the run prepared in ``directory``."""
    global _zygote, _shared
    _zygote = Zygote(directory, launcher_written=True)
    _shared = True


def program() -> str:
    """The ``preflight-fsm`` a test runs: the launcher, warm once ``start`` has run."""
    global _wanted
    _wanted = True
    return _zygote.program if _zygote is not None else COLD_PROGRAM


def cold(command: str) -> str:
    """``command``, or the installed console script if ``command`` is the warm launcher (a test
    that needs a fresh interpreter: the modules a command imports, interpreter options)."""
    return COLD_PROGRAM if _zygote is not None and command == _zygote.program else command


def kill(process: subprocess.Popen[Any]) -> None:
    """SIGKILL the program ``process`` runs, whether it is the installed script or a warm
    launcher (which kills its child, then ends killed by SIGKILL too): no shutdown code of the
    program runs, as with ``kill -9``. ``process.wait()`` then returns ``-SIGKILL`` (or
    ``-KILL_PROGRAM`` where the launcher ran the installed script instead, as it does without a
    zygote: that process has no handler for it either)."""
    argv = process.args if isinstance(process.args, list | tuple) else [process.args]
    if _zygote is not None and argv[0] == _zygote.program and process.poll() is None:
        process.send_signal(KILL_PROGRAM)
    else:
        process.kill()


def start() -> None:
    """Start the zygote if a collected test module asked for ``program()``; with a shared one,
    wait until it listens."""
    if _zygote is not None and _wanted:
        if _shared:
            _zygote.wait()
        else:
            _zygote.start()


def stop() -> None:
    """Stop the zygote (the end of the test process that started it)."""
    if _zygote is not None:
        _zygote.stop()


# --- the zygote itself (``python tests/warm_processes.py SOCKET``) ---------------------------


def _serve(socket_path: str) -> None:
    _preload()
    # What the preload built lives as long as the zygote and every child: frozen (as the gc
    # module's documentation advises a process that forks without exec), a child's collections
    # skip it, and so do the collections the zygote's interpreter runs when it shuts down (they
    # scanned its 300,000 objects for 1.5 s of wall and 1 s of CPU at the end of every run, D326).
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path + ".tmp")
    listener.listen(64)
    os.rename(socket_path + ".tmp", socket_path)  # whoever sees the path can connect
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    while not stopping:
        for key, _ in selector.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                pid = _fork_child(conn)
                if pid is None:
                    conn.close()
                    continue
                children[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "wake":
                os.read(wake_read, 4096)
                _reap(children, selector)
            else:  # the launcher went away (killed): its child goes too
                pid = key.data
                if conn_closed(key.fileobj):  # type: ignore[arg-type]
                    selector.unregister(key.fileobj)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    os.unlink(socket_path)


def _preload() -> None:
    """Import every module of ``PRELOAD_PACKAGES`` that imports (an extra may be missing), and
    ``PRELOAD_MODULES``."""
    import importlib
    import pkgutil

    for name in PRELOAD_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)

    for name in PRELOAD_PACKAGES:
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        for module in pkgutil.walk_packages(package.__path__, name + ".", onerror=lambda _: None):
            if ".tests" in module.name or module.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(module.name)
            except Exception:  # an optional part whose dependency is absent
                continue
    # Every command module is imported now: build the command line's click commands once
    # here, not in each child (about 60 ms of CPU each).
    from preflight_fsm.cli import command

    command()


def conn_closed(conn: socket.socket) -> bool:
    """Whether the launcher at the other end of ``conn`` has gone (it never sends after start)."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _reap(children: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(conn)
        with contextlib.suppress(OSError):
            conn.sendall(f"{status}\n".encode())
        conn.close()


def _fork_child(conn: socket.socket) -> int | None:
    """Read one launcher's request from ``conn`` and fork its child; the child's pid."""
    conn.settimeout(30)
    try:
        head, fds, _, _ = socket.recv_fds(conn, 4 + _MAX_REQUEST, 3)
        size = int.from_bytes(head[:4], "big")
        body = head[4:]
        while len(body) < size:
            more = conn.recv(size - len(body))
            if not more:
                raise ConnectionError("the launcher went away")
            body += more
        request = json.loads(body)
    except (OSError, ValueError):
        return None
    conn.settimeout(None)
    pid = os.fork()
    if pid == 0:  # the child: become the program
        try:
            _become(request, fds)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _become(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: take the launcher's streams, place and environment, then run."""
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's sockets and the passed originals
    if request.get("terminal"):  # the launcher let go of its terminal: make it this session's
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    else:
        os.setpgid(0, 0)
    env, argv, umask = request["env"], request["argv"], request["umask"]
    assert isinstance(env, dict)
    assert isinstance(argv, list)
    assert isinstance(umask, int)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(str(request["cwd"]))
    os.umask(umask)
    sys.argv = [str(a) for a in argv]
    sys.path[0] = os.path.dirname(COLD_PROGRAM)  # where a console script's interpreter starts
    _fresh_standard_streams()
    os._exit(_run_main())


def _fresh_standard_streams() -> None:
    """Standard streams on the new descriptors, made as the interpreter makes them: the
    zygote's encoding and error handlers unless ``PYTHONIOENCODING`` says otherwise, line
    buffered on a terminal (standard error always), ``PYTHONUNBUFFERED`` honoured."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    asked = os.environ.get("PYTHONIOENCODING", "")
    asked_encoding, _, asked_errors = asked.partition(":")
    streams: list[io.TextIOWrapper] = []
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        before = getattr(sys, f"__{name}__")
        raw = io.FileIO(fd, mode, closefd=False)
        tty = raw.isatty()
        buffer: io.BufferedReader | io.BufferedWriter = (
            io.BufferedReader(raw)
            if mode == "r"
            else io.BufferedWriter(raw, buffer_size=1 if unbuffered else io.DEFAULT_BUFFER_SIZE)
        )
        stream = io.TextIOWrapper(
            buffer,
            encoding=asked_encoding or before.encoding,
            errors=(asked_errors if name != "stderr" else None) or before.errors,
            line_buffering=mode == "w" and (tty or name == "stderr"),
            write_through=unbuffered and mode == "w",
        )
        streams.append(stream)
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def _run_main() -> int:
    """Run the console script's entry point as the interpreter would; the exit code."""
    import atexit
    import threading
    import traceback

    code = 0
    try:
        from preflight_fsm.__main__ import main

        main()
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # wait for non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    if code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code & 0xFF


if __name__ == "__main__":
    _serve(sys.argv[1])
