"""Restoring a snapshot (C9): the fast path first, the full path for anything it leaves.

The fast path restores a full snapshot in JSON text of the current version, with no passkey
proof, from its parsed JSON without building a SessionSnapshot (D173) and without importing
pydantic (the command line's restore, issue 32). It checks what the full path (``restore.py``)
checks, on the parsed JSON itself, and answers None for anything else or anything in doubt (a
passkey proof among them), so the full path decides and names what is wrong.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Final

from preflight_fsm.answered_by import SOURCES
from preflight_fsm.engine import engine_for
from preflight_fsm.errors import InvalidSnapshot
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.principal import MAX_PRINCIPAL
from preflight_fsm.session import Session
from preflight_fsm.sizes import MAX_ANSWERS, MAX_IDS, MAX_STEPS, MAX_TEXT, MAX_VALUE
from preflight_fsm.snapshot.json_form import (
    SCHEMA_VERSION,
    SIGNED_FIELDS,
    parsed_json,
    signed_json,
)
from preflight_fsm.snapshot.replay import replay
from preflight_fsm.snapshot.seal import SealKeys
from preflight_fsm.snapshot.write import derived_fields

if TYPE_CHECKING:
    from preflight_fsm.snapshot.model import SessionSnapshot

__all__ = ["restore_session", "restored_json"]


def restore_session(
    data: SessionSnapshot | str | bytes | dict[str, Any],
    flows: FlowRegistry,
    *,
    require_digest: bool = False,
    keys: SealKeys | None = None,
) -> Session:
    """The session ``data`` restores to (:func:`restored_json`, else ``restore.py``'s
    ``parse_snapshot`` then ``replay_snapshot``), or the InvalidSnapshot (InvalidSeal, ...)
    naming what is wrong (C9, C10, C11)."""
    session = restored_json(data, flows, require_digest, keys)
    if session is None:
        # The full path validates with the pydantic model: imported only for what the fast path
        # left, so a command that restores its own snapshots never imports pydantic (issue 32).
        from preflight_fsm.snapshot.restore import parse_snapshot, replay_snapshot

        parsed = parse_snapshot(data, flows, require_digest=require_digest, keys=keys)
        session = replay_snapshot(parsed, flows)
    return session


_UNDERIVED: Final = (*SIGNED_FIELDS, "digest", "seal")
_TEXT: Final = frozenset((str, type(None)))  # a step's values: text, or null for blank


def restored_json(
    data: object, flows: FlowRegistry, require_digest: bool, keys: SealKeys | None
) -> Session | None:
    """The session a full snapshot in JSON text of this schema version restores to, checked as
    the full path checks it (structure, digest, seal, replay with each step's answered_by,
    every derived field) but on the
    parsed JSON itself, without building a :class:`SessionSnapshot`; None for anything else or
    anything in doubt, and the full path (``restore.py``) decides and
    names what is wrong. It accepts only what the full path accepts, into the same session
    (``tests/test_properties.py`` compares both on mutants, ``tests/test_snapshot.py`` case by
    case). Measured in docs/performance.md (D173)."""
    # No text longer than MAX_VALUE holds a string longer than it: decoding JSON never
    # lengthens a string, so the long texts' limits need no check of their own below.
    if (type(data) is not str and type(data) is not bytes) or len(data) > MAX_VALUE:
        return None
    try:
        raw = parsed_json(data)
    except ValueError:  # not JSON, nested too deeply, or a lone surrogate
        return None
    if type(raw) is not dict or raw.get("state") is None:
        return None  # not an object, or Preflights' four-field form
    # The inputs, as strictly as the model takes them: the replay reads them. A field left out
    # (its default) takes the full path, which applies it.
    try:
        intention = raw["intention"]
        fingerprint = raw["flow_fingerprint"]
        version = raw["schema_version"]
        steps = raw["steps"]
        answered_by = raw["answered_by"]
        principals = raw["principals"]
        proofs = raw["proofs"]
        owner = raw["owner"]
        digest = raw["digest"]
        seal = raw["seal"]
    except KeyError:
        return None
    if not (
        type(intention) is str
        and type(fingerprint) is str
        and len(fingerprint) <= MAX_TEXT
        and type(version) is int
        and version == SCHEMA_VERSION
        and type(steps) is list
        and len(steps) <= MAX_STEPS
        and type(answered_by) is list
        and len(answered_by) == len(steps)
        and _known(answered_by)
        and (owner is None or (type(owner) is str and len(owner) <= MAX_PRINCIPAL))
        and (digest is None or (type(digest) is str and len(digest) <= MAX_TEXT))
        and (seal is None or (type(seal) is str and len(seal) <= MAX_TEXT))
    ):
        return None
    # One null per step in both (most sessions: unauthenticated, unsigned): two list compares. A
    # passkey proof is a model of its own (its parts' limits, the person's name): the full path
    # validates it.
    nulls = [None] * len(steps)
    unsigned = principals == nulls and proofs == nulls
    if not unsigned and (proofs != nulls or not _principals_fit(principals, len(steps))):
        return None
    for step in steps:  # each step's answers: short keys, text or null values
        if type(step) is not dict or not _fit(step) or not set(map(type, step.values())) <= _TEXT:
            return None
    if digest is None and require_digest:
        return None
    if keys is not None or digest is not None:
        content = signed_json(
            answered_by, fingerprint, intention, owner, principals, proofs, version, steps
        )
        if keys is not None and (seal is None or not keys.verify(content, seal)):
            return None
        if digest is not None and digest != hashlib.sha256(content).hexdigest():
            return None
    flow = flows.get_data(fingerprint)
    if flow is None:
        return None
    try:
        s = replay(
            engine_for(flow),
            intention,
            steps,
            answered_by,
            None if unsigned else principals,
            None if unsigned else proofs,
            owner,
        )
    except InvalidSnapshot:
        return None
    return s if s.steps == tuple(steps) and _derives(raw, derived_fields(s)) else None


def _known(sources: list[Any]) -> bool:
    """Every entry a known ``answered_by`` source (a JSON array or object is none)."""
    try:
        return SOURCES.issuperset(sources)
    except TypeError:  # an unhashable entry: an array or an object
        return False


def _principals_fit(principals: object, count: int) -> bool:
    """A list of one entry per step, each null or text within its limit (replay checks the
    rest)."""
    return (
        type(principals) is list
        and len(principals) == count
        and all(p is None or (type(p) is str and len(p) <= MAX_PRINCIPAL) for p in principals)
    )


def _fit(texts: Collection[str]) -> bool:
    """Every text at most MAX_TEXT characters; their total is the cheap test that suffices."""
    return len("".join(texts)) <= MAX_TEXT or max(map(len, texts)) <= MAX_TEXT


def _derives(raw: dict[str, Any], derived: dict[str, Any]) -> bool:
    """True when the JSON object ``raw``, which holds every underived field (``_UNDERIVED``:
    the caller read each), holds every derived one and nothing else, each, type for type, what
    the replay derived (``derived``, from :func:`derived_fields`) and within the model's limits;
    ``replay.check_derived`` names the first that is not."""
    # Each derived field present and equal (answered_questions in the very order the session
    # recorded them), and no field more: anything else takes the full path, which applies the
    # defaults and compares answered_questions without order (D37). One items-subset test in C
    # and a count, instead of copying the underived fields over for a whole-dict comparison.
    if len(raw) != len(derived) + len(_UNDERIVED) or not derived.items() <= raw.items():
        return False
    if type(raw["turn"]) is not int:  # JSON's true and 1.0 equal 1
        return False
    for step in raw["trace"]:
        if type(step["turn"]) is not int:
            return False
    # The limits what a replay derives can exceed: ids and names are the flow's, of any
    # length, and a flow may have many. The turn cannot (one opens per step, steps are at
    # most MAX_STEPS), nor can the trace's guards (the table's, tests/test_snapshot.py).
    asked, answered, missing = (
        raw["asked_questions"],
        raw["answered_questions"],
        raw["missing_info"],
    )
    names = (derived["flow"], derived["category"] or "", derived["other_for"] or "")
    return (
        len(asked) <= MAX_IDS
        and len(answered) <= MAX_IDS
        and len(raw["trace"]) <= MAX_IDS
        and len(raw["answers"]) <= MAX_ANSWERS
        and _fit((*asked, *answered, *missing, *names))
    )
