"""Colour and emphasis for a person at a terminal; none when the output is piped or saved.

A stream gets ANSI styles only when it is a terminal, ``NO_COLOR`` is unset or empty
(https://no-color.org) and ``TERM`` is not ``dumb``. What is styled stays the same text, so a
transcript read from a pipe holds exactly the words a terminal shows.
"""

from __future__ import annotations

import os
from typing import Final, TextIO

__all__ = ["BOLD", "GREEN", "RED", "in_colour", "styled"]

BOLD: Final = "1"
RED: Final = "31"
GREEN: Final = "32"


def in_colour(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that should be shown colour."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def styled(text: str, *codes: str) -> str:
    """``text`` in the SGR ``codes`` (BOLD, RED, GREEN), reset after."""
    return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes else text
