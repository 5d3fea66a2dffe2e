"""option_names.py: which of the flow's options an option text in other words names."""

from __future__ import annotations

from preflight_fsm.flow import default_flow
from preflight_fsm.option_names import option_names

OTHER = default_flow().other_option


def test_options_must_keep_other_last() -> None:
    """Other moved first: not the flow's path."""
    assert "does not end with" in str(
        option_names(
            [OTHER, "OAuth", "Email/Password", "Magic Link"],
            ["OAuth", "Email/Password", "Magic Link", OTHER],
            OTHER,
        )
    )


def test_two_options_naming_one_of_the_flows_are_refused() -> None:
    """ "OAuth" and "OAuth 2.0" both name OAuth: the user's choice would be ambiguous."""
    found = option_names(
        ["OAuth", "OAuth 2.0", "Magic Link", OTHER],
        ["OAuth", "Email/Password", "Magic Link", OTHER],
        OTHER,
    )
    assert isinstance(found, str)
