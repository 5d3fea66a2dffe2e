"""The sizes a stored session may reach (C9), named once.

The snapshot schema holds texts and lists up to these (``snapshot/model.py``), the fast restore
path checks the same ones (``snapshot/fast.py``), and a flow is refused when a session on it
could not be snapshotted (``flow.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_ANSWERS",
    "MAX_IDS",
    "MAX_SNAPSHOT_BYTES",
    "MAX_STEPS",
    "MAX_TEXT",
    "MAX_VALUE",
    "STEP_OVERHEAD_BYTES",
    "worst_snapshot_bytes",
]

MAX_TEXT: Final = 200  # ids, names, digests, seals
MAX_VALUE: Final = 100_000  # the intention and each answer
MAX_STEPS: Final = 32
MAX_IDS: Final = 64  # asked_questions, answered_questions, missing_info, trace
MAX_ANSWERS: Final = 256
MAX_SNAPSHOT_BYTES: Final = 256 * 1024  # a stored snapshot's JSON; larger is refused unparsed

UTF8_MAX: Final = 4  # bytes of one character in a snapshot's JSON (UTF-8, nothing escaped)
STEP_OVERHEAD_BYTES: Final = 8 * 1024
"""What one step adds besides its answers, at most: who answered, the principal (200
characters), a passkey proof (about 5,500 characters of base64url and a 200-character name)."""
_FIXED_BYTES: Final = 64 * 1024  # names, fingerprint, owner, digest, seal, the trace, the keys


def worst_snapshot_bytes(intention_chars: int, answer_chars: dict[str, int], max_turns: int) -> int:
    """The largest snapshot a session can reach: its intention, each answer id's longest value
    (``answer_chars``, id -> characters) once in the answers and once in every step (a step may
    send an answer again), and each step's provenance."""
    answers = sum(UTF8_MAX * (chars + len(key)) + 8 for key, chars in answer_chars.items())
    ids = 3 * sum(len(key) + 3 for key in answer_chars)  # asked, answered, missing
    return (
        UTF8_MAX * intention_chars
        + (max_turns + 1) * answers
        + max_turns * STEP_OVERHEAD_BYTES
        + ids
        + _FIXED_BYTES
    )
