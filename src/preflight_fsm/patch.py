"""C6: the DecisionPatch a finished session holds (the public model; it is built from the answers
in ``patch_data.py``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["DecisionPatch"]


class DecisionPatch(BaseModel):
    """The decision a finished session extracted; field names equal Preflights' dataclass.

    ``fields`` holds the primary field first, then any volunteered secondary fields, in the order
    of the flow's category (C2). Never a placeholder, never an empty value (C6).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: str
    fields: tuple[tuple[str, str], ...]
    references: tuple[tuple[str, str], ...] = ()
