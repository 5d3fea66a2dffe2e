"""What a flow change does (preflight_fsm.diagrams.diff): the list and the marked picture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight_fsm import Flow, load_flow
from preflight_fsm.diagrams import diff_graph, flow_diff, to_dot, to_mermaid
from preflight_fsm.diagrams.diff import FlowChange
from preflight_fsm.flow import default_flow, flow_from_data

ROOT = Path(__file__).resolve().parents[1]


def changed(**edits: Any) -> Flow:
    """The default flow with ``edits`` applied to its data (categories by name)."""
    data = default_flow().model_dump(mode="json")
    for name, change in edits.pop("categories", {}).items():
        for category in data["categories"]:
            if category["name"] == name:
                change(category)
    data.update(edits)
    return flow_from_data(data)


def _add_option(category: dict[str, Any]) -> None:
    category["question"]["options"].append("Passkeys")


def _drop_keyword(category: dict[str, Any]) -> None:
    category["keywords"].remove("jwt")


def _reword(category: dict[str, Any]) -> None:
    category["question"]["text"] = "How do users sign in?"


CASES: dict[str, tuple[Flow, FlowChange]] = {
    "option added": (
        changed(categories={"Authentication": _add_option}),
        FlowChange("added", "option", "Passkeys", where="of auth_strategy (Authentication)"),
    ),
    "keyword removed": (
        changed(categories={"Authentication": _drop_keyword}),
        FlowChange("removed", "keyword", "jwt", where="of Authentication"),
    ),
    "question reworded": (
        changed(categories={"Authentication": _reword}),
        FlowChange(
            "changed",
            "question",
            "text",
            where="of auth_strategy (Authentication)",
            old="Which authentication approach?",
            new="How do users sign in?",
        ),
    ),
    "budget raised": (
        changed(limits={"max_turns": 4}),
        FlowChange("changed", "setting", "limits.max_turns", old="3", new="4"),
    ),
}


@pytest.mark.parametrize(("new", "expected"), CASES.values(), ids=CASES.keys())
def test_each_kind_of_change_is_listed(new: Flow, expected: FlowChange) -> None:
    """One edit to the default flow is exactly one listed change."""
    assert (expected,) == flow_diff(default_flow(), new).changes


def test_same_flow_has_no_change() -> None:
    """A flow against itself: no change, said in words."""
    diff = flow_diff(default_flow(), default_flow())
    assert () == diff.changes
    assert "Flow change: default → default (no change)\n" == diff.to_text()


def _no_keywords() -> Flow:
    data = default_flow().model_dump(mode="json")
    for category in data["categories"]:
        category["keywords"] = []
    return flow_from_data(data)


def test_edges_the_table_loses_are_listed_and_drawn_removed() -> None:
    """Dropping every keyword removes the start edge: listed, and drawn dotted in red."""
    new = _no_keywords()
    edges = [c for c in flow_diff(default_flow(), new).changes if c.subject == "edge"]
    assert [
        ("removed", "NeedCategory → NeedPrimaryField on start [intention_names_one_category]")
    ] == [(c.change, c.name) for c in edges]
    (start,) = [a for a in diff_graph(default_flow(), new).arrows if a.trigger == "start"]
    assert "removed" == start.change
    assert 'style="dashed,dotted"' in to_dot(diff_graph(default_flow(), new))


def test_edges_the_table_gains_are_drawn_added() -> None:
    """The other way round, the start edge is added, in green."""
    (start,) = [
        a for a in diff_graph(_no_keywords(), default_flow()).arrows if a.trigger == "start"
    ]
    assert "added" == start.change


def test_picture_marks_options_keywords_and_questions() -> None:
    """The diff picture signs added (+), removed (minus) and changed (~) text; removals struck."""
    old, new = (
        load_flow(ROOT / "diagrams/examples/default.toml"),
        load_flow(ROOT / "diagrams/examples/next.toml"),
    )
    dot = to_dot(diff_graph(old, new))
    assert ">+Passkeys<" in dot
    assert "\u2212<S>keyword jwt</S>" in dot
    assert ">+keyword sso<" in dot
    assert "~Where will it run?" in dot
    assert "\u2212<S>Which hosting approach?</S>" in dot
    assert "+Mobile" in dot
    mmd = to_mermaid(diff_graph(old, new))
    assert "<b>+</b>Passkeys" in mmd
    assert "<b>\u2212</b><s>keyword jwt</s>" in mmd


def test_header_says_it_is_a_diff_and_lists_settings() -> None:
    """The title counts the changes; settings no box shows are legend lines."""
    old, new = (
        load_flow(ROOT / "diagrams/examples/default.toml"),
        load_flow(ROOT / "diagrams/examples/next.toml"),
    )
    graph = diff_graph(old, new)
    assert "7 changes (a diff, not the generated flow)" in graph.title
    assert '~ setting "limits.max_turns": "3" → "4"' in graph.legend


def test_markdown_lists_every_change_for_a_pull_request() -> None:
    """Markdown: a heading, the count, one bullet per change with its kind in bold."""
    new = changed(categories={"Authentication": _add_option})
    assert (
        "### Flow change: `default` → `default`\n\n1 change (`preflight-fsm diagram --diff`).\n\n"
        "- **added** option `Passkeys` of auth_strategy (Authentication)\n"
    ) == flow_diff(default_flow(), new).to_markdown()


def test_example_default_toml_is_the_default_flow() -> None:
    """diagrams/examples/default.toml loads as default_flow(), so the example diff is honest."""
    assert default_flow() == load_flow(ROOT / "diagrams/examples/default.toml")
