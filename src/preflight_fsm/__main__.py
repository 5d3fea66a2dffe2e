"""``preflight-fsm`` and ``python -m preflight_fsm``: the command line (``cli/``), started lean.

The console script enters here, not in ``preflight_fsm.cli``, to settle the garbage collector
(``collector.py``) before typer, pydantic and the engine are imported (D164).
"""

from __future__ import annotations

import sys

from preflight_fsm.collector import collector_settled


def main() -> None:
    """Console-script entry point: run the command line on ``sys.argv``."""
    first = sys.argv[1] if len(sys.argv) > 1 else "--help"  # no arguments print the help
    with collector_settled(first):
        from preflight_fsm.cli import main as run_command_line

        run_command_line()


if __name__ == "__main__":
    main()
