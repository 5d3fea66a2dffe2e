"""A snapshot's JSON without its model (C9): the field order, the signed fields, the canonical
JSON the digest and the seal cover, and the JSON codec the plain paths read and write with.

Nothing here imports pydantic: the command line writes and restores snapshots through this
module and never imports the model (issue 32, D276); ``model.py`` holds the schema, and
``tests/test_snapshot_json.py`` holds the two to one field order and one text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "FIELDS",
    "SCHEMA_VERSION",
    "SIGNED_FIELDS",
    "canonical",
    "compact_json",
    "parsed_json",
    "signed_json",
    "trace_object",
]

SCHEMA_VERSION: Final = 4
"""The snapshot format this version writes; older ones are migrated (``versions.py``)."""

FIELDS: Final = (
    "intention",
    "asked_questions",
    "answered_questions",
    "missing_info",
    "schema_version",
    "flow",
    "flow_fingerprint",
    "owner",
    "steps",
    "answered_by",
    "principals",
    "proofs",
    "state",
    "category",
    "other_for",
    "answers",
    "turn",
    "trace",
    "digest",
    "seal",
)
"""Every field of :class:`~preflight_fsm.snapshot.model.SessionSnapshot`, in its order: the order
of the keys of a snapshot's JSON text, which ``write.snapshot_json`` writes without the model
(``tests/test_snapshot_json.py`` holds it equal to the model's fields and the texts equal)."""

SIGNED_FIELDS: Final = (
    "answered_by",
    "flow_fingerprint",
    "intention",
    "owner",
    "principals",
    "proofs",
    "schema_version",
    "steps",
)
"""What the digest and the seal cover: the session's inputs (C9), keys in sorted order. Every
other field is what they derive, and restoring refuses any of it that differs from the replay
(D48): signing the inputs signs the whole snapshot."""


def compact_json(value: object) -> bytes:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` in UTF-8.

    Written by pydantic-core when the process has already imported it (a server, a caller of the
    API's models: it is several times faster, docs/performance.md), else by the standard library
    (the command line, which never imports pydantic, issue 32). The bytes are the same either way
    (``tests/test_snapshot_json.py``), so which one wrote a digest never shows.
    """
    to_json = _to_json if _to_json is not None else _core("to_json")
    if to_json is not None:
        written: bytes = to_json(value)
        return written
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def parsed_json(text: str | bytes) -> object:
    """``text`` parsed as JSON, by pydantic-core when the process has already imported it, else by
    the standard library (as :func:`compact_json`); ValueError if it is not JSON, nested too
    deeply, or not text."""
    from_json = _from_json if _from_json is not None else _core("from_json")
    try:
        if from_json is not None:
            return from_json(text, cache_strings="keys")
        return json.loads(text)
    except (TypeError, RecursionError) as exc:  # a lone surrogate, or nested too deeply
        raise ValueError(str(exc)) from None


_to_json: Callable[..., bytes] | None = None
_from_json: Callable[..., object] | None = None


def _core(name: str) -> Any:
    """pydantic-core's ``name`` if this process has imported pydantic-core (kept for the next
    call: a module once imported stays), else None: it is never imported here."""
    global _to_json, _from_json
    function = getattr(sys.modules.get("pydantic_core"), name, None)
    if function is not None:
        if name == "to_json":
            _to_json = function
        else:
            _from_json = function
    return function


def canonical(content: Mapping[str, Any]) -> bytes:
    """:func:`signed_json` of the signed fields of ``content``."""
    return signed_json(
        content["answered_by"],
        content["flow_fingerprint"],
        content["intention"],
        content["owner"],
        content["principals"],
        content["proofs"],
        content["schema_version"],
        content["steps"],
    )


def signed_json(
    answered_by: Sequence[str],
    flow_fingerprint: str | None,
    intention: str,
    owner: str | None,
    principals: Sequence[str | None],
    proofs: Sequence[Any],
    schema_version: int,
    steps: Sequence[Mapping[str, Any]],
) -> bytes:
    """``json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` in UTF-8
    for the signed fields (``SIGNED_FIELDS``, the parameters in their order), written by
    :func:`compact_json`: the same bytes (``tests/test_snapshot.py`` pins it) at a fraction of the
    cost (docs/performance.md). Only each step's answers need their keys sorted here (one answer
    is in order as it stands), and a proof given as a dict (a
    :class:`~preflight_fsm.proof.PasskeyProof` dumps its fields in sorted order); a new signed
    field holding an object must be sorted too. The fast restore passes the parsed values as they
    are (no mapping built for :func:`canonical` to read, D302)."""
    return compact_json(
        {
            "answered_by": answered_by,
            "flow_fingerprint": flow_fingerprint,
            "intention": intention,
            "owner": owner,
            "principals": principals,
            "proofs": proofs if proofs.count(None) == len(proofs) else _sorted_proofs(proofs),
            "schema_version": schema_version,
            "steps": [step if len(step) < 2 else dict(sorted(step.items())) for step in steps],
        }
    )


def _sorted_proofs(proofs: Sequence[Any]) -> Sequence[Any]:
    """Each proof given as a dict with its keys sorted (unsigned steps, all None, the common
    case, skip this call)."""
    return [dict(sorted(p.items())) if type(p) is dict else p for p in proofs]


def trace_object(
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
