"""The sizes a stored session may reach (C9), named once.

The snapshot schema holds texts and lists up to these (``snapshot/model.py``), the fast restore
path checks the same ones (``snapshot/fast.py``), and a flow is refused when a session on it
could not be snapshotted (``flow.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_ANSWERS", "MAX_IDS", "MAX_STEPS", "MAX_TEXT", "MAX_VALUE"]

MAX_TEXT: Final = 200  # ids, names, digests, seals
MAX_VALUE: Final = 100_000  # the intention and each answer
MAX_STEPS: Final = 32
MAX_IDS: Final = 64  # asked_questions, answered_questions, missing_info, trace
MAX_ANSWERS: Final = 256
