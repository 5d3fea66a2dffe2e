"""One session's path (preflight_fsm.diagrams.session): turns, answers, category, outcome."""

from __future__ import annotations

from typing import Any

import pytest

from preflight_fsm import ClarificationMachine, InvalidSnapshot
from preflight_fsm.diagrams import session_graph, step_answers, to_dot, to_mermaid
from preflight_fsm.diagrams.generate import EXAMPLE_INTENTION, EXAMPLE_STEPS, example_session
from preflight_fsm.flow import default_flow

OTHER = "Other (specify)"

# (intention, the answers of each step): sessions through every kind of edge.
SESSIONS: dict[str, tuple[str, tuple[dict[str, str], ...]]] = {
    "example: category, Other, its text": (EXAMPLE_INTENTION, EXAMPLE_STEPS),
    "shortcut then a field": ("Add OAuth login", ({"auth_strategy": "OAuth"},)),
    "category and field in one step": (
        "Improve things",
        ({"change_category": "Frontend", "frontend_framework": "Vue"},),
    ),
    "category text names a category": (
        "Improve the settings page",
        (
            {"change_category": OTHER},
            {"change_category__other": "authentication"},
            {"auth_strategy": "Magic Link"},
        ),
    ),
    "custom category": (
        "Improve things",
        ({"change_category": OTHER, "change_category__other": "Billing"},),
    ),
    "declined": ("Add OAuth login", ({"auth_strategy": ""},)),
    "out of budget": (
        "Improve the settings page",
        (
            {"change_category": OTHER},
            {"change_category__other": "authentication"},
            {"auth_strategy": OTHER},
        ),
    ),
}


def run(intention: str, steps: tuple[dict[str, str], ...]) -> ClarificationMachine:
    machine = ClarificationMachine(intention)
    for answers in steps:
        machine.step(answers)
    return machine


def _expected_steps(steps: tuple[dict[str, str], ...]) -> tuple[dict[str, str], ...]:
    """What a step records, a blank shown as such."""
    return tuple({k: v or "(blank)" for k, v in step.items()} for step in steps)


@pytest.mark.parametrize(("intention", "steps"), SESSIONS.values(), ids=SESSIONS.keys())
def test_step_answers_are_the_steps_the_snapshot_records(
    intention: str, steps: tuple[dict[str, str], ...]
) -> None:
    """C9: each step's answers are the session's own inputs, a decline shown as blank."""
    machine = run(intention, steps)
    assert _expected_steps(steps) == step_answers(machine.snapshot(), default_flow())


@pytest.mark.parametrize(("intention", "steps"), SESSIONS.values(), ids=SESSIONS.keys())
def test_every_answer_is_drawn_on_an_edge_of_its_turn(
    intention: str, steps: tuple[dict[str, str], ...]
) -> None:
    """Each recorded answer appears as `key = value` on an edge labelled with its turn."""
    graph = session_graph(run(intention, steps))
    for turn, answers in enumerate(_expected_steps(steps), start=1):
        labels = [a.label for a in graph.arrows if any(t.turn == turn for t in a.taken)]
        drawn = " / ".join(line for label in labels for line in label)
        assert f"turn {turn}" in drawn
        for key, value in answers.items():
            assert f"{key} = {value}" in drawn


def test_recorded_steps_are_used_when_the_snapshot_has_them() -> None:
    """A snapshot carrying C9's `steps` is read as it is, not re-derived."""

    class WithSteps:
        steps = ({"change_category": "Database", "db_orm": "Prisma"},)

    recorded: Any = WithSteps()
    assert ({"change_category": "Database", "db_orm": "Prisma"},) == step_answers(
        recorded, default_flow()
    )


def test_one_numbering_scheme_the_turn() -> None:
    """Taken edges are labelled by turn (and who answered it); untaken ones carry no label."""
    graph = session_graph(example_session())
    taken = [a for a in graph.arrows if a.taken]
    assert ["turn 1", "turn 2", "turn 3"] == [a.label[0].split(":")[0] for a in taken]
    assert all(a.label == () for a in graph.arrows if not a.taken)


def test_header_says_it_is_a_session_not_the_flow() -> None:
    """The title says it is one session's path, not the generated flow."""
    title = session_graph(example_session()).title
    assert "session" in title
    assert "not the generated flow" in title


def test_intention_is_the_entry_of_the_path() -> None:
    """The intention is drawn where the path starts."""
    graph = session_graph(example_session())
    assert (f"“{EXAMPLE_INTENTION}”",) == graph.entry
    assert "“Keep user sessions somewhere<BR/>faster”" in to_dot(graph)  # wrapped to fit


def test_patch_and_category_are_shown_where_it_ended() -> None:
    """Done shows the patch: its category and fields."""
    graph = session_graph(example_session())
    (done,) = [n for n in graph.nodes if n.name == "Done"]
    assert ["category: Database", "Type: CockroachDB"] == [t.text for t in done.lines]
    assert "current" == done.role


def test_declined_session_shows_the_unresolved_key() -> None:
    """NoPatch shows the category and the key left unresolved; the edge into it says declined."""
    graph = session_graph(run("Add OAuth login", ({"auth_strategy": ""},)))
    (no_patch,) = [n for n in graph.nodes if n.name == "NoPatch"]
    assert ["category: Authentication", "unresolved: auth_strategy"] == [
        t.text for t in no_patch.lines
    ]
    (into,) = [a for a in graph.arrows if a.dest == "NoPatch" and a.taken]
    assert "turn 1: declined, answered by api" == into.label[0]


def test_out_of_budget_is_said_on_the_edge_into_no_patch() -> None:
    """ "Other" owing a text with no turn left: the edge into NoPatch says out of budget."""
    graph = session_graph(run(*SESSIONS["out of budget"]))
    (into,) = [a for a in graph.arrows if a.dest == "NoPatch" and a.taken]
    assert ("turn 3: out of budget, answered by api", "auth_strategy = Other (specify)") == (
        into.label
    )


def test_shortcut_is_drawn_at_start_with_its_category() -> None:
    """The keyword shortcut is the `at start` edge, naming the category it chose."""
    graph = session_graph(ClarificationMachine("Add OAuth login"))
    (start,) = [a for a in graph.arrows if a.taken]
    assert ("at start: keywords name Authentication",) == start.label


def test_shortcut_passes_the_category_question_without_asking_it() -> None:
    """After the keyword shortcut NeedCategory is on the path but shows no question."""
    graph = session_graph(run("Add OAuth login", ({"auth_strategy": "OAuth"},)))
    (need_category,) = [n for n in graph.nodes if n.name == "NeedCategory"]
    assert ("visited", ()) == (need_category.role, need_category.asks)


def test_running_session_waits_at_its_state() -> None:
    """A session not finished stands at its state, showing the key it waits for."""
    graph = session_graph(ClarificationMachine("Improve things"))
    (current,) = [n for n in graph.nodes if n.role == "current"]
    assert "NeedCategory" == current.name
    assert ["waiting for: change_category"] == [t.text for t in current.lines]
    assert graph.legend[0].startswith("Stands at NeedCategory")


def test_unvisited_states_are_faded_and_ask_nothing() -> None:
    """States the session never reached are grey and show no question."""
    graph = session_graph(example_session())
    faded = [n for n in graph.nodes if n.role == "faded"]
    assert ["NoPatch"] == [n.name for n in faded]
    assert all(n.asks == () for n in faded)


def test_snapshot_json_and_live_machine_draw_the_same_path() -> None:
    """A snapshot's JSON and the live machine it came from give the same picture."""
    machine = example_session()
    assert to_dot(session_graph(machine)) == to_dot(
        session_graph(machine.snapshot().model_dump_json())
    )


def test_mermaid_path_colours_the_taken_edges() -> None:
    """Mermaid styles each taken link and classes the visited states."""
    mmd = to_mermaid(session_graph(example_session()))
    assert 3 == mmd.count("stroke:#1d4ed8,stroke-width:3px,color:#1d4ed8")  # the taken edges
    assert "    linkStyle 0 stroke:#1d4ed8,stroke-width:3px\n" in mmd  # the intention's arrow
    assert "class Done current" in mmd
    assert "turn 3: answered by cli<br>db_type__other = CockroachDB" in mmd


def test_minimal_snapshot_has_no_path_to_draw() -> None:
    """Preflights' four-field snapshot carries no trace: InvalidSnapshot says so."""
    minimal = {
        "intention": "Add OAuth login",
        "asked_questions": ["auth_strategy", "auth_strategy__other"],
        "answered_questions": [],
        "missing_info": ["auth_strategy"],
    }
    with pytest.raises(InvalidSnapshot, match="records no path"):
        session_graph(minimal)


def test_tampered_snapshot_is_refused() -> None:
    """A snapshot whose trace is not a walk of the machine is refused, naming the field."""
    data = example_session().snapshot().model_dump(mode="json")
    data["trace"] = data["trace"][1:]
    data["digest"] = None
    with pytest.raises(InvalidSnapshot, match="trace"):
        session_graph(data)


def test_each_taken_edge_says_who_supplied_its_turns_answers() -> None:
    """C9: every edge a step took names that step's answered_by; the start names none."""
    machine = ClarificationMachine("Improve the settings page")
    machine.step({"change_category": OTHER}, answered_by="agent")
    machine.step({"change_category__other": "authentication"}, answered_by="user_form")
    machine.step({"auth_strategy": "Magic Link"}, answered_by="cli")
    heads = sorted(a.label[0] for a in session_graph(machine).arrows if a.taken)
    assert [
        "turn 1: answered by agent",
        "turn 2: answered by user_form",
        "turn 3: answered by cli",
    ] == heads


def test_a_restored_snapshot_draws_who_answered_too() -> None:
    """The path from a snapshot's JSON shows the answered_by the snapshot carries."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"}, answered_by="user_form")
    graph = session_graph(machine.snapshot().model_dump_json())
    (into,) = [a for a in graph.arrows if a.dest == "Done" and a.taken]
    assert "turn 1: answered by user_form" == into.label[0]
