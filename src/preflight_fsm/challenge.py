"""What a passkey signs for a step: its challenge, bound to the session, the step, the answers
and the flow (docs/web.md; verified by ``passkeys.py`` with py_webauthn, recomputed offline by
``verify.py``). Plain hashing, so every front end computes it without the ``web`` extra.

**The challenge** of a step (:func:`signing_challenge`) is the SHA-256 digest of the UTF-8 bytes
of ``json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, where
``content`` is ``{"type": "preflight-fsm/step/v1", "session_id": <the session's id>, "step":
<the step's number, 1 for the first>, "answers": <the answers as the step records them:
normalised, null for blank>, "flow_fingerprint": <the session's flow>}``. An assertion over it
counts for that session, that step and those answers on that flow, and nowhere else: moved to
another session, step or answer, it is refused as ``wrong_challenge``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from preflight_fsm.machine import ClarificationMachine

__all__ = ["CHALLENGE_TYPE", "signing_challenge", "step_challenge"]

CHALLENGE_TYPE: Final = "preflight-fsm/step/v1"
"""The ``type`` inside every step challenge: a challenge of another kind never matches one."""


def signing_challenge(
    session_id: str, step_number: int, answers: Mapping[str, str | None], flow_fingerprint: str
) -> bytes:
    """The 32-byte challenge a passkey signs to confirm step ``step_number`` (1 for the first)
    of session ``session_id`` with ``answers`` (as the step records them) on the flow
    ``flow_fingerprint``; the encoding is in this module's docstring."""
    content = {
        "answers": dict(answers),
        "flow_fingerprint": flow_fingerprint,
        "session_id": session_id,
        "step": step_number,
        "type": CHALLENGE_TYPE,
    }
    encoded = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).digest()


def step_challenge(
    machine: ClarificationMachine, session_id: str, answers: Mapping[str, Any]
) -> bytes:
    """The challenge that signs ``answers`` as the next step of ``machine`` (stored as
    ``session_id``): :func:`signing_challenge` over the answers as that step would record them.
    Raises InvalidAnswers or SessionFinished, as the step would: show those before asking for a
    passkey."""
    recorded = machine.recorded_answers(answers)
    return signing_challenge(session_id, len(machine.steps) + 1, recorded, machine.flow.fingerprint)
