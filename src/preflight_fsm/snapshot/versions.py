"""Older snapshot schema versions (C9): checked as they were written, then migrated.

A snapshot of an older version is checked against its own digest and seal, over the content
*that version* signed, before any migration touches it; the migrated snapshot then gets a digest
(and, under a seal key, a seal) of its own. A migration can drop or rebuild fields without
opening a way around the digest: an edited old snapshot is refused as written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pydantic_core

from preflight_fsm.errors import InvalidSeal, InvalidSnapshot, SnapshotVersionError
from preflight_fsm.flow import OTHER_OPTION, OTHER_SUFFIX
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.snapshot.model import SCHEMA_VERSION, canonical
from preflight_fsm.snapshot.seal import SealKeys
from preflight_fsm.states import NEED_CATEGORY, NEED_PRIMARY_FIELD

__all__ = ["MIGRATIONS", "SIGNED_CONTENT", "SchemaMigration", "schema_version_of", "upgraded"]

SchemaMigration = Callable[[dict[str, Any], FlowRegistry], dict[str, Any]]
"""Turns a version-n snapshot dict into version n+1, given the registered flows."""

MIGRATIONS: dict[int, SchemaMigration] = {}
"""``MIGRATIONS[n]`` turns a version-n snapshot dict into version n+1; applied in order, before
validation. Filled in below."""

SIGNED_CONTENT: dict[int, Callable[[dict[str, Any]], bytes]] = {}
"""``SIGNED_CONTENT[n]`` is the canonical content a version-n digest and seal cover. Filled in
below, one entry for each version in MIGRATIONS."""


def schema_version_of(data: dict[str, Any]) -> int:
    """The snapshot's schema version (the current one when absent), or SnapshotVersionError."""
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
    return version


def upgraded(
    data: dict[str, Any],
    flows: FlowRegistry,
    *,
    require_digest: bool = False,
    keys: SealKeys | None = None,
) -> dict[str, Any]:
    """``data`` in the current schema version; an older one is checked as it was written (digest,
    seal under ``keys``) first, and the result carries a digest (and seal) of its own."""
    version = schema_version_of(data)
    if version == SCHEMA_VERSION:
        return data
    _check_as_written(data, version, require_digest, keys)
    digested = data.get("digest") is not None  # and checked, as was the seal under keys
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](dict(data), flows)
        version += 1
        data["schema_version"] = version
    data.pop("digest", None)
    data.pop("seal", None)
    if digested or keys is not None:
        try:
            content = canonical(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            return data  # not a full snapshot after all: validation names what is wrong
        if digested:
            data["digest"] = hashlib.sha256(content).hexdigest()
        if keys is not None:
            data["seal"] = keys.seal(content)
    return data


def _check_as_written(
    data: dict[str, Any], version: int, require_digest: bool, keys: SealKeys | None
) -> None:
    digest, seal = data.get("digest"), data.get("seal")
    if digest is None and keys is None:
        if require_digest:
            raise InvalidSnapshot("digest", "is missing: the snapshot was not written here")
        return
    if (digest is not None and type(digest) is not str) or (
        seal is not None and type(seal) is not str
    ):
        raise InvalidSnapshot("digest" if type(digest) is not str else "seal", "must be text")
    try:
        content = SIGNED_CONTENT[version](data)
    except (TypeError, ValueError, RecursionError, AttributeError):
        raise InvalidSnapshot("snapshot", "cannot be put in canonical form") from None
    if keys is not None:
        if seal is None:
            raise InvalidSeal("seal", "is missing: this service accepts sealed snapshots only")
        if not keys.verify(content, seal):
            raise InvalidSeal("seal", "does not match: the snapshot was not issued here")
    if digest is not None and digest != hashlib.sha256(content).hexdigest():
        raise InvalidSnapshot(
            "digest", "does not match the content: the snapshot was changed after it was taken"
        )
    if digest is None and require_digest:
        raise InvalidSnapshot("digest", "is missing: the snapshot was not written here")


def _v1_content(data: dict[str, Any]) -> bytes:
    """Version 1 signed every field but the digest and the seal (D21)."""
    content = {k: v for k, v in data.items() if k not in ("digest", "seal")}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _v1_to_v2(data: dict[str, Any], flows: FlowRegistry) -> dict[str, Any]:
    """Version 1 held no inputs: rebuild each step's answers from its trace (D37).

    Each transition a step took says which question it moved on from: the category's, the
    field's, or the text owed for "Other (specify)"; the step gets the recorded answer to it (and
    its text where the transition needed one), or a blank where it went to NoPatch unanswered.
    Answers no transition consumed (volunteered fields) go to the last step. Replay then checks
    the result against everything version 1 derived, as for any snapshot.
    """
    answers, trace = data.get("answers"), data.get("trace")
    flow = flows.get(str(data.get("flow_fingerprint"))) if data.get("state") else None
    if flow is None or not isinstance(answers, dict) or not isinstance(trace, list):
        return data  # a four-field form, or one that restoring refuses naming what is wrong
    cq = flow.category_question.id
    field = next((c.question.id for c in flow.categories if c.name == data.get("category")), None)
    steps: dict[int, dict[str, Any]] = {}
    owed = cq  # the question whose text NeedOther waits for
    for t in trace:
        if (
            not isinstance(t, dict)
            or t.get("trigger") != "answer"
            or type(t.get("turn")) is not int
        ):
            continue
        given = steps.setdefault(t["turn"], {})
        source, dest = t.get("source"), t.get("dest")
        key = {NEED_CATEGORY: cq, NEED_PRIMARY_FIELD: field}.get(str(source), owed)
        if key is None:
            return data
        if source == "NeedOther":
            key += OTHER_SUFFIX
        elif dest == "NeedOther":
            owed = key
        given[key] = answers.get(key)
        text = key + OTHER_SUFFIX
        if dest != "NeedOther" and answers.get(key) == OTHER_OPTION and text in answers:
            given[text] = answers[text]
    ordered = [steps[k] for k in sorted(steps)]
    rest = {k: v for k, v in answers.items() if not any(k in g for g in ordered)}
    if ordered:
        ordered[-1].update(rest)
    data["steps"] = ordered
    return data


MIGRATIONS[1] = _v1_to_v2
SIGNED_CONTENT[1] = _v1_content


def _v2_content(data: dict[str, Any]) -> bytes:
    """Version 2 signed its inputs without ``answered_by``: ``model.canonical`` as it was then."""
    return pydantic_core.to_json(
        {
            "flow_fingerprint": data.get("flow_fingerprint"),
            "intention": data.get("intention"),
            "schema_version": data.get("schema_version"),
            "steps": _sorted_steps(data),
        }
    )


def _sorted_steps(data: dict[str, Any]) -> list[Any]:
    """Each step's answers with their keys sorted, as versions 2 and 3 signed them."""
    return [step if len(step) < 2 else dict(sorted(step.items())) for step in data.get("steps", [])]


def _v2_to_v3(data: dict[str, Any], flows: FlowRegistry) -> dict[str, Any]:
    """Version 2 did not record who supplied a step's answers: every step is ``unknown``."""
    _refuse_later_fields(data, 2, ("answered_by",))
    steps = data.get("steps")
    if isinstance(steps, list):
        data["answered_by"] = ["unknown"] * len(steps)
    return data


MIGRATIONS[2] = _v2_to_v3
SIGNED_CONTENT[2] = _v2_content


def _v3_content(data: dict[str, Any]) -> bytes:
    """Version 3 signed ``answered_by`` with its inputs, without principals, proofs or owner."""
    return pydantic_core.to_json(
        {
            "answered_by": data.get("answered_by"),
            "flow_fingerprint": data.get("flow_fingerprint"),
            "intention": data.get("intention"),
            "schema_version": data.get("schema_version"),
            "steps": _sorted_steps(data),
        }
    )


def _v3_to_v4(data: dict[str, Any], flows: FlowRegistry) -> dict[str, Any]:
    """Version 3 recorded no principal, proof or owner: every step's are null, and so is the
    owner (nobody authenticated was recorded)."""
    _refuse_later_fields(data, 3, ("owner", "principals", "proofs"))
    steps = data.get("steps")
    if isinstance(steps, list):
        data["principals"] = [None] * len(steps)
        data["proofs"] = [None] * len(steps)
    if data.get("state") is not None:  # a full snapshot; the four-field form holds no owner
        data["owner"] = None
    return data


def _refuse_later_fields(data: dict[str, Any], version: int, fields: tuple[str, ...]) -> None:
    """InvalidSnapshot for a field version ``version`` did not have: its digest and seal do not
    cover it, so a migration that kept it would sign what nobody signed."""
    for field in fields:
        if field in data:
            raise InvalidSnapshot(
                field, f"is not a field of schema version {version}; the snapshot was edited"
            )


MIGRATIONS[3] = _v3_to_v4
SIGNED_CONTENT[3] = _v3_content
