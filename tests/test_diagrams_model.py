"""The graph model (preflight_fsm.diagrams.model) and its renderers: what the flow picture says."""

from __future__ import annotations

import re
from typing import Any

import pytest

from preflight_fsm import Edge, transition_table
from preflight_fsm.diagrams import LOCK_GUARD, flow_graph, to_dot, to_mermaid
from preflight_fsm.diagrams.model import ordinal
from preflight_fsm.flow import default_flow, flow_from_data


def _edge_id(edge: Edge) -> str:
    return f"{edge.source}-{edge.trigger}-{edge.dest}-{'+'.join(edge.guards) or 'none'}"


def mermaid_edges(mmd: str) -> list[tuple[str, str, str]]:
    """(source, dest, label) of every link line of a Mermaid flowchart."""
    return re.findall(r'^\s+(\w+) -[-.]*->(?:\|"(.*)"\|)? (\w+)$', mmd, re.MULTILINE)


@pytest.mark.parametrize("edge", transition_table(), ids=_edge_id)
def test_every_table_edge_is_one_arrow_with_its_guards(edge: Edge) -> None:
    """Each edge of transition_table() is exactly one arrow, with the table's guards."""
    arrows = [
        a
        for a in flow_graph().arrows
        if (a.source, a.trigger, a.dest, a.guards)
        == (edge.source, edge.trigger, edge.dest, edge.guards)
    ]
    assert 1 == len(arrows)


def test_graph_draws_the_table_and_nothing_else() -> None:
    """The arrows are the table's edges, in the table's order."""
    table = [(e.source, e.trigger, e.dest, e.guards) for e in transition_table()]
    assert table == [(a.source, a.trigger, a.dest, a.guards) for a in flow_graph().arrows]


def test_the_lock_is_on_no_edge_label() -> None:
    """pending_question_answered, on every answer edge, is printed on none of them."""
    assert all(LOCK_GUARD in a.guards for a in flow_graph().arrows if a.trigger == "answer")
    labels = [line for a in flow_graph().arrows for line in a.label]
    assert [] == [line for line in labels if LOCK_GUARD in line]


def test_the_lock_is_named_once_in_the_legend() -> None:
    """One legend line says what the bold question states mean: the lock."""
    lock_lines = [line for line in flow_graph().legend if "the lock" in line]
    assert 1 == len(lock_lines)


def test_labels_name_only_the_distinguishing_guards() -> None:
    """Every guard but the lock appears on its arrow's label."""
    for arrow in flow_graph().arrows:
        text = " ".join(arrow.label)
        for guard in arrow.guards:
            if guard != LOCK_GUARD:
                assert guard in text, (arrow.edge_id, text)


@pytest.mark.parametrize(
    ("source", "meaning"),
    [
        ("NeedCategory", "else: declined or out of budget"),
        ("NeedPrimaryField", "else: declined or out of budget"),
        ("NeedOther", "else: declined"),
    ],
    ids=str,
)
def test_fall_through_edges_say_what_they_mean(source: str, meaning: str) -> None:
    """The unguarded edge into NoPatch reads as declined (or out of budget), not as answered."""
    (arrow,) = [a for a in flow_graph().arrows if a.source == source and not a.condition]
    assert meaning == " ".join(arrow.label)


def test_edges_leaving_a_state_are_ordered_by_ordinals_ending_in_else() -> None:
    """The answer edges of each state read 1st, 2nd, …, else, in the order they are tried."""
    orders: dict[str, list[str]] = {}
    for arrow in flow_graph().arrows:
        if arrow.trigger == "answer":
            orders.setdefault(arrow.source, []).append(arrow.order)
    assert {
        "NeedCategory": ["1st", "2nd", "3rd", "else"],
        "NeedPrimaryField": ["1st", "2nd", "else"],
        "NeedOther": ["1st", "2nd", "else"],
    } == orders


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (21, "21st")],
    ids=str,
)
def test_ordinal(n: int, expected: str) -> None:
    """Ordinals are spelled as in English."""
    assert expected == ordinal(n)


def test_no_label_uses_a_bare_number_a_path_would_use() -> None:
    """Flow labels carry no `(n)` or `n.` numbering that a session path's could be taken for."""
    for arrow in flow_graph().arrows:
        for line in arrow.label:
            assert not re.match(r"^\(?\d+[.)]", line), line


def test_question_states_show_the_questions_a_user_sees() -> None:
    """NeedCategory shows its question and options; NeedPrimaryField one row per category."""
    flow = default_flow()
    nodes = {n.name: n for n in flow_graph(flow).nodes}
    (category,) = nodes["NeedCategory"].asks
    assert flow.category_question.text == category.text.text
    assert [c.name for c in flow.categories] + [flow.other_option] == [
        o.text for o in category.options
    ]
    rows = nodes["NeedPrimaryField"].asks
    assert [(c.name, c.question.text) for c in flow.categories] == [
        (r.who.text if r.who else "", r.text.text) for r in rows
    ]
    assert "Please specify (…):" == nodes["NeedOther"].asks[0].text.text


def test_dot_and_mermaid_show_every_question_text() -> None:
    """Every question text of the flow is in the DOT and the Mermaid text."""
    graph = flow_graph()
    dot, mmd = to_dot(graph), to_mermaid(graph)
    for category in default_flow().categories:
        assert category.question.text in dot
        assert category.question.text in mmd


def test_terminal_states_are_the_states_no_edge_leaves() -> None:
    """Done and NoPatch are terminal: a double border in DOT, a double circle in Mermaid."""
    graph = flow_graph()
    assert ["Done", "NoPatch"] == [n.name for n in graph.nodes if n.terminal]
    dot = to_dot(graph)
    assert re.search(r"^\tDone \[.*peripheries=2", dot, re.MULTILINE)
    assert '    Done((("<b>Done</b>")))' in to_mermaid(graph)


def test_dot_declares_each_state_once() -> None:
    """Each state is one node statement in the DOT source."""
    dot = to_dot(flow_graph())
    for state in ("NeedCategory", "NeedPrimaryField", "NeedOther", "Done", "NoPatch"):
        assert 1 == len(re.findall(rf"^\t{state} \[", dot, re.MULTILINE)), state


def test_shortcut_edge_is_dashed_in_both_renderers() -> None:
    """The start edge is dashed in DOT and a dotted link in Mermaid."""
    graph = flow_graph()
    assert re.search(
        r"NeedCategory -> NeedPrimaryField \[.*id=NeedCategory__start__[^\]]*style=dashed",
        to_dot(graph),
    )
    assert re.search(r"NeedCategory -\.->\|\"at start", to_mermaid(graph))


def test_mermaid_is_a_flowchart_with_every_edge() -> None:
    """Mermaid text is a `flowchart TD` with one link per table edge plus the entry's."""
    mmd = to_mermaid(flow_graph())
    assert "\nflowchart TD\n" in mmd
    assert len(transition_table()) + 1 == len(mermaid_edges(mmd))


def test_mermaid_labels_escape_what_its_grammar_reads() -> None:
    """Inside a quoted Mermaid label no raw quote, `<` of user text, or `&` survives."""
    data: dict[str, Any] = {
        "categories": [
            {
                "name": 'Q&A "beta"',
                "hint": "adr",
                "question": {
                    "id": "qa_tool",
                    "text": "Which <tool>? #1",
                    "options": ["A&B", 'say "hi"'],
                    "field": "Tool",
                },
            }
        ]
    }
    mmd = to_mermaid(flow_graph(flow_from_data(data)))
    assert "Which #lt;tool#gt;? #35;1" in mmd
    assert "A#amp;B" in mmd
    assert "say #quot;hi#quot;" in mmd
    for label in re.findall(r'"(.*?)"[)\]|]', mmd):
        assert "&" not in label


def test_custom_flow_gets_its_own_picture() -> None:
    """A flow from data is drawn with its own name and questions, not the default's."""
    data = {
        "name": "payments",
        "categories": [
            {
                "name": "Payments",
                "hint": "adr",
                "question": {
                    "id": "payment_provider",
                    "text": "Which provider?",
                    "options": ["Stripe", "Adyen"],
                    "field": "Provider",
                },
                "keywords": ["payment"],
            }
        ],
    }
    dot = to_dot(flow_graph(flow_from_data(data)))
    assert "“payments”" in dot
    assert "Which provider?" in dot
    assert "Which authentication approach?" not in dot


def test_flow_without_keywords_draws_no_shortcut() -> None:
    """A flow whose categories have no keywords has no start edge, so none is drawn."""
    data = {
        "categories": [
            {
                "name": "Payments",
                "hint": "adr",
                "question": {"id": "p", "text": "Which?", "options": ["A"], "field": "F"},
            }
        ]
    }
    assert [] == [a for a in flow_graph(flow_from_data(data)).arrows if a.trigger == "start"]
