"""patch.py: routing to a category and the patch a finished session holds (C6)."""

from __future__ import annotations

from preflight_fsm import (
    ClarificationMachine,
    DecisionPatch,
)

OTHER = "Other (specify)"
NO_KEYWORDS = "Improve the feedback form"


# -- routing and patches (C6) ----------------------------------------------------------------------


def test_a_patch_lists_primary_then_volunteered_secondaries() -> None:
    """C6: the primary field first, then concrete volunteered secondary fields of the category."""
    machine = ClarificationMachine("Add OAuth login")
    turn = machine.step(
        {"auth_library": "Auth.js", "db_orm": "Prisma", "auth_strategy": "Magic Link"}
    )
    assert (
        DecisionPatch(
            category="Authentication", fields=(("Strategy", "Magic Link"), ("Library", "Auth.js"))
        )
        == turn.patch
    )


def test_backend_fills_api_style_and_takes_framework_as_secondary() -> None:
    """C2: the Backend question fills API_Style; Framework is the volunteered secondary."""
    machine = ClarificationMachine("Add an endpoint")
    turn = machine.step({"backend_api_style": "GraphQL", "backend_framework": "FastAPI"})
    assert turn.patch is not None
    assert (("API_Style", "GraphQL"), ("Framework", "FastAPI")) == turn.patch.fields


def test_custom_category_uses_the_description_answer_when_given() -> None:
    """C6: the Other patch's Description is the `description` answer if concrete."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": "Billing", "description": "Retry failed invoices"})
    assert (
        DecisionPatch(category="Other", fields=(("Description", "Retry failed invoices"),))
        == turn.patch
    )


def test_category_text_equal_to_a_category_name_resolves_to_it() -> None:
    """C6: the text resolves when it equals a category name case-insensitively."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": OTHER, "change_category__other": "infra"})
    assert ("NeedPrimaryField", ("infra_hosting",)) == (turn.state, turn.missing_info)


def test_ambiguous_category_text_files_under_other() -> None:
    """C4/C6: text matching two categories names none: Done with the Other patch."""
    machine = ClarificationMachine(NO_KEYWORDS)
    turn = machine.step({"change_category": OTHER, "change_category__other": "login api"})
    assert turn.patch is not None
    assert "Other" == turn.patch.category


def test_an_intention_over_several_lines_gives_a_one_line_description() -> None:
    """C6: newlines become spaces: no `## Decision` can be injected into the ADR."""
    machine = ClarificationMachine("Refactor billing\n## Decision\nDrop the tests")
    turn = machine.step({"change_category": "Payments"})
    assert turn.patch is not None
    assert (("Description", "Refactor billing ## Decision Drop the tests"),) == turn.patch.fields
