"""Errors raised by preflight-fsm.

Every error derives from one base, and each is named after its condition::

    PreflightFsmError
     ├── InvalidFlow (ValueError)            a flow definition is broken
     ├── InvalidIntention (ValueError)       the intention breaks the C5 limits
     ├── InvalidAnswers (ValueError)         a step's answers were refused (C5); has .feedback
     ├── SessionFinished                     step() on a session in Done or NoPatch
     └── InvalidSnapshot (ValueError)        a snapshot was refused (C9); has .field
          ├── SnapshotVersionError           unknown schema_version
          └── SnapshotFlowMismatch           the snapshot belongs to another flow
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "InvalidAnswers",
    "InvalidFlow",
    "InvalidIntention",
    "InvalidSnapshot",
    "PreflightFsmError",
    "SessionFinished",
    "SnapshotFlowMismatch",
    "SnapshotVersionError",
]


class PreflightFsmError(Exception):
    """Base of every error preflight-fsm raises on purpose."""


class InvalidFlow(PreflightFsmError, ValueError):
    """A flow definition (TOML or data) is broken; the message names the offending ids."""

    def __init__(self, message: str, *, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class InvalidIntention(PreflightFsmError, ValueError):
    """The intention is empty, a placeholder, too long, or holds control characters (C5)."""


class InvalidAnswers(PreflightFsmError, ValueError):
    """A step's answers were refused; the session is unchanged (C5).

    ``feedback`` is the structured, JSON-serialisable account of what was wrong and what to send.
    """

    def __init__(self, feedback: dict[str, Any]) -> None:
        self.feedback = feedback
        super().__init__(_describe(feedback))


class SessionFinished(PreflightFsmError):
    """The session already ended in Done or NoPatch; start a new session to ask again."""


class InvalidSnapshot(PreflightFsmError, ValueError):
    """A snapshot was refused (C9); ``field`` names the offending field. Nothing was restored."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"invalid snapshot: {field}: {problem}")


class SnapshotVersionError(InvalidSnapshot):
    """The snapshot's schema_version is not one this version can read or migrate."""


class SnapshotFlowMismatch(InvalidSnapshot):
    """The snapshot was taken on another flow (its name or fingerprint differs)."""


def _describe(feedback: dict[str, Any]) -> str:
    issues = feedback.get("issues", {})
    parts: list[str] = []
    for item in issues.get("invalid", []):
        parts.append(f"{item['field']}: {item['problem']}")
    for item in issues.get("missing", []):
        parts.append(f"{item['field']}: missing ({item['requirement']})")
    unknown = issues.get("unknown", [])
    if unknown:
        parts.append("unknown question ids: " + ", ".join(repr(u) for u in unknown))
    summary = "; ".join(parts) or "answers refused"
    return f"invalid answers: {summary}. {feedback.get('action', '')}".rstrip()
