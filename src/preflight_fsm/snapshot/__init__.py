"""Snapshots (C9, C10, C11): a session is its inputs.

A snapshot holds the session's inputs (the flow's fingerprint, the intention and the answers
each accepted step took, as normalised) and, for readers, what they derive (state, category,
recorded answers, turn, trace). Restoring replays the inputs on the snapshot's flow and refuses
any derived field that differs from the replay, naming it: no edit of a snapshot, with or without
its digest, restores into a position its inputs do not produce.

One module per concern: ``model`` (the schema and its limits, as pydantic models), ``json_form``
(the JSON without the model: field order, canonical JSON), ``seal`` (C11), ``write``, ``fast``
(restoring: the fast path, then the full one), ``restore`` (the full path: parse, check, replay,
compare), ``replay``, ``four_field`` (Preflights' minimal form) and ``versions`` (older schema
versions).

The names below are imported on first use (PEP 562, as the package's own): a command that
writes and restores its sessions' snapshots never imports the model, nor pydantic (issue 32).
``tests/test_snapshot_json.py`` holds the three lists equal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as mypy reads them (`X as X`: re-exported)
    from preflight_fsm.sizes import MAX_SNAPSHOT_BYTES as MAX_SNAPSHOT_BYTES
    from preflight_fsm.snapshot.fast import restore_session as restore_session
    from preflight_fsm.snapshot.json_form import SCHEMA_VERSION as SCHEMA_VERSION
    from preflight_fsm.snapshot.model import SessionSnapshot as SessionSnapshot
    from preflight_fsm.snapshot.model import TraceStep as TraceStep
    from preflight_fsm.snapshot.model import canonical_content as canonical_content
    from preflight_fsm.snapshot.restore import parse_snapshot as parse_snapshot
    from preflight_fsm.snapshot.restore import replay_snapshot as replay_snapshot
    from preflight_fsm.snapshot.seal import SEAL_KEY_FILE_ENV as SEAL_KEY_FILE_ENV
    from preflight_fsm.snapshot.seal import SEAL_KEYS_ENV as SEAL_KEYS_ENV
    from preflight_fsm.snapshot.seal import SealKeys as SealKeys
    from preflight_fsm.snapshot.versions import MIGRATIONS as MIGRATIONS
    from preflight_fsm.snapshot.write import snapshot_json as snapshot_json
    from preflight_fsm.snapshot.write import snapshot_of as snapshot_of
    from preflight_fsm.snapshot.write import trace_of as trace_of

_HOMES: dict[str, str] = {
    "MAX_SNAPSHOT_BYTES": "preflight_fsm.sizes",
    "MIGRATIONS": "preflight_fsm.snapshot.versions",
    "SCHEMA_VERSION": "preflight_fsm.snapshot.json_form",
    "SEAL_KEYS_ENV": "preflight_fsm.snapshot.seal",
    "SEAL_KEY_FILE_ENV": "preflight_fsm.snapshot.seal",
    "SealKeys": "preflight_fsm.snapshot.seal",
    "SessionSnapshot": "preflight_fsm.snapshot.model",
    "TraceStep": "preflight_fsm.snapshot.model",
    "canonical_content": "preflight_fsm.snapshot.model",
    "parse_snapshot": "preflight_fsm.snapshot.restore",
    "replay_snapshot": "preflight_fsm.snapshot.restore",
    "restore_session": "preflight_fsm.snapshot.fast",
    "snapshot_json": "preflight_fsm.snapshot.write",
    "snapshot_of": "preflight_fsm.snapshot.write",
    "trace_of": "preflight_fsm.snapshot.write",
}
"""Public name -> the module it is imported from on first use."""

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SEAL_KEYS_ENV",
    "SEAL_KEY_FILE_ENV",
    "SealKeys",
    "SessionSnapshot",
    "TraceStep",
    "canonical_content",
    "parse_snapshot",
    "replay_snapshot",
    "restore_session",
    "snapshot_json",
    "snapshot_of",
    "trace_of",
]

if not TYPE_CHECKING:  # hidden from mypy, as in the package's own __init__

    def __getattr__(name: str) -> Any:
        """Import a public name's module on first use, and keep the name here for the next."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
