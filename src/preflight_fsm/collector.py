"""The garbage collector's setting for one-shot commands, a figure in docs/performance.md.

A process of ours is one of two kinds:

- a **one-shot command** (``start``, ``answer``, ``show``, ``list``, ``delete``, ``--help``,
  ``--version``) ends milliseconds after its imports, and those imports build some 200,000
  objects that live until the process exits: the collector's passes over them find nothing to
  free and cost about 5 % of the command (issue 14). Such a command runs with the collector off,
  and freezes its objects (``gc.freeze``) when it ends, so that the collections the interpreter
  runs while it shuts down skip them too (they were up to a fifth of the command; D164).
  ``__main__`` enters :func:`collector_settled` before typer, pydantic and the engine are imported.
- every other command, servers included (``mcp`` over stdio or HTTP, ``chat``, ``pf``, ...),
  keeps the interpreter's settings. A server's freeze and rarer collections (D304) paid 6 % of
  its CPU per call over HTTP and nothing over stdio when measured again, under the 10 % a switch
  must pay (D310).

The switch stays only while ``make bench`` shows it paying at least 10 %
(``benchmarks/cli_shortcuts.py``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ONE_SHOT", "collector_settled"]

ONE_SHOT = frozenset({"start", "answer", "show", "list", "delete", "--help", "--version"})
"""What ``preflight-fsm`` is given first for a command that ends right after its work."""


@contextmanager
def collector_settled(first: str) -> Iterator[None]:
    """Run a one-shot command (``first`` in ONE_SHOT) with the collector off, and freeze what it
    built when it ends; any other command as it is."""
    one_shot = first in ONE_SHOT
    if one_shot:
        gc.disable()
    try:
        yield
    finally:
        if one_shot:
            gc.freeze()  # the process exits next: nothing left to collect is worth scanning
