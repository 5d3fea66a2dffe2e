"""The folder a file store is made in: kept out of git, as pytest's, ruff's and mypy's caches are.

Sessions hold intentions and answers; a ``git add -A`` in the repository must not commit them
(issue 30). The people file, which shares the default folder, is meant to be committed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

__all__ = ["GITIGNORE", "make_store_folder"]

DEFAULT_FOLDER: Final = ".preflight-fsm"

GITIGNORE: Final = (
    "# Written by preflight-fsm: its session store stays out of git; the people file does not.\n"
    "*\n"
    "!people.toml\n"
)
"""The ``.gitignore`` a store folder gets."""


def make_store_folder(folder: Path) -> None:
    """Make ``folder`` if missing; one made now, or the default folder, gets a ``.gitignore``
    unless it has one (a user's own is never replaced)."""
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    if made or folder.name == DEFAULT_FOLDER:
        with (
            contextlib.suppress(FileExistsError),
            open(folder / ".gitignore", "x", encoding="utf-8") as file,
        ):
            file.write(GITIGNORE)
