"""The docs' tables that restate code say what the code says (STYLE.md item 13)."""

from __future__ import annotations

import re
from pathlib import Path

import preflight_fsm
from preflight_fsm import default_flow
from preflight_fsm.answered_by import ANSWERED_BY
from preflight_fsm.cli.report import EXIT_INVALID_ANSWERS, error_code
from preflight_fsm.contract import RULES
from preflight_fsm.errors import (
    CorruptSession,
    InvalidAnswers,
    InvalidFlow,
    InvalidIntention,
    SessionConflict,
    SessionExpired,
    SessionFinished,
    SessionNotFound,
    SnapshotFlowMismatch,
    StoreUnavailable,
)
from preflight_fsm.llm.judge import AGREEMENT_RULES
from preflight_fsm.mcp.results import ERROR_CODES
from preflight_fsm.verify import EXIT_CODES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _table(doc: str, header: str) -> list[list[str]]:
    """The rows (cells stripped) of the table in ``doc`` whose header row starts with
    ``header``."""
    lines = (DOCS / doc).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _unquoted(cell: str) -> str:
    return cell.strip("`")


def test_the_contracts_question_table_is_the_default_flow() -> None:
    """docs/contract.md's C2 table: each category's question id, text, options, field and hint."""
    flow = default_flow()
    first = flow.category_question
    expected = {
        "(first)": [
            first.id,
            first.text,
            ", ".join(c.name for c in flow.categories),
            "—",
            "—",
        ]
    }
    for category in flow.categories:
        question = category.question
        expected[category.name] = [
            question.id,
            question.text,
            ", ".join(question.options),
            question.field,
            category.hint,
        ]
    rows = _table("contract.md", "| category | question id |")
    assert expected == {row[0]: [_unquoted(row[1]), *row[2:]] for row in rows}


def test_the_contracts_keyword_list_is_the_default_flows() -> None:
    """docs/contract.md's C4 names each category's keywords, in the flow's order."""
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    found = re.search(r"- Keywords per category: (.*?)\. They are flow data\.", text, re.DOTALL)
    assert found is not None
    listed = {}
    for part in " ".join(found.group(1).split()).split(" · "):
        name, _, keywords = part.partition(": ")
        listed[name] = tuple(keywords.split(", "))
    assert {c.name: c.keywords for c in default_flow().categories} == listed


def test_the_preflights_rule_table_lists_every_contract_rule() -> None:
    """docs/preflights.md's rule table names exactly contract.RULES, in their order."""
    rows = _table("preflights.md", "| rule | what it requires |")
    assert list(RULES) == [_unquoted(row[0]) for row in rows]


def test_the_mcp_error_table_lists_every_code() -> None:
    """docs/mcp.md's error table lists exactly the codes a result can carry, in their order."""
    rows = _table("mcp.md", "| `code` | when |")
    assert list(ERROR_CODES) == [_unquoted(row[0]) for row in rows]


def test_the_cli_exit_table_names_each_errors_code_under_its_exit_code() -> None:
    """docs/sessions.md's exit codes: each engine or store error under the code it exits with,
    by the name its class carries."""
    errors = (
        SessionNotFound("s1"),
        SessionExpired("s1", 60),
        SessionConflict("s1", 1, 2),
        SessionFinished("ended"),
        CorruptSession("s1", "unreadable"),
        StoreUnavailable("down"),
        InvalidIntention("empty"),
        InvalidFlow("broken"),
        SnapshotFlowMismatch("flow", "not registered"),
    )
    names = {
        int(row[0]): [_unquoted(name) for name in row[1].split(", ")]
        for row in _table("sessions.md", "| code | `error` | when |")
    }
    for error in errors:
        found = error_code(error)
        assert found is not None
        assert found[1] in names[found[0]], type(error).__name__
    assert [InvalidAnswers.code] == names[EXIT_INVALID_ANSWERS]


def test_the_llm_judges_table_lists_every_agreement_rule() -> None:
    """docs/llm.md's table of what is judged names exactly AGREEMENT_RULES, in their order."""
    rows = _table("llm.md", "| rule | the reply must |")
    assert list(AGREEMENT_RULES) == [row[0] for row in rows]


def test_the_verify_outcome_table_is_the_codes_verify_exits_with() -> None:
    """docs/web.md's outcomes and exit codes are verify.py's."""
    rows = _table("web.md", "| outcome | exit code |")
    assert dict(EXIT_CODES) == {row[0].strip("`"): int(row[1]) for row in rows}


def test_the_trust_model_table_lists_every_source() -> None:
    """docs/contract.md's trust model has one row per answered_by value, in order."""
    rows = _table("contract.md", "| value | proves |")
    assert list(ANSWERED_BY) == [row[0].strip("`") for row in rows]


def test_the_maintainers_map_names_every_module_and_package() -> None:
    """docs/maintainers.md's map has a place for each top-level module and package."""
    package = Path(preflight_fsm.__file__).parent
    names = [
        f"{path.name}/" if path.is_dir() else path.name
        for path in package.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").exists())
    ]
    text = (DOCS / "maintainers.md").read_text(encoding="utf-8")
    assert [] == [name for name in sorted(names) if f"`{name}" not in text]
