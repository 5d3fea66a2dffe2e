"""``preflight-fsm`` and ``python -m preflight_fsm``: the command line (``cli/``), started lean.

The console script enters here, not in ``preflight_fsm.cli``, to settle the garbage collector
before typer, pydantic and the engine are imported (D164). A one-shot command (``start``,
``answer``, ``show``, ``list``, ``delete``, ``--help``, ``--version``) ends milliseconds after its
imports, and those imports build some 200,000 objects that live until the process exits: the
collector's passes over them find nothing to free and cost about 5 % of the command (issue 14).
Such a command runs with the collector off, and freezes its objects (``gc.freeze``) when it ends,
so that the collections the interpreter runs while it shuts down skip them too (they were up to
a fifth of the command). Every other command (``chat``, ``mcp``, ``pf``, ...) may run for hours
and keeps the collector on; an MCP server settles it once built, before it serves
(``mcp.server.settle_collector_for_serving``, D304).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

ONE_SHOT = frozenset({"start", "answer", "show", "list", "delete", "--help", "--version"})
"""What ``preflight-fsm`` is given first for a command that ends right after its work."""


@contextmanager
def collector_settled(first: str) -> Iterator[None]:
    """Run a one-shot command (``first`` in ONE_SHOT) with the collector off, and freeze what it
    built when it ends; any other command as it is (docs/performance.md has what this buys)."""
    one_shot = first in ONE_SHOT
    if one_shot:
        gc.disable()
    try:
        yield
    finally:
        if one_shot:
            gc.freeze()  # the process exits next: nothing left to collect is worth scanning


def main() -> None:
    """Console-script entry point: run the command line on ``sys.argv``."""
    first = sys.argv[1] if len(sys.argv) > 1 else "--help"  # no arguments print the help
    with collector_settled(first):
        from preflight_fsm.cli import main as run_command_line

        run_command_line()


if __name__ == "__main__":
    main()
