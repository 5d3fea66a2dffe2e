"""Did you mean …? The nearest of some names to what a person typed, for the front ends.

The engine never guesses (C5: a text that is no option is a custom value); a person at a prompt,
or typing a command, is asked instead, and refused answers' ``action`` names the id an unknown
key nearly spells (nothing is taken for it). Names are compared by their match key (case and width
folded, as the engine compares them), by :class:`difflib.SequenceMatcher`'s ratio.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

from preflight_fsm.text import match_key

__all__ = ["CUTOFF", "nearest"]

CUTOFF: Final = 0.6
"""The least similarity that is a near miss: ``Databse``/``Database`` 0.93, ``OAthAth``/``OAuth``
0.67; ``Passkeys`` and ``Email/Password`` (0.45) are different answers."""


def nearest(typed: str, names: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The name ``typed`` nearly spells, as written; None when it spells one exactly or none."""
    by_key = {match_key(name): name for name in names}
    key = match_key(" ".join(typed.split()))
    if not key or key in by_key:
        return None
    found = difflib.get_close_matches(key, list(by_key), n=1, cutoff=cutoff)
    return by_key[found[0]] if found else None
