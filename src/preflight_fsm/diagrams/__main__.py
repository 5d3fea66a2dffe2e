"""``python -m preflight_fsm.diagrams [ROOT]`` (``make diagrams``): rewrite the committed files."""

from __future__ import annotations

import sys

from preflight_fsm.diagrams.generate import write_diagrams
from preflight_fsm.errors import PreflightFsmError


def main(argv: list[str]) -> int:
    """Write every generated file under ROOT (the working directory by default); 1 on error."""
    try:
        for path in write_diagrams(argv[0] if argv else "."):
            print(f"wrote {path}")
    except PreflightFsmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
