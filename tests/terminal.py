"""A command on a pseudo-terminal, as a person runs it: what it shows, keys typed, its exit."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import time
from typing import Final

import pytest

TIMEOUT = 30.0  # seconds; a run takes well under one, the margin only absorbs a loaded machine


class Terminal:
    """The command running on a pseudo-terminal that is its controlling terminal (so Ctrl-C
    raises SIGINT in it, as in a real shell)."""

    def __init__(
        self, argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the command, or die without running pytest's code
            try:
                # As a shell does for a foreground job: pytest may run with SIGINT ignored (a
                # background job of a script), and an ignored signal stays ignored across exec.
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                # A terminal that shows colour, whatever the environment running the tests says.
                inherited = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
                if cwd is not None:
                    os.chdir(cwd)
                os.execve(argv[0], argv, {**inherited, **(env or {}), "TERM": "xterm-256color"})
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = ""
        self.raw = ""  # with the terminal's colours
        self.returncode: int | None = None

    def expect(self, text: str) -> None:
        """Read until ``text`` has appeared in the output (line ends normalised to \\n)."""
        deadline = time.monotonic() + TIMEOUT
        while text not in self.output:
            if not self._read(deadline):
                pytest.fail(f"{text!r} never appeared; the terminal showed:\n{self.output}")

    def wait_for_input(self) -> None:
        """Wait until the command sleeps in a read of its terminal. A Ctrl-C sent before that
        (between the prompt and the read) is seen only at the next key, as in CPython's input
        loop; a person always takes longer, a test must wait for it."""
        deadline = time.monotonic() + TIMEOUT
        while not _reading(self._foreground()):
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the command never waited for input; the terminal showed:\n{self.output}"
                )
            time.sleep(0.01)  # polling the kernel's account of the process, not a guess

    def _foreground(self) -> int:
        """The process the terminal's keys go to: its foreground process group's leader (the
        command; started warm, the zygote's child that took the terminal over, not the launcher
        at ``pid``: tests/warm_processes.py), 0 while it has none."""
        try:
            return os.tcgetpgrp(self.fd)
        except OSError:  # the command exited
            return 0

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait(self) -> int:
        """Drain the output until the command exits; its exit code."""
        deadline = time.monotonic() + TIMEOUT
        while self._read(deadline):
            pass
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
            time.sleep(0.01)
        pytest.fail(f"the command did not exit; the terminal showed:\n{self.output}")

    def close(self) -> None:
        if self.returncode is None and os.waitpid(self.pid, os.WNOHANG)[0] == 0:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def _read(self, deadline: float) -> bool:
        """Read what is there; False at the end of output (the command exited) or the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
            return False
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the command exited and closed the terminal
            return False
        text = data.decode(errors="replace").replace("\r\n", "\n")
        self.raw += text
        self.output += re.sub(r"\x1b\[[0-9;]*m", "", text)  # the words, as a pipe gets them
        return bool(data)


# The system calls an input loop sleeps in: read, poll, select, pselect6, ppoll (x86_64, aarch64).
_READS: Final = {"x86_64": {0, 7, 23, 270, 271}, "aarch64": {63, 72, 73}}


def _reading(pid: int) -> bool:
    """Whether the main thread of ``pid`` sleeps in a system call that waits for input."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
        with open(f"/proc/{pid}/syscall", encoding="ascii") as syscall:
            number = syscall.read().split()[0]
    except (OSError, IndexError):
        return False
    return state == "S" and number.isdigit() and int(number) in _READS[os.uname().machine]
