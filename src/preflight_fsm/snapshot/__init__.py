"""Snapshots (C9, C10, C11): a session is its inputs.

A snapshot holds the session's inputs (the flow's fingerprint, the intention and the answers
each accepted step took, as normalised) and, for readers, what they derive (state, category,
recorded answers, turn, trace). Restoring replays the inputs on the snapshot's flow and refuses
any derived field that differs from the replay, naming it: no edit of a snapshot, with or without
its digest, restores into a position its inputs do not produce.

One module per concern: ``model`` (the schema, its limits, the canonical JSON), ``seal`` (C11),
``write``, ``restore`` (parse, check, replay, compare), ``replay``, ``fast`` (the fast restore
path), ``four_field`` (Preflights' minimal form) and ``versions`` (older schema versions).
"""

from preflight_fsm.snapshot.model import (
    MAX_SNAPSHOT_BYTES,
    SCHEMA_VERSION,
    SessionSnapshot,
    TraceStep,
    canonical_content,
)
from preflight_fsm.snapshot.restore import parse_snapshot, replay_snapshot, restore_session
from preflight_fsm.snapshot.seal import SEAL_KEY_FILE_ENV, SEAL_KEYS_ENV, SealKeys
from preflight_fsm.snapshot.versions import MIGRATIONS
from preflight_fsm.snapshot.write import snapshot_json, snapshot_of, trace_of

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
