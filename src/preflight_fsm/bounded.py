"""Input read up to a limit: a file or stream larger than it is refused, never read to its end.

A flow file, a snapshot file, answers on standard input or a seal key file may be anything a
caller names, ``/dev/zero`` included; each is read as at most its limit and one byte, so a process
never holds more than that whatever it is given. A path must name a regular file: a FIFO (which
blocks its reader until someone writes), a device or a socket is refused before it is read, so no
command hangs on an input it was handed (issue 30).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "TooLarge", "Unreadable", "open_regular", "read_bounded"]


class Unreadable(ValueError):
    """An input refused before or while reading; ``problem`` is a phrase that fits after a name."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class TooLarge(Unreadable):
    """More than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"is larger than {limit:,} bytes, more than any legitimate one")


class NotRegularFile(Unreadable):
    """A path naming a FIFO, a device or a socket: never opened for reading, so nothing hangs."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"is {kind}, not a regular file; name a regular file")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for binary reading, or NotRegularFile when it is not a regular file.

    Opened without blocking (a FIFO's open waits for a writer otherwise), then checked on the
    descriptor itself, so a path swapped between a check and the open cannot slip through. A
    directory raises IsADirectoryError, as ``open`` does; other OSError is the caller's to word.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(_kind(mode))
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_bounded(source: Path | BinaryIO, limit: int) -> bytes:
    """The bytes of ``source`` (a path or an open binary stream), or TooLarge past ``limit``.

    >>> import io
    >>> read_bounded(io.BytesIO(b"12345"), 5)
    b'12345'
    >>> read_bounded(io.BytesIO(b"123456"), 5)
    Traceback (most recent call last):
    ...
    preflight_fsm.bounded.TooLarge: is larger than 5 bytes, more than any legitimate one

    A path that is not a regular file is refused unread (NotRegularFile); OSError (a missing
    file, a directory) is the caller's to word.
    """
    if isinstance(source, Path):
        with open_regular(source) as stream:
            return read_bounded(stream, limit)
    data = source.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
