"""Who answered each decided value, written into the ADR and task Preflights wrote (C9).

Preflights' own files say what was decided, not who decided it. Once a session completes, the
application (``application.py``) ends each file it wrote with the decision record
(``decision_record.py``): the "## Who answered" section (every value of the decision with its
source, the ``answered_by`` of the step that supplied it -- ``cli`` for ``pf``, ``agent``,
``user_form``, ``user_web`` or ``user_passkey`` for ``mcp --preflights`` -- with its principal
and signer, or ``intention`` where the intention's own words decided it: the keyword shortcut,
or a value Preflights pre-filled from them) and the attestation ``preflight-fsm verify`` checks.
The record is rebuilt from the session every time, and typed text above it that imitates it is
neutralised.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.decision_record import MAX_DECISION_FILE_BYTES, record
from preflight_fsm.machine import ClarificationMachine

__all__ = ["note_who_answered"]

logger = logging.getLogger("preflight_fsm.integrations.preflights")


def note_who_answered(
    repo_path: str,
    paths: Sequence[str | None],
    machine: ClarificationMachine,
    *,
    session_id: str,
    prefilled: Collection[str] = (),
) -> None:
    """End each file of ``paths`` (relative to the repository) that exists with the decision
    record of ``machine``'s session (stored as ``session_id``), replacing a record it holds."""
    for relative in paths:
        if not relative:
            continue
        path = Path(repo_path) / relative
        try:
            text = read_bounded(path, MAX_DECISION_FILE_BYTES).decode("utf-8")
            written = record(text, machine, session_id=session_id, prefilled=prefilled)
            path.write_text(written, encoding="utf-8")
        except (OSError, Unreadable, UnicodeDecodeError) as exc:  # the decision is written;
            # its record is not worth failing it
            logger.warning("could not write the decision record in %s: %s", path, exc)
