"""DecisionPatch and what a session's position says about progress, hint and gaps (C6, C7)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["DecisionPatch"]


class DecisionPatch(BaseModel):
    """The decision a finished session extracted; field names equal Preflights' dataclass.

    ``fields`` holds the primary field first, then any volunteered secondary fields, in the order
    of DESIGN.md C2's table. Never a placeholder, never an empty value (C6).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: str
    fields: tuple[tuple[str, str], ...]
    references: tuple[tuple[str, str], ...] = ()


def progress_of(state: str, category_known: bool) -> float:
    """C7: 0.0 while the category is unknown, 0.5 while the field is pending, 1.0 in Done."""
    if state == "Done":
        return 1.0
    return 0.5 if category_known else 0.0
