"""Versioned, tamper-refusing session snapshots (C9).

A snapshot is untrusted input. :func:`parse_snapshot` turns JSON, a dict or a model into a
:class:`SessionSnapshot`, applying migrations first and refusing anything malformed with
:class:`InvalidSnapshot` naming the field. Whether its fields agree with the flow and with each
other is checked when a machine is restored from it (``ClarificationMachine.from_snapshot``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from preflight_fsm.errors import InvalidSnapshot, SnapshotVersionError
from preflight_fsm.turn import StateName

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SessionSnapshot",
    "TraceStep",
    "parse_snapshot",
]

SCHEMA_VERSION = 1
"""The snapshot format this version writes; older ones are migrated through MIGRATIONS."""

MAX_SNAPSHOT_BYTES = 256 * 1024
"""Larger JSON is refused before parsing: no legitimate session comes near it."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""``MIGRATIONS[n]`` turns a version-n snapshot dict into version n+1. Applied in order."""

_Id = Field(max_length=200)
_SHORT = 200


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class TraceStep(_Frozen):
    """One transition taken: during which step (0 = session start), from where, to where, why."""

    turn: int = Field(ge=0, le=100)
    trigger: Literal["start", "answer"]
    source: StateName
    dest: StateName
    guards: tuple[str, ...] = Field(default=(), max_length=8)


class SessionSnapshot(_Frozen):
    """Everything needed to restore a session exactly; Preflights' four fields come first.

    Only ``intention``, ``asked_questions``, ``answered_questions`` and ``missing_info`` are
    required: such a minimal snapshot restores to a position, not exactly (C9).
    """

    intention: str = Field(max_length=100_000)
    asked_questions: tuple[str, ...] = Field(max_length=64)
    answered_questions: tuple[str, ...] = Field(max_length=64)
    missing_info: tuple[str, ...] = Field(max_length=64)
    schema_version: int = SCHEMA_VERSION
    flow: str | None = Field(default=None, max_length=_SHORT)
    flow_fingerprint: str | None = Field(default=None, max_length=_SHORT)
    state: StateName | None = None
    category: str | None = Field(default=None, max_length=_SHORT)
    other_for: str | None = Field(default=None, max_length=_SHORT)
    answers: dict[str, str] = Field(default_factory=dict, max_length=256)
    turn: int | None = Field(default=None, ge=0, le=100)
    trace: tuple[TraceStep, ...] = Field(default=(), max_length=64)
    digest: str | None = Field(default=None, max_length=_SHORT)

    @property
    def is_minimal(self) -> bool:
        """True for Preflights' four-field form (no ``state``)."""
        return self.state is None

    def content_digest(self) -> str:
        """SHA-256 over every field but ``digest``, as canonical JSON."""
        return digest_of(self.__dict__)


def digest_of(fields: Mapping[str, Any]) -> str:
    """The digest of the snapshot whose fields (all but ``digest``) are ``fields``, as a model
    holds them: SHA-256 of ``json.dumps(model_dump(mode="json", exclude={"digest"}),
    sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` in UTF-8.

    ``ClarificationMachine.snapshot`` digests its fields before building the model. pydantic-core
    writes the same bytes as that ``json.dumps`` (the same escapes, checked for every code point,
    as key and as value) about five times faster; anything it refuses (a lone surrogate) takes
    the standard library's path, which behaves as it always did.
    """
    content = _canonical_content(fields)
    try:
        canonical = pydantic_core.to_json(content)
    except (pydantic_core.PydanticSerializationError, TypeError, ValueError):
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        canonical = text.encode()
    return hashlib.sha256(canonical).hexdigest()


def _canonical_content(fields: Mapping[str, Any]) -> dict[str, Any]:
    """What ``model_dump(mode="json")`` gives for ``fields``, with every object's keys sorted.

    The objects are the snapshot, ``answers`` and each ``trace`` step (a TraceStep here); tuples
    stay tuples, which JSON writes as arrays. A new field holding an object must be handled here
    too, or digests stop being the canonical form above (they would still verify, being
    computed the same way on both sides).
    """
    content = {key: fields[key] for key in _DIGESTED_FIELDS}
    answers = content["answers"]
    if answers:
        content["answers"] = dict(sorted(answers.items()))
    trace = content["trace"]
    if trace:
        content["trace"] = [
            {key: getattr(step, key) for key in _SORTED_STEP_FIELDS} for step in trace
        ]
    return content


_DIGESTED_FIELDS = tuple(sorted(name for name in SessionSnapshot.model_fields if name != "digest"))
_SORTED_STEP_FIELDS = tuple(sorted(TraceStep.model_fields))


def parse_snapshot(
    data: SessionSnapshot | str | bytes | dict[str, Any], *, require_digest: bool = False
) -> SessionSnapshot:
    """A structurally valid snapshot, or InvalidSnapshot naming the offending field.

    ``require_digest`` refuses a snapshot without a digest (stores, which only hold snapshots
    this package wrote, so a missing digest means the row was rewritten).
    """
    if isinstance(data, SessionSnapshot):
        snapshot = data
    elif (current := _as_current(data)) is not None:
        snapshot = current
    else:
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
        snapshot = _validate(_migrate(data))
    if snapshot.digest is None and require_digest:
        raise InvalidSnapshot("digest", "is missing: the snapshot was not written here")
    if snapshot.digest is not None and snapshot.digest != snapshot.content_digest():
        raise InvalidSnapshot(
            "digest", "does not match the content: the snapshot was changed after it was taken"
        )
    return snapshot


def _migrate(data: dict[str, Any]) -> dict[str, Any]:
    version = data.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int:
        raise SnapshotVersionError(
            "schema_version", f"must be an integer, not {type(version).__name__}"
        )
    if not 1 <= version <= SCHEMA_VERSION:
        raise SnapshotVersionError(
            "schema_version",
            f"{version} is not supported; this version reads 1 to {SCHEMA_VERSION}",
        )
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](dict(data))
        version += 1
        data["schema_version"] = version
    return data


def _as_current(data: object) -> SessionSnapshot | None:
    """The snapshot JSON text ``data`` holds if it is valid as it stands in this version, else None.

    The common case, a snapshot this version wrote, in one pass of pydantic's JSON parser. Text
    it refuses, or of another schema version, returns None and takes the full path (parse,
    migrate, validate), which decides and reports exactly as it always has.
    """
    if not isinstance(data, str) or len(data) > MAX_SNAPSHOT_BYTES:
        return None
    try:
        snapshot = SessionSnapshot.model_validate_json(data, strict=True)
    except (ValidationError, RecursionError):
        return None
    return snapshot if snapshot.schema_version == SCHEMA_VERSION else None


def _validate(data: dict[str, Any]) -> SessionSnapshot:
    try:
        # Validated as strict JSON whatever it came as: arrays stand for tuples, and nothing is
        # coerced ("1" is no turn number, true is no integer).
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidSnapshot("snapshot", f"holds a value JSON cannot carry ({exc})") from None
    try:
        return SessionSnapshot.model_validate_json(text, strict=True)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "snapshot"
        if error["type"] == "extra_forbidden":
            unknown = [
                ".".join(str(p) for p in e["loc"])
                for e in exc.errors()
                if e["type"] == "extra_forbidden"
            ]
            raise InvalidSnapshot(unknown[0], "unknown key(s): " + ", ".join(unknown)) from None
        raise InvalidSnapshot(field, error["msg"]) from None
    except RecursionError:
        raise InvalidSnapshot("snapshot", "is nested too deeply") from None
