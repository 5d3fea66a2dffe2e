"""The garbage collector's settings: one home for both, each a figure in docs/performance.md.

A process of ours is one of two kinds, and the collector is set for each once:

- a **one-shot command** (``start``, ``answer``, ``show``, ``list``, ``delete``, ``--help``,
  ``--version``) ends milliseconds after its imports, and those imports build some 200,000
  objects that live until the process exits: the collector's passes over them find nothing to
  free and cost about 5 % of the command (issue 14). Such a command runs with the collector off,
  and freezes its objects (``gc.freeze``) when it ends, so that the collections the interpreter
  runs while it shuts down skip them too (they were up to a fifth of the command; D164).
  ``__main__`` enters :func:`collector_settled` before typer, pydantic and the engine are imported.
- a **server** (``mcp`` over stdio or HTTP) runs for hours: :func:`settle_collector_for_serving`,
  called by ``mcp.server.serve`` once the server is built, before it serves (D304).

Every other command (``chat``, ``pf``, ...) keeps the interpreter's settings. Each stays only
while ``make bench`` shows it paying at least 10 % (``benchmarks/cli_shortcuts.py``,
``benchmarks/mcp_http_shortcuts.py``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["ONE_SHOT", "SERVING_THRESHOLD", "collector_settled", "settle_collector_for_serving"]

ONE_SHOT = frozenset({"start", "answer", "show", "list", "delete", "--help", "--version"})
"""What ``preflight-fsm`` is given first for a command that ends right after its work."""

SERVING_THRESHOLD: Final = 10_000
"""Container allocations between two collections of the youngest generation while serving
(the interpreter's default is 700)."""


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


def settle_collector_for_serving() -> None:
    """Set the garbage collector for a server that runs for hours (D304).

    What the start built (the imports, the SDK's models, the compiled flow, the server) lives as
    long as the process: it is frozen, out of the collector's reach, where each full collection
    scanned its 120,000 objects for nothing. A call allocates thousands of short-lived objects,
    nearly all freed by their reference counts: the youngest generation is collected every
    10,000 allocations instead of 700, each collection scanning about the same live objects
    (the calls in flight). Together about 12 % of a call's server CPU over HTTP was the
    collector's; now 2 % (docs/performance.md). Cyclic garbage made while serving is collected
    as before, a little later.
    """
    gc.freeze()
    gc.set_threshold(SERVING_THRESHOLD)
