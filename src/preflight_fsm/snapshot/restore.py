"""Reading and restoring a snapshot through its model (C9, C10, C11): parse, check, replay,
compare. The full path: ``fast.restore_session`` takes it for whatever its fast path leaves.

Three guarantees, each from its own mechanism:
- the **digest** (SHA-256 of the canonical JSON) catches corruption: anyone can recompute it;
- **replay** makes a restored session exact: it is what its inputs produce, whatever else says;
- the **seal** (HMAC-SHA256 under a key, :class:`SealKeys`) proves this service issued it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import ValidationError

from preflight_fsm.engine import engine_for
from preflight_fsm.errors import InvalidSeal, InvalidSnapshot, SnapshotFlowMismatch
from preflight_fsm.flow_data import FlowData
from preflight_fsm.flow_registry import FlowRegistry, default_registry
from preflight_fsm.session import Session
from preflight_fsm.snapshot.four_field import restore_four_field
from preflight_fsm.snapshot.model import (
    MAX_SNAPSHOT_BYTES,
    SCHEMA_VERSION,
    SessionSnapshot,
    canonical_content,
    trace_object,
)
from preflight_fsm.snapshot.replay import replay
from preflight_fsm.snapshot.seal import SealKeys
from preflight_fsm.snapshot.versions import upgraded
from preflight_fsm.snapshot.write import derived_fields

__all__ = ["check_derived", "parse_snapshot", "replay_snapshot"]


def parse_snapshot(
    data: SessionSnapshot | str | bytes | dict[str, Any],
    flows: FlowRegistry | None = None,
    *,
    require_digest: bool = False,
    keys: SealKeys | None = None,
) -> SessionSnapshot:
    """A structurally valid snapshot whose digest (and seal, with ``keys``) hold, or
    InvalidSnapshot naming the offending field. Nothing is replayed here.

    ``require_digest`` refuses a snapshot without a digest (stores, which only hold snapshots
    this package wrote). With ``keys`` an unsealed or wrongly sealed snapshot is InvalidSeal.
    """
    if isinstance(data, SessionSnapshot) and data.schema_version == SCHEMA_VERSION:
        snapshot = data
    else:
        if isinstance(data, SessionSnapshot):  # an older version: checked as it was written
            data = data.model_dump(mode="json")
        raw = upgraded(
            _as_dict(data), flows or default_registry(), require_digest=require_digest, keys=keys
        )
        snapshot = _validate(raw)
    if keys is not None or snapshot.digest is not None:
        content = canonical_content(snapshot)
        if keys is not None:
            if snapshot.seal is None:
                raise InvalidSeal("seal", "is missing: this service accepts sealed snapshots only")
            if not keys.verify(content, snapshot.seal):
                raise InvalidSeal("seal", "does not match: the snapshot was not issued here")
        if snapshot.digest is not None and snapshot.digest != hashlib.sha256(content).hexdigest():
            raise InvalidSnapshot(
                "digest", "does not match the content: the snapshot was changed after it was taken"
            )
    if snapshot.digest is None and require_digest:
        raise InvalidSnapshot("digest", "is missing: the snapshot was not written here")
    return snapshot


def replay_snapshot(snapshot: SessionSnapshot, flows: FlowRegistry) -> Session:
    """The session the snapshot's inputs produce on its flow, refusing any field that differs."""
    engine = engine_for(_flow_of(snapshot, flows))
    if snapshot.is_minimal:
        return restore_four_field(engine, snapshot)
    s = replay(
        engine,
        snapshot.intention,
        snapshot.steps,
        snapshot.answered_by,
        snapshot.principals,
        snapshot.proofs,
        snapshot.owner,
    )
    for i, given in enumerate(snapshot.steps):
        if s.steps[i] != given:
            raise InvalidSnapshot(f"steps.{i}", "is not in the normalised form a step records")
    check_derived(snapshot, derived_fields(s))
    return s


def check_derived(snapshot: SessionSnapshot, derived: dict[str, Any]) -> None:
    """InvalidSnapshot naming the first derived field (D38) the snapshot holds otherwise than
    the replay derived it (``derived``, in JSON form)."""
    for field, value in derived.items():
        held = getattr(snapshot, field)
        if field == "trace":
            held = [trace_object(t.turn, t.trigger, t.source, t.dest, t.guards) for t in held]
        elif field == "answered_questions":
            # The order answers were recorded in within one step carries no meaning (D37).
            held, value = sorted(held), sorted(value)
        elif type(held) is tuple:
            held = list(held)
        if held != value:
            raise InvalidSnapshot(
                field, f"is {_short(held)}, but the session's inputs give {_short(value)}"
            )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _flow_of(snapshot: SessionSnapshot, flows: FlowRegistry) -> FlowData:
    """C10: the registered flow the snapshot names by fingerprint (the current one if none), as
    the plain data its engine runs on."""
    fingerprint = snapshot.flow_fingerprint
    if fingerprint is None:
        if snapshot.flow is not None and snapshot.flow != flows.current_data.name:
            raise SnapshotFlowMismatch(
                "flow", f"is {snapshot.flow!r}, but no fingerprint says which version of it"
            )
        return flows.current_data
    flow = flows.get_data(fingerprint)
    if flow is None:
        raise SnapshotFlowMismatch(
            "flow_fingerprint", flows.unregistered(fingerprint, snapshot.flow)
        )
    return flow


def _as_dict(data: object) -> dict[str, Any]:
    if isinstance(data, str | bytes | bytearray):
        if len(data) > MAX_SNAPSHOT_BYTES:
            raise InvalidSnapshot(
                "snapshot", f"is {len(data)} bytes; the limit is {MAX_SNAPSHOT_BYTES}"
            )
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise InvalidSnapshot("snapshot", f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidSnapshot("snapshot", f"must be a JSON object, not {type(data).__name__}")
    return data


def _validate(data: dict[str, Any]) -> SessionSnapshot:
    try:
        return SessionSnapshot.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        unknown = [_dotted(e["loc"]) for e in errors if e["type"] == "extra_forbidden"]
        if unknown:
            raise InvalidSnapshot(unknown[0], "unknown key(s): " + ", ".join(unknown)) from None
        error = errors[0]
        raise InvalidSnapshot(_dotted(error["loc"]) or "snapshot", error["msg"]) from None
    except RecursionError:
        raise InvalidSnapshot("snapshot", "is nested too deeply") from None


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)
