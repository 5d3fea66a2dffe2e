"""Snapshots (C9, C10, C11): a session is its inputs.

A snapshot holds the session's inputs (the flow's fingerprint, the intention and the answers
each accepted step took, as normalised) and, for readers, what they derive (state, category,
recorded answers, turn, trace). Restoring replays the inputs on the snapshot's flow and refuses
any derived field that differs from the replay, naming it: no edit of a snapshot, with or without
its digest, restores into a position its inputs do not produce.

Three guarantees, each from its own mechanism:
- the **digest** (SHA-256 of the canonical JSON) catches corruption: anyone can recompute it;
- **replay** makes a restored session exact: it is what its inputs produce, whatever else says;
- the **seal** (HMAC-SHA256 under a key, :class:`SealKeys`) proves this service issued it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from preflight_fsm.engine import Engine, engine_for
from preflight_fsm.errors import (
    InvalidAnswers,
    InvalidIntention,
    InvalidSeal,
    InvalidSnapshot,
    SessionFinished,
    SnapshotFlowMismatch,
    SnapshotVersionError,
)
from preflight_fsm.flow import OTHER_SUFFIX, Flow, FlowRegistry, default_registry
from preflight_fsm.guards import choice_key
from preflight_fsm.session import Session
from preflight_fsm.states import NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD, StateName
from preflight_fsm.turn import missing_info_of

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SEAL_KEYS_ENV",
    "SEAL_KEY_FILE_ENV",
    "Divergence",
    "SealKeys",
    "SessionSnapshot",
    "TraceStep",
    "migrate",
    "parse_snapshot",
    "replay",
    "restore",
    "restored",
    "snapshot_of",
    "trace_of",
]

SCHEMA_VERSION: Final = 2
"""The snapshot format this version writes; older ones are migrated through MIGRATIONS."""

MAX_SNAPSHOT_BYTES: Final = 256 * 1024
"""Larger JSON is refused before parsing: no legitimate session comes near it."""

_SHORT = 200
_Text = Annotated[StrictStr, Field(max_length=_SHORT)]
_Value = Annotated[StrictStr, Field(max_length=100_000)]


class _Frozen(BaseModel):
    # Lax only where JSON has no type of its own (arrays stand for tuples); every leaf is strict,
    # so "1" is no turn number and true no integer, from JSON text and from json.loads alike.
    model_config = ConfigDict(frozen=True, extra="forbid")


class TraceStep(_Frozen):
    """One transition taken: in which step (0 = the session's start), from where, to where, why."""

    turn: StrictInt = Field(ge=0, le=100)
    trigger: Literal["start", "answer"]
    source: StateName
    dest: StateName
    guards: tuple[_Text, ...] = Field(default=(), max_length=8)


class SessionSnapshot(_Frozen):
    """A session as data: Preflights' four fields first, then its inputs, then what they derive.

    Only ``intention``, ``asked_questions``, ``answered_questions`` and ``missing_info`` are
    required: such a minimal snapshot restores to the position it names (C9).
    """

    intention: _Value
    asked_questions: tuple[_Text, ...] = Field(max_length=64)
    answered_questions: tuple[_Text, ...] = Field(max_length=64)
    missing_info: tuple[_Text, ...] = Field(max_length=64)
    schema_version: StrictInt = SCHEMA_VERSION
    flow: _Text | None = None
    flow_fingerprint: _Text | None = None
    # The inputs: the answers each accepted step took, as normalised (null: given blank).
    steps: tuple[dict[_Text, _Value | None], ...] = Field(default=(), max_length=32)
    # What the inputs derive; restoring checks each against the replay.
    state: StateName | None = None
    category: _Text | None = None
    other_for: _Text | None = None
    answers: dict[_Text, _Value] = Field(default_factory=dict, max_length=256)
    turn: StrictInt | None = Field(default=None, ge=0, le=100)
    trace: tuple[TraceStep, ...] = Field(default=(), max_length=64)
    digest: _Text | None = None
    seal: _Text | None = None

    @property
    def is_minimal(self) -> bool:
        """True for Preflights' four-field form (no ``state``)."""
        return self.state is None

    def content_digest(self) -> str:
        """SHA-256 of the snapshot's inputs as canonical JSON (what they derive is checked by
        replaying them, D48)."""
        return hashlib.sha256(canonical_content(self)).hexdigest()


_SIGNED_FIELDS: Final = ("flow_fingerprint", "intention", "schema_version", "steps")
"""What the digest and the seal cover: the session's inputs (C9), keys in sorted order. Every
other field is what they derive, and restoring refuses any of it that differs from the replay
(D48): signing the inputs signs the whole snapshot."""


def canonical_content(snapshot: SessionSnapshot) -> bytes:
    """The inputs of ``snapshot`` as canonical JSON: what its digest and seal cover."""
    return _canonical({name: getattr(snapshot, name) for name in _SIGNED_FIELDS})


def _trace_object(
    turn: int, trigger: str, source: str, dest: str, guards: tuple[str, ...]
) -> dict[str, Any]:
    """One trace step as the JSON object a snapshot holds."""
    return {
        "turn": turn,
        "trigger": trigger,
        "source": source,
        "dest": dest,
        "guards": list(guards),
    }


def _canonical(content: Mapping[str, Any]) -> bytes:
    """``json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` in UTF-8
    for the signed fields of ``content``, written by pydantic-core: the same bytes
    (``tests/test_snapshot.py`` pins it) at a fraction of the cost (docs/performance.md). Only
    each step's answers need their keys sorted here (one answer is in order as it stands); a new
    signed field holding an object must be sorted too."""
    return pydantic_core.to_json(
        {
            "flow_fingerprint": content["flow_fingerprint"],
            "intention": content["intention"],
            "schema_version": content["schema_version"],
            "steps": [
                step if len(step) < 2 else dict(sorted(step.items())) for step in content["steps"]
            ],
        }
    )


# -- seals (C11) --------------------------------------------------------------------------------

SEAL_KEYS_ENV: Final = "PREFLIGHT_FSM_SEAL_KEYS"
"""Environment variable holding seal keys, comma-separated; the first seals."""
SEAL_KEY_FILE_ENV: Final = "PREFLIGHT_FSM_SEAL_KEY_FILE"
"""Environment variable naming a key file: one key per line, the first seals."""
MIN_KEY_BYTES: Final = 32


@dataclass(frozen=True, slots=True)
class SealKeys:
    """HMAC-SHA256 keys (C11): snapshots are sealed with the first and accepted under any.

    Give several to rotate: put the new key first, keep the old ones until every snapshot sealed
    with them has been rewritten or has expired.
    """

    keys: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("no seal key given; generate one with: preflight-fsm seal-key")
        short = [i + 1 for i, key in enumerate(self.keys) if len(key) < MIN_KEY_BYTES]
        if short:
            raise ValueError(
                f"seal key {', '.join(map(str, short))} is shorter than {MIN_KEY_BYTES} bytes; "
                "generate one with: preflight-fsm seal-key"
            )

    def __repr__(self) -> str:  # never print key material
        return f"SealKeys(<{len(self.keys)} key(s)>)"

    @classmethod
    def from_text(cls, text: str) -> SealKeys:
        """Keys separated by commas or lines (blank lines and ``#`` comments skipped)."""
        keys = [
            part.strip()
            for line in text.splitlines()
            if not line.strip().startswith("#")
            for part in line.split(",")
        ]
        return cls(tuple(key.encode() for key in keys if key))

    @classmethod
    def from_file(cls, path: str | Path) -> SealKeys:
        """Keys from a key file (one per line, the first seals)."""
        try:
            return cls.from_text(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read the seal key file {path}: {exc}") from None

    @classmethod
    def from_environment(
        cls, key_file: str | Path | None = None, env: Mapping[str, str] = os.environ
    ) -> SealKeys | None:
        """Keys from ``key_file``, else from the environment (file variable, then keys), or None."""
        path = key_file or env.get(SEAL_KEY_FILE_ENV)
        if path:
            return cls.from_file(path)
        text = env.get(SEAL_KEYS_ENV)
        return cls.from_text(text) if text else None

    def seal(self, content: bytes) -> str:
        """The seal of ``content`` under the first key."""
        return hmac.new(self.keys[0], content, hashlib.sha256).hexdigest()

    def verify(self, content: bytes, seal: str) -> bool:
        """True when ``seal`` is the seal of ``content`` under any of the keys."""
        return any(
            hmac.compare_digest(hmac.new(key, content, hashlib.sha256).hexdigest(), seal)
            for key in self.keys
        )


# -- writing ------------------------------------------------------------------------------------


def snapshot_of(s: Session, seal: SealKeys | None = None) -> SessionSnapshot:
    """The full snapshot of a session, with its digest (and its seal when keys are given)."""
    content = derived_fields(s)
    content.update(
        intention=s.intention,
        schema_version=SCHEMA_VERSION,
        flow_fingerprint=s.engine.flow.fingerprint,
        steps=s.steps,
    )
    canonical = _canonical(content)
    content["digest"] = hashlib.sha256(canonical).hexdigest()
    content["seal"] = seal.seal(canonical) if seal is not None else None
    return SessionSnapshot.model_validate(content)


def trace_of(s: Session) -> tuple[TraceStep, ...]:
    """Every transition the session took, in order."""
    return tuple(
        TraceStep(turn=turn, trigger=e.trigger, source=e.source, dest=e.dest, guards=e.guards)
        for turn, e in s.trace
    )


def derived_fields(s: Session) -> dict[str, Any]:
    """What a session's inputs derive, in the JSON form a snapshot holds it (lists for arrays,
    a dict per trace step). The lists and the answers are the session's own: read, never
    change them."""
    engine = s.engine
    position = s.position
    # NeedOther names the choice question whose "Other (specify)" text it waits for.
    other_for = choice_key(s) if position.state == NEED_OTHER else None
    return {
        "flow": engine.flow.name,
        "state": position.state,
        "category": position.category,
        "other_for": other_for,
        "turn": s.turn,
        "answers": s.answers,
        "answered_questions": list(s.answers),
        "asked_questions": s.asked,
        "missing_info": list(missing_info_of(s)),
        "trace": [
            _trace_object(turn, e.trigger, e.source, e.dest, e.guards) for turn, e in s.trace
        ],
    }


# -- reading ------------------------------------------------------------------------------------

Migration = Callable[[dict[str, Any], FlowRegistry], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""``MIGRATIONS[n]`` turns a version-n snapshot dict into version n+1, given the registered flows;
applied in order, before validation. Filled in below."""


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
    if isinstance(data, SessionSnapshot):
        snapshot = data
    else:
        snapshot = _validate(_migrate(_as_dict(data), flows or default_registry()))
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


def restored(
    data: SessionSnapshot | str | bytes | dict[str, Any],
    flows: FlowRegistry,
    *,
    require_digest: bool = False,
    keys: SealKeys | None = None,
) -> Session:
    """:func:`parse_snapshot` then :func:`restore`: the session ``data`` restores to, or the
    InvalidSnapshot (InvalidSeal, ...) naming what is wrong (C9, C10, C11)."""
    session = _restored_json(data, flows, require_digest, keys)
    if session is None:
        parsed = parse_snapshot(data, flows, require_digest=require_digest, keys=keys)
        session = restore(parsed, flows)
    return session


_LONG = 100_000  # _Value's limit
_MAX_STEPS = 32
_MAX_IDS = 64  # asked_questions, answered_questions, missing_info, trace
_MAX_ANSWERS = 256
_UNDERIVED: Final = (*_SIGNED_FIELDS, "digest", "seal")
_TEXT: Final = frozenset((str, type(None)))  # a step's values: text, or null for blank


def _restored_json(
    data: object, flows: FlowRegistry, require_digest: bool, keys: SealKeys | None
) -> Session | None:
    """The session a full snapshot in JSON text of this schema version restores to, checked as
    the full path checks it (structure, digest, seal, replay, every derived field) but on the
    parsed JSON itself, without building a :class:`SessionSnapshot`; None for anything else or
    anything in doubt, and the full path (:func:`parse_snapshot`, :func:`restore`) decides and
    names what is wrong. It accepts only what the full path accepts, into the same session
    (``tests/test_properties.py`` compares both on mutants, ``tests/test_snapshot.py`` case by
    case). Measured in docs/performance.md (D173)."""
    # No text longer than _Value's limit holds a string longer than it: decoding JSON never
    # lengthens a string, so the long texts' limits need no check of their own below.
    if (type(data) is not str and type(data) is not bytes) or len(data) > _LONG:
        return None
    try:
        raw = pydantic_core.from_json(data, cache_strings="keys")
    except ValueError:  # not JSON, or nested too deeply
        return None
    if type(raw) is not dict or raw.get("state") is None:
        return None  # not an object, or Preflights' four-field form
    # The inputs, as strictly as the model takes them: the replay reads them.
    intention = raw.get("intention")
    fingerprint = raw.get("flow_fingerprint")
    version = raw.get("schema_version", SCHEMA_VERSION)
    steps = raw.get("steps", [])
    digest = raw.get("digest")
    seal = raw.get("seal")
    if not (
        type(intention) is str
        and type(fingerprint) is str
        and len(fingerprint) <= _SHORT
        and type(version) is int
        and version == SCHEMA_VERSION
        and type(steps) is list
        and len(steps) <= _MAX_STEPS
        and (digest is None or (type(digest) is str and len(digest) <= _SHORT))
        and (seal is None or (type(seal) is str and len(seal) <= _SHORT))
    ):
        return None
    for step in steps:  # each step's answers: short keys, text or null values
        if type(step) is not dict or not _fit(step) or not set(map(type, step.values())) <= _TEXT:
            return None
    if digest is None and require_digest:
        return None
    if keys is not None or digest is not None:
        content = _canonical(
            {
                "flow_fingerprint": fingerprint,
                "intention": intention,
                "schema_version": version,
                "steps": steps,
            }
        )
        if keys is not None and (seal is None or not keys.verify(content, seal)):
            return None
        if digest is not None and digest != hashlib.sha256(content).hexdigest():
            return None
    flow = flows.get(fingerprint)
    if flow is None:
        return None
    try:
        s = replay(engine_for(flow), intention, steps)
    except InvalidSnapshot:
        return None
    return s if s.steps == steps and _derives(raw, derived_fields(s)) else None


def _fit(texts: Collection[str]) -> bool:
    """Every text at most _SHORT characters; their total is the cheap test that suffices."""
    return len("".join(texts)) <= _SHORT or max(map(len, texts)) <= _SHORT


def _derives(raw: dict[str, Any], derived: dict[str, Any]) -> bool:
    """True when the JSON object ``raw`` holds every field, and each derived one is, type for
    type, what the replay derived (``derived``, from :func:`derived_fields`) and within the
    model's limits; :func:`_check_derived` names the first that is not."""
    # Every field present, none unknown, each derived one equal (answered_questions in the very
    # order the session recorded them): anything else takes the full path, which applies the
    # defaults and compares answered_questions without order (D37).
    derived.update(zip(_UNDERIVED, map(raw.get, _UNDERIVED), strict=True))
    if raw != derived or type(raw["turn"]) is not int:  # JSON's true and 1.0 equal 1
        return False
    for step in raw["trace"]:
        if type(step["turn"]) is not int:
            return False
    # The limits what a replay derives can exceed: ids and names are the flow's, of any
    # length, and a flow may have many. The turn cannot (one opens per step, steps are at
    # most _MAX_STEPS), nor can the trace's guards (the table's, tests/test_snapshot.py).
    asked, answered, missing = (
        raw["asked_questions"],
        raw["answered_questions"],
        raw["missing_info"],
    )
    names = (derived["flow"], derived["category"] or "", derived["other_for"] or "")
    return (
        len(asked) <= _MAX_IDS
        and len(answered) <= _MAX_IDS
        and len(raw["trace"]) <= _MAX_IDS
        and len(raw["answers"]) <= _MAX_ANSWERS
        and _fit((*asked, *answered, *missing, *names))
    )


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


def _migrate(data: dict[str, Any], flows: FlowRegistry) -> dict[str, Any]:
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
        data = MIGRATIONS[version](dict(data), flows)
        version += 1
        data["schema_version"] = version
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


# -- restoring: replay (C9) ---------------------------------------------------------------------


def restore(snapshot: SessionSnapshot, flows: FlowRegistry) -> Session:
    """The session the snapshot's inputs produce on its flow, refusing any field that differs."""
    engine = engine_for(_flow_of(snapshot, flows))
    if snapshot.is_minimal:
        return _restore_minimal(engine, snapshot)
    s = replay(engine, snapshot.intention, snapshot.steps)
    for i, given in enumerate(snapshot.steps):
        if s.steps[i] != given:
            raise InvalidSnapshot(f"steps.{i}", "is not in the normalised form a step records")
    _check_derived(snapshot, derived_fields(s))
    return s


def replay(engine: Engine, intention: str, steps: Iterable[Mapping[str, Any]]) -> Session:
    """A new session on ``engine`` stepped through ``steps``; InvalidSnapshot names what fails."""
    try:
        s = engine.begin(intention)
    except InvalidIntention as exc:
        raise InvalidSnapshot("intention", str(exc)) from None
    if s.intention != intention:
        raise InvalidSnapshot(
            "intention", "is not in its cleaned form (stripped, NFC, LF newlines)"
        )
    for i, given in enumerate(steps):
        try:
            s = engine.step(s, given)
        except (InvalidAnswers, SessionFinished) as exc:
            raise InvalidSnapshot(f"steps.{i}", f"is refused on replay: {exc}") from None
    return s


def _check_derived(snapshot: SessionSnapshot, derived: dict[str, Any]) -> None:
    """InvalidSnapshot naming the first derived field (D38) the snapshot holds otherwise than
    the replay derived it (``derived``, in JSON form)."""
    for field, value in derived.items():
        held = getattr(snapshot, field)
        if field == "trace":
            held = [_trace_object(t.turn, t.trigger, t.source, t.dest, t.guards) for t in held]
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


def _flow_of(snapshot: SessionSnapshot, flows: FlowRegistry) -> Flow:
    """C10: the registered flow the snapshot names by fingerprint (the current one if none)."""
    fingerprint = snapshot.flow_fingerprint
    if fingerprint is None:
        if snapshot.flow is not None and snapshot.flow != flows.current.name:
            raise SnapshotFlowMismatch(
                "flow", f"is {snapshot.flow!r}, but no fingerprint says which version of it"
            )
        return flows.current
    flow = flows.get(fingerprint)
    if flow is None:
        raise SnapshotFlowMismatch(
            "flow_fingerprint",
            f"{fingerprint!r} is not a registered flow; registered: {flows.describe()}. "
            "Register the flow the session started on (keep its file among the earlier "
            "versions) to finish it",
        )
    return flow


# -- moving a session to another flow (C10) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a session's inputs lead elsewhere on another flow: the first step that differs."""

    step: int  # 0: the session's start (the keyword shortcut), k: its k-th step
    field: str  # what differs: "state", "category", "missing_info", or "answers" (refused)
    before: str
    after: str

    def __str__(self) -> str:
        where = "at the start" if self.step == 0 else f"at step {self.step}"
        return f"{where}, {self.field} is {self.after} on the new flow instead of {self.before}"


def migrate(
    s: Session, target: Engine, *, force: bool = False
) -> tuple[Session | None, Divergence | None]:
    """``s``'s inputs replayed on ``target``: (the migrated session or None, the first divergence
    or None). A diverging session is migrated only with ``force``; a refused one never."""
    source = s.engine
    try:
        here, there = source.begin(s.intention), target.begin(s.intention)
    except InvalidIntention as exc:
        return None, Divergence(0, "intention", "accepted", f"refused ({exc})")
    first = _outcome_difference(0, here, there)
    for k, given in enumerate(s.steps, start=1):
        here = source.step(here, given)
        try:
            there = target.step(there, given)
        except (InvalidAnswers, SessionFinished) as exc:
            return None, Divergence(k, "answers", "accepted", f"refused ({exc})")
        first = first or _outcome_difference(k, here, there)
    if first is not None and not force:
        return None, first
    return there, first


def _outcome_difference(step: int, here: Session, there: Session) -> Divergence | None:
    for field, before, after in (
        ("state", here.position.state, there.position.state),
        ("category", here.position.category, there.position.category),
        ("missing_info", missing_info_of(here), missing_info_of(there)),
    ):
        if before != after:
            return Divergence(step, field, repr(before), repr(after))
    return None


# -- Preflights' four-field form (C9) --------------------------------------------------------------


def _restore_minimal(engine: Engine, snap: SessionSnapshot) -> Session:
    """The session at the position a minimal snapshot names, by inputs synthesised to reach it
    (D39): the category answer when the field is asked and the intention does not name it, and
    "Other (specify)" for the question whose text is owed."""
    for name in ("flow", "category", "other_for", "turn", "digest", "seal"):
        if getattr(snap, name) is not None:
            raise InvalidSnapshot(name, "is set but 'state' is not; a full snapshot needs both")
    for name in ("steps", "answers", "trace"):
        if getattr(snap, name):
            raise InvalidSnapshot(name, "is set but 'state' is not; a full snapshot needs both")
    if not snap.missing_info:
        raise InvalidSnapshot(
            "missing_info", "is empty: the session is complete and has no position to restore"
        )
    if len(snap.missing_info) > 1:
        raise InvalidSnapshot("missing_info", "holds more than one key; a session waits for one")
    known = engine.rules.known
    for field in ("asked_questions", "answered_questions"):
        strange = [q for q in getattr(snap, field) if q not in known]
        if strange:
            raise InvalidSnapshot(field, "holds ids this flow does not know: " + ", ".join(strange))
    key = snap.missing_info[0]
    text_owed = key in snap.answered_questions
    other = engine.flow.other_option
    named = engine.keywords.only_category(snap.intention)
    steps: list[dict[str, str | None]] = []
    if key == engine.category_qid:
        target = NEED_OTHER if text_owed else NEED_CATEGORY
        if named is not None:
            raise InvalidSnapshot(
                "missing_info",
                f"names {key}, but the intention already names the category {named!r}",
            )
        if text_owed:
            steps.append({key: other})
    elif key in engine.category_of_primary:
        target = NEED_OTHER if text_owed else NEED_PRIMARY_FIELD
        category = engine.category_of_primary[key]
        if named is None:
            steps.append({engine.category_qid: category})
        elif named != category:
            raise InvalidSnapshot(
                "missing_info", f"names {key}, but the intention names the category {named!r}"
            )
        if text_owed:
            steps.append({key: other})
    else:
        kind = "an __other id" if key.endswith(OTHER_SUFFIX) else "no question of this flow"
        raise InvalidSnapshot("missing_info", f"names {key!r}, {kind}; it names a choice")
    s = replay(engine, snap.intention, steps)
    if s.position.state != target:  # a budget below the synthesised turns
        raise InvalidSnapshot("missing_info", f"names a position this flow cannot reach ({target})")
    return s


# -- migrations of older schema versions --------------------------------------------------------


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
    data.pop("digest", None)  # the content changes: version 1's digest cannot cover it
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
        key = {"NeedCategory": cq, "NeedPrimaryField": field}.get(str(source), owed)
        if key is None:
            return data
        if source == "NeedOther":
            key += OTHER_SUFFIX
        elif dest == "NeedOther":
            owed = key
        given[key] = answers.get(key)
        text = key + OTHER_SUFFIX
        if dest != "NeedOther" and answers.get(key) == flow.other_option and text in answers:
            given[text] = answers[text]
    ordered = [steps[k] for k in sorted(steps)]
    rest = {k: v for k, v in answers.items() if not any(k in g for g in ordered)}
    if ordered:
        ordered[-1].update(rest)
    data["steps"] = ordered
    return data


MIGRATIONS[1] = _v1_to_v2
