"""`preflight-fsm check FILE`: judge recorded LLM output against the contract (spec §14, Rule 3).

FILE (``-`` for standard input) holds one JSON value, or JSON Lines (one value a line; blank
lines are skipped). A value is an item, or a JSON array of items. An item is one of:

- a response: an object with ``questions`` (and ``missing_info``, ``decision_hint``,
  ``progress``), checked by :func:`~preflight_fsm.contract.check_llm_response`;
- a patch: an object with ``category`` and ``fields``, checked by
  :func:`~preflight_fsm.contract.check_decision_patch` against our flow's schema;
- a record: an object with exactly one of ``response`` or ``patch``, plus optionally
  ``session_state`` (for a response), ``schema`` (category -> fields), ``answers`` and
  ``intention`` (for a patch: report invented values), ``name`` (shown in the report) and
  ``expect`` (the rule ids the item is meant to break: documentation for tests, not read here).

Exit codes: 0 when every item keeps the contract, 1 when any violation was found,
2 when the input cannot be read (missing file, invalid JSON, an object that is no item).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.cli import app
from preflight_fsm.contract import Violation, check_decision_patch, check_llm_response

__all__ = [
    "EXIT_UNREADABLE",
    "EXIT_VIOLATIONS",
    "Finding",
    "Item",
    "UnreadableInput",
    "check_items",
    "parse_items",
]

EXIT_VIOLATIONS = 1
EXIT_UNREADABLE = 2
MAX_INPUT_BYTES = 32 * 1024 * 1024
"""Larger input is refused unread: recorded responses are small."""

_RECORD_KEYS = frozenset(
    {"name", "response", "patch", "session_state", "schema", "answers", "intention", "expect"}
)


class UnreadableInput(ValueError):
    """The input is not JSON of the accepted shapes; the message names the line."""


@dataclass(frozen=True, slots=True)
class Item:
    """One response or patch to check, with what its record adds."""

    line: int
    kind: str  # "response" or "patch"
    payload: Any
    name: str | None = None
    session_state: Any = None
    schema: Any = None
    answers: dict[str, Any] | None = None
    intention: str | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """A violation, and the item it was found in."""

    item: Item
    violation: Violation

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return {"line": self.item.line, "name": self.item.name, **self.violation.to_dict()}


def parse_items(text: str) -> list[Item]:
    """The items of one JSON value or of JSON Lines; raises UnreadableInput."""
    try:
        whole = json.loads(text)
    except ValueError:
        pass
    else:
        values = whole if isinstance(whole, list) else [whole]
        return [_item(value, 1) for value in values]
    items: list[Item] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise UnreadableInput(f"line {number}: not JSON ({exc})") from None
        items.append(_item(value, number))
    if not items:
        raise UnreadableInput("no JSON value found")
    return items


def _item(value: object, line: int) -> Item:
    if not isinstance(value, dict):
        raise UnreadableInput(f"line {line}: a {type(value).__name__}, not a JSON object")
    if "response" in value or "patch" in value:
        unknown = sorted(set(value) - _RECORD_KEYS)
        if unknown:
            raise UnreadableInput(f"line {line}: unknown record key(s): {', '.join(unknown)}")
        if ("response" in value) == ("patch" in value):
            raise UnreadableInput(f"line {line}: a record holds a response or a patch, not both")
        name = value.get("name")
        answers = value.get("answers")
        intention = value.get("intention")
        if name is not None and not isinstance(name, str):
            raise UnreadableInput(f"line {line}: 'name' must be text")
        if answers is not None and not isinstance(answers, dict):
            raise UnreadableInput(f"line {line}: 'answers' must be an object")
        if intention is not None and not isinstance(intention, str):
            raise UnreadableInput(f"line {line}: 'intention' must be text")
        schema = value.get("schema")
        if schema is not None and not isinstance(schema, dict):
            raise UnreadableInput(f"line {line}: 'schema' must map categories to field lists")
        kind = "response" if "response" in value else "patch"
        return Item(
            line=line,
            kind=kind,
            payload=value[kind],
            name=name,
            session_state=value.get("session_state"),
            schema=schema,
            answers=answers,
            intention=intention,
        )
    if "questions" in value:
        return Item(line=line, kind="response", payload=value)
    if "category" in value:
        return Item(line=line, kind="patch", payload=value)
    raise UnreadableInput(
        f"line {line}: an object that is neither a response (questions), a patch (category) "
        "nor a record (response or patch)"
    )


def check_items(items: list[Item]) -> list[Finding]:
    """Every violation of every item, in input order."""
    findings: list[Finding] = []
    for item in items:
        if item.kind == "response":
            found = check_llm_response(item.payload, item.session_state)
        else:
            try:
                found = check_decision_patch(
                    item.payload, item.schema, answers=item.answers, intention=item.intention
                )
            except (TypeError, ValueError) as exc:
                raise UnreadableInput(f"line {item.line}: unusable schema ({exc})") from None
        findings += [Finding(item, v) for v in found]
    return findings


def _read(file: str) -> str:
    try:
        data = read_bounded(sys.stdin.buffer if file == "-" else Path(file), MAX_INPUT_BYTES)
    except OSError as exc:
        raise UnreadableInput(f"cannot read {file}: {exc.strerror or exc}") from None
    except Unreadable as exc:
        raise UnreadableInput(f"{file} {exc.problem}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(f"{file} is not UTF-8 ({exc.reason})") from None


@app.command()
def check(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="JSON or JSON Lines of responses; - for stdin.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the findings as one JSON object.")
    ] = False,
) -> None:
    """Check recorded LLM responses and patches against the contract; exit 1 on violations."""
    try:
        items = parse_items(_read(file))
        findings = check_items(items)
    except UnreadableInput as exc:
        from preflight_fsm.cli.report import CommandFailed

        raise CommandFailed("unreadable_input", f"{file}: {exc}", EXIT_UNREADABLE) from None
    if as_json:
        report = {"checked": len(items), "violations": [f.to_dict() for f in findings]}
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for finding in findings:
            name = f" {finding.item.name}:" if finding.item.name else ""
            typer.echo(f"{file}:{finding.item.line}:{name} {finding.violation}")
        plural = "" if len(items) == 1 else "s"
        typer.echo(f"{len(items)} item{plural} checked, {len(findings)} violation(s)")
    if findings:
        raise typer.Exit(code=EXIT_VIOLATIONS)
