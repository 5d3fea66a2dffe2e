"""The tools' arguments as their published input schemas say them.

Arguments are taken as any JSON and checked in ``tools.py``, so a wrong type gets an ``error``
result with a recovery hint rather than the SDK's validation text; the schemas below still say
what to send.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import WithJsonSchema

__all__ = ["Answers", "Intention", "OptionalContext", "SessionId", "TurnNumber"]

# The SDK parses a JSON text sent for a non-string argument, so `answers` may arrive as the JSON
# of an object, as some clients send it.
Intention = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "string",
            "description": "What the user wants to change, in one sentence. Required to start a "
            "session; ignored when session_id continues one.",
        }
    ),
]
SessionId = Annotated[
    Any,
    WithJsonSchema(
        {"type": "string", "description": "The session to continue (omit to start a new one)."}
    ),
]
Answers = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "object",
            "description": "Answers to the current questions: question id -> text (or a list "
            "of texts). For 'Other (specify)', also send the text as <id>__other.",
            "additionalProperties": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
        }
    ),
]
OptionalContext = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "string",
            "description": "Extra context for a new session; it is added to the intention as "
            "Preflights does ('<intention>\\n\\nContext: <context>').",
        }
    ),
]
TurnNumber = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "integer",
            "minimum": 1,
            "description": "The `turn` of the needs_clarification being answered. When given, "
            "answers reach only that turn: if the session moved on, the call gets "
            "session_conflict instead.",
        }
    ),
]
