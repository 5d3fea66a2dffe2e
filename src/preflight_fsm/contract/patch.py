"""The structural contract of a DecisionPatch (C6), checked against a flow's schema."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from preflight_fsm.contract.rules import (
    Violation,
    as_dict,
    clean_text,
    is_sequence,
)
from preflight_fsm.flow import OTHER_OPTION, Flow, default_flow
from preflight_fsm.text import confusable_keys, confusable_with

__all__ = ["check_decision_patch", "flow_schema", "within_schema"]


def flow_schema(flow: Flow | None = None) -> dict[str, tuple[str, ...]]:
    """The categories and patch fields a flow can produce: the checker's default schema.

    >>> flow_schema()["Authentication"]
    ('Strategy', 'Library')
    """
    flow = flow or default_flow()
    schema = {
        c.name: (c.question.field, *(s.field for s in c.secondary if s.field != c.question.field))
        for c in flow.categories
    }
    schema[flow.other_category.name] = (flow.other_category.field,)
    return schema


_Schema = dict[str, tuple[str, frozenset[str] | None]]


def _schema_lookup(schema: object, flow: Flow | None = None) -> _Schema:
    """casefolded category -> (its name, casefolded fields or None for Preflights' "*")."""
    if schema is None:
        schema = flow_schema(flow)
    elif isinstance(schema, Flow):
        schema = flow_schema(schema)
    inner = getattr(schema, "schema", None)  # a Preflights HeuristicsConfig
    if inner is not None and hasattr(inner, "categories"):
        schema = inner
    pairs = getattr(schema, "categories", schema)  # a Preflights SnapshotSchema
    if isinstance(pairs, Mapping):
        pairs = pairs.items()
    lookup: _Schema = {}
    if not isinstance(pairs, Iterable):
        raise TypeError(f"not a schema: {type(schema).__name__}")
    for name, fields in pairs:
        names = tuple(str(f) for f in fields)
        lookup[str(name).casefold()] = (
            str(name),
            None if "*" in names else frozenset(f.casefold() for f in names),
        )
    return lookup


def check_decision_patch(
    patch: object,
    schema: object = None,
    *,
    answers: Mapping[str, object] | None = None,
    intention: str | None = None,
    flow: Flow | None = None,
) -> list[Violation]:
    """Every way ``patch`` breaks the patch contract; an empty list when it keeps it.

    ``schema`` bounds the categories and fields: by default ``flow``'s (:func:`flow_schema`;
    the default flow unless given; ``flow`` also names the placeholders and "Other" option);
    else a Preflights ``SnapshotSchema`` or ``HeuristicsConfig``, a mapping of category to
    fields, or pairs. Names compare case-insensitively and ``"*"`` allows any field, as
    Preflights' core validates. With ``answers`` (and the ``intention``), a value nobody gave is
    reported as invented. ``None`` is a valid outcome (spec §11 Decision #2): no violations.
    """
    if patch is None:
        return []
    data = as_dict(patch)
    if data is None:
        return [Violation("shape", f"is a {type(patch).__name__}, not a patch object")]
    found: list[Violation] = []
    category = data.get("category")
    if not isinstance(category, str):
        return [Violation("shape", f"is {category!r}, not text", "category")]
    raw_fields = data.get("fields")
    if not is_sequence(raw_fields) or not all(
        is_sequence(p) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in raw_fields
    ):
        return [Violation("shape", "must be a list of [name, value] text pairs", "fields")]
    fields = [(str(p[0]), str(p[1])) for p in raw_fields]
    references = data.get("references", ())
    if not is_sequence(references):
        found.append(Violation("shape", "must be a list of pairs", "references"))
    if not category.strip():
        found.append(Violation("C6-empty", "is empty", "category"))
    if not fields:
        found.append(Violation("C6-fields", "holds no field; return None instead", "fields"))
    names = [clean_text(name) for name, _ in fields]
    for name, _ in fields:
        if names.count(clean_text(name)) > 1:
            found.append(Violation("C6-fields", "is named twice", name))
            names = [n for n in names if n != clean_text(name)]
    flow = flow or default_flow()
    placeholders = {p.casefold() for p in flow.placeholders}
    look_alikes = frozenset(k for p in flow.placeholders for k in confusable_keys(p))  # C5
    for name, value in fields:
        if not name.strip():
            found.append(Violation("C6-empty", "a field has no name", repr(name)))
        if not value.strip():
            found.append(Violation("C6-empty", "has an empty value", name))
        elif clean_text(value) in placeholders or confusable_with(value.strip(), look_alikes):
            found.append(Violation("C6-placeholder", f"holds the placeholder {value!r}", name))
        elif clean_text(value) in (
            clean_text(flow.other_option),
            clean_text(OTHER_OPTION),
            "other",
        ):
            found.append(
                Violation("C6-placeholder", f"holds {value!r} instead of the user's text", name)
            )
    found += _check_schema(category, fields, schema, flow)
    if answers is not None:
        found += _check_provenance(fields, answers, intention, OTHER_OPTION)
    return found


def within_schema(patch: Any, schema: object, flow: Flow | None = None) -> bool:
    """True when ``patch``'s category and every field are in ``schema`` (C6, C8): names compare
    case-insensitively and Preflights' ``"*"`` allows any field."""
    fields = [(str(name), str(value)) for name, value in patch.fields]
    return not _check_schema(str(patch.category), fields, schema, flow)


def _check_schema(
    category: str, fields: list[tuple[str, str]], schema: object, flow: Flow | None
) -> list[Violation]:
    lookup = _schema_lookup(schema, flow)
    entry = lookup.get(category.casefold())
    if entry is None:
        known = ", ".join(name for name, _ in lookup.values())
        return [Violation("C6-schema", f"is not a category of the schema ({known})", category)]
    name, allowed = entry
    if allowed is None:
        return []
    return [
        Violation("C6-schema", f"is not a field of {name}", field)
        for field, _ in fields
        if field.casefold() not in allowed
    ]


def _check_provenance(
    fields: list[tuple[str, str]],
    answers: Mapping[str, object],
    intention: str | None,
    other: str,
) -> list[Violation]:
    given: set[str] = set()
    for value in answers.values():
        values = value if is_sequence(value) else (value,)
        given |= {clean_text(v) for v in values if isinstance(v, str) and v != other}
    if intention is not None:
        given.add(clean_text(intention))
    return [
        Violation("C6-invented", f"{value!r} is no answer the user gave", name)
        for name, value in fields
        if clean_text(value) not in given
    ]
