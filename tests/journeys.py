"""Sessions that take every row of the default flow's table, by name, for table-driven tests."""

from __future__ import annotations

from typing import Any

# Journeys through every row of the table: each ends in another state or by another edge.
JOURNEYS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "shortcut-to-done": ("Add OAuth login", [{"auth_strategy": "OAuth"}]),
    "category-then-field": (
        "Improve the feedback form",
        [{"change_category": "Database"}, {"db_type": "MySQL"}],
    ),
    "both-in-one-step": (
        "Improve the feedback form",
        [{"change_category": "Database", "db_type": "MySQL"}],
    ),
    "category-asked-only": ("Improve the feedback form", [{"change_category": "Database"}]),
    "other-text-owed": ("Improve the feedback form", [{"change_category": "Other (specify)"}]),
    "other-text-names-category": (
        "Improve the feedback form",
        [{"change_category": "Other (specify)"}, {"change_category__other": "Database"}],
    ),
    "other-category": (
        "Improve the feedback form",
        [{"change_category": "Other (specify)"}, {"change_category__other": "Payments"}],
    ),
    "field-other-then-text": (
        "Add OAuth login",
        [{"auth_strategy": "Other (specify)"}, {"auth_strategy__other": "SAML"}],
    ),
    "declined": ("Improve the feedback form", [{"change_category": None}]),
    "out-of-budget": (
        "Improve the feedback form",
        [
            {"change_category": "Other (specify)"},
            {"change_category__other": "Database"},
            {"db_type": "Other (specify)"},
        ],
    ),
}
