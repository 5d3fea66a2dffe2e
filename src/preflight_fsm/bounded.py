"""Input read up to a limit: a file or stream larger than it is refused, never read to its end.

A flow file, a snapshot file, answers on standard input or a seal key file may be anything a
caller names, ``/dev/zero`` included; each is read as at most its limit and one byte, so a process
never holds more than that whatever it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

__all__ = ["TooLarge", "read_bounded"]


class TooLarge(ValueError):
    """More than ``limit`` bytes; ``problem`` says so in a phrase that fits after a name."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.problem = f"is larger than {limit:,} bytes, more than any legitimate one"
        super().__init__(self.problem)


def read_bounded(source: Path | BinaryIO, limit: int) -> bytes:
    """The bytes of ``source`` (a path or an open binary stream), or TooLarge past ``limit``.

    >>> import io
    >>> read_bounded(io.BytesIO(b"12345"), 5)
    b'12345'
    >>> read_bounded(io.BytesIO(b"123456"), 5)
    Traceback (most recent call last):
    ...
    preflight_fsm.bounded.TooLarge: is larger than 5 bytes, more than any legitimate one

    OSError (a missing file, a directory) is the caller's to word.
    """
    if isinstance(source, Path):
        with source.open("rb") as stream:
            return read_bounded(stream, limit)
    data = source.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
