"""The machine's states (C1), named once, and the position a session holds in each.

A session's position is one of five types, one per state, each holding exactly what that state
needs: the category once it is known, nothing more. So a session cannot be in an impossible
position (a category in NeedCategory, none in Done), and the state's name is read off the
position instead of being kept beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final, Literal

__all__ = [
    "ASKING_CATEGORY",
    "DONE",
    "NEED_CATEGORY",
    "NEED_OTHER",
    "NEED_PRIMARY_FIELD",
    "NO_PATCH",
    "QUESTION_STATES",
    "STATES",
    "TERMINAL_STATES",
    "AskingCategory",
    "AskingField",
    "AwaitingText",
    "Decided",
    "Position",
    "StateName",
    "Stopped",
]

StateName = Literal["NeedCategory", "NeedPrimaryField", "NeedOther", "Done", "NoPatch"]

NEED_CATEGORY: Final = "NeedCategory"
NEED_PRIMARY_FIELD: Final = "NeedPrimaryField"
NEED_OTHER: Final = "NeedOther"
DONE: Final = "Done"
NO_PATCH: Final = "NoPatch"

STATES: Final[tuple[StateName, ...]] = (
    NEED_CATEGORY,
    NEED_PRIMARY_FIELD,
    NEED_OTHER,
    DONE,
    NO_PATCH,
)
QUESTION_STATES: Final = frozenset({NEED_CATEGORY, NEED_PRIMARY_FIELD, NEED_OTHER})
TERMINAL_STATES: Final = frozenset({DONE, NO_PATCH})


@dataclass(frozen=True, slots=True)
class AskingCategory:
    """NeedCategory: the category is not known yet."""

    state: ClassVar[StateName] = NEED_CATEGORY
    category: ClassVar[None] = None


@dataclass(frozen=True, slots=True)
class AskingField:
    """NeedPrimaryField: the category is known; its primary field is asked."""

    state: ClassVar[StateName] = NEED_PRIMARY_FIELD
    category: str


@dataclass(frozen=True, slots=True)
class AwaitingText:
    """NeedOther: "Other (specify)" was chosen and its text is owed.

    For the category question while ``category`` is None, else for that category's field.
    """

    state: ClassVar[StateName] = NEED_OTHER
    category: str | None


@dataclass(frozen=True, slots=True)
class Decided:
    """Done: the patch's category (a known one, or the flow's Other category)."""

    state: ClassVar[StateName] = DONE
    category: str


@dataclass(frozen=True, slots=True)
class Stopped:
    """NoPatch: declined or out of budget; unresolved is the category while it is None."""

    state: ClassVar[StateName] = NO_PATCH
    category: str | None


Position = AskingCategory | AskingField | AwaitingText | Decided | Stopped
"""Where a session stands; ``position.state`` names its state."""

ASKING_CATEGORY: Final = AskingCategory()
"""The one NeedCategory position (it holds nothing)."""
