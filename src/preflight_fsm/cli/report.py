"""How every command ends when something goes wrong: one prefix, one JSON shape, one exit code.

A person reads one line on standard error, ``preflight-fsm: <what was wrong and what to do>``
(a usage error adds the usage line); a script that passed ``--json`` reads one JSON object on
standard output, ``{"error": NAME, "message": ..., "exit_code": N, ...}`` (refused answers add
their ``feedback``, C5). No input reaches the user as a traceback: anything unforeseen is reported
as an internal error in the same shape (``PREFLIGHT_FSM_DEBUG=1`` shows the traceback instead).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import typer

if TYPE_CHECKING:
    from preflight_fsm.errors import PreflightFsmError

__all__ = [
    "EXIT_CONFLICT",
    "EXIT_CORRUPT",
    "EXIT_FINISHED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID_ANSWERS",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_STORE_UNAVAILABLE",
    "EXIT_UNKNOWN_SESSION",
    "EXIT_USAGE",
    "PREFIX",
    "CommandFailed",
    "check_text",
    "error_code",
    "reported",
    "run_reported",
    "usage_error",
]

PREFIX: Final = "preflight-fsm: "
"""The one prefix of every error line."""

EXIT_OK: Final = 0
EXIT_INTERNAL: Final = 1
"""A failure nobody foresaw (a bug): reported in one line, never as a traceback."""
EXIT_USAGE: Final = 2
"""Bad arguments or options, malformed answers input, an invalid intention or flow file."""
EXIT_INVALID_ANSWERS: Final = 3
"""The engine refused the answers; its structured feedback (C5) is in the JSON error."""
EXIT_UNKNOWN_SESSION: Final = 4
"""No such session: never created, deleted, or expired (the message says which)."""
EXIT_CONFLICT: Final = 5
"""Another process stepped the session first; nothing was written."""
EXIT_FINISHED: Final = 6
"""The session already ended (Done or NoPatch); it takes no more answers."""
EXIT_CORRUPT: Final = 7
"""The stored session is unreadable or was tampered with."""
EXIT_STORE_UNAVAILABLE: Final = 8
"""The store cannot be opened or reached, or is not a preflight-fsm store."""
EXIT_OUTPUT: Final = 9
"""Standard output could not be written (a full disk, a device error); what the command did
before that stands. A closed pipe (``| head``) ends the command quietly instead, as SIGPIPE
would (exit 141)."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C: 128 + SIGINT, what shells report for a command stopped by it (``chat``, ``mcp``
over stdio, ``pf``)."""

# Writing standard output failed: an OSError without a file name (every file the commands open
# is named in its error) with one of these codes.
_OUTPUT_ERRNOS: Final = frozenset(
    {errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EPIPE, errno.EBADF}
)
_SIGPIPE_EXIT: Final = 128 + 13


class CommandFailed(Exception):
    """Ends a command: ``name`` and ``exit_code`` as ``--json`` prints them, ``message`` for a
    person, ``details`` (JSON-serialisable) added to the JSON object, ``lines`` printed after the
    message for a person (usage, feedback)."""

    def __init__(
        self,
        name: str,
        message: str,
        exit_code: int,
        *,
        details: dict[str, Any] | None = None,
        lines: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.exit_code = exit_code
        self.details = details or {}
        self.lines = lines


def usage_error(message: str) -> CommandFailed:
    """A usage error (exit 2) that the command found itself."""
    return CommandFailed("usage", message, EXIT_USAGE)


def error_code(error: PreflightFsmError) -> tuple[int, str] | None:
    """How an engine or store error ends a command: its exit code and ``error`` name (the
    error's own ``code``), or None."""
    from preflight_fsm.errors import (
        CorruptSession,
        InvalidFlow,
        InvalidIntention,
        InvalidPeopleFile,
        SessionConflict,
        SessionExpired,
        SessionFinished,
        SessionNotFound,
        SnapshotFlowMismatch,
        StoreUnavailable,
    )

    table: tuple[tuple[type[PreflightFsmError], int], ...] = (
        (SessionNotFound, EXIT_UNKNOWN_SESSION),
        (SessionExpired, EXIT_UNKNOWN_SESSION),
        (SessionConflict, EXIT_CONFLICT),
        (SessionFinished, EXIT_FINISHED),
        (CorruptSession, EXIT_CORRUPT),
        (StoreUnavailable, EXIT_STORE_UNAVAILABLE),
        (InvalidIntention, EXIT_USAGE),
        (InvalidFlow, EXIT_USAGE),
        (InvalidPeopleFile, EXIT_USAGE),  # a missing, empty or bad --people file
        (SnapshotFlowMismatch, EXIT_USAGE),
    )
    for kind, code in table:
        if isinstance(error, kind):
            return code, error.code
    return None


@contextmanager
def reported(store: str | None = None) -> Iterator[None]:
    """Turn the engine's and the store's errors into CommandFailed, naming ``store`` (as it may
    be printed: no password) when the error is about a session or a store."""
    from preflight_fsm.errors import PreflightFsmError, SessionStoreError

    try:
        yield
    except PreflightFsmError as error:
        found = error_code(error)
        if found is None:
            raise
        code, name = found
        message = str(error)
        details: dict[str, Any] = {}
        session_id = getattr(error, "session_id", None)
        if session_id is not None:
            details["session_id"] = session_id
        if store is not None and isinstance(error, SessionStoreError):
            details["store"] = store
            if store not in message:
                message = f"{message}; store searched: {store}"
        raise CommandFailed(name, message, code, details=details) from None


def run_reported(run: Callable[[], Any], argv: list[str]) -> int:
    """Run a command line and return its exit code, reporting every failure as this module says."""
    as_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    try:
        for position, arg in enumerate(argv, start=1):
            check_text(arg, f"argument {position}")
        returned = run()
        return returned if isinstance(returned, int) else EXIT_OK
    except CommandFailed as failure:
        _emit(failure, as_json)
        return failure.exit_code
    except typer.TyperException as exc:
        return _click_failure(exc, as_json)
    except RecursionError:
        _emit(usage_error("the input is nested too deeply to read"), as_json)
        return EXIT_USAGE
    except OSError as exc:
        if exc.filename is None and exc.errno in _OUTPUT_ERRNOS:
            return _output_failed(exc)
        return _internal(exc, as_json)
    except Exception as exc:
        return _internal(exc, as_json)


def _internal(exc: Exception, as_json: bool) -> int:
    if os.environ.get("PREFLIGHT_FSM_DEBUG"):
        raise exc
    _emit(
        CommandFailed(
            "internal_error",
            f"internal error ({type(exc).__name__}: {exc}); nothing more was written. "
            "Please report it (PREFLIGHT_FSM_DEBUG=1 shows where it happened)",
            EXIT_INTERNAL,
        ),
        as_json,
    )
    return EXIT_INTERNAL


def _output_failed(exc: OSError) -> int:
    """Standard output broke: say so on standard error (a closed pipe quietly), and point
    standard output at /dev/null so that the interpreter's last flush cannot fail again."""
    # ValueError: no file descriptor behind stdout (a test's capture), nothing left to flush.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if exc.errno == errno.EPIPE:
        return _SIGPIPE_EXIT
    reason = exc.strerror or str(exc)
    typer.echo(
        f"{PREFIX}cannot write to standard output ({reason}); what the command did before "
        "that stands (`preflight-fsm list` shows the sessions): run it again with its output "
        "going somewhere it fits",
        err=True,
    )
    return EXIT_OUTPUT


def check_text(text: str, where: str) -> None:
    """Refuse (a usage error) text holding bytes that were not UTF-8, which Python keeps as lone
    surrogates."""
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            raw = text.encode("utf-8", "surrogateescape")
            raise usage_error(
                f"{where} is not UTF-8 text (byte 0x{ord(char) - 0xDC00:02x} at character "
                f"{index + 1} of {raw!r}); send it as UTF-8"
            )


def _click_failure(exc: typer.TyperException, as_json: bool) -> int:
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":
        exc.show()  # type: ignore[attr-defined]  # prints the help, as `--help` does
        return code
    if type(exc).__name__ == "Abort":
        _emit(CommandFailed("aborted", "aborted", EXIT_INTERNAL), as_json)
        return EXIT_INTERNAL
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    lines: tuple[str, ...] = ()
    if ctx is not None:
        lines = (ctx.get_usage(), f"Try '{ctx.command_path} --help' for help.")
    name = "usage" if code == EXIT_USAGE else "failed"
    _emit(CommandFailed(name, message, code, lines=lines), as_json)
    return code


def _emit(failure: CommandFailed, as_json: bool) -> None:
    if as_json:
        payload = {
            "error": failure.name,
            "message": failure.message,
            "exit_code": failure.exit_code,
            **failure.details,
        }
        typer.echo(_encodable(json.dumps(payload, ensure_ascii=False)))
        return
    import sys

    from preflight_fsm.cli.colour import BOLD, RED, in_colour, styled

    prefix = styled(PREFIX, BOLD, RED) if in_colour(sys.stderr) else PREFIX
    text = _encodable("\n".join([PREFIX + failure.message, *failure.lines]))
    typer.echo(prefix + text[len(PREFIX) :], err=True, color=True)


def _encodable(text: str) -> str:
    """``text`` with each lone surrogate (an answer's ``"\\ud800"`` escape, echoed back in
    feedback) written as that escape: UTF-8 cannot encode one, and inside a JSON string the
    escape is the same value."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
