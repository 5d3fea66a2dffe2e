"""Errors raised by preflight-fsm.

Every error derives from one base, and each is named after its condition::

    PreflightFsmError
     ├── InvalidFlow (ValueError)            a flow definition is broken
     ├── InvalidIntention (ValueError)       the intention breaks the C5 limits
     ├── InvalidAnswers (ValueError)         a step's answers were refused (C5); has .feedback
     ├── SessionFinished                     step() on a session in Done or NoPatch
     ├── InvalidSnapshot (ValueError)        a snapshot was refused (C9); has .field
     │    ├── SnapshotVersionError           unknown schema_version
     │    ├── SnapshotFlowMismatch           the snapshot's flow is not registered (C10)
     │    └── InvalidSeal                    unsealed or wrongly sealed, under a seal key (C11)
     ├── SessionStoreError                   a stored session (store/) could not be used
     │    ├── SessionNotFound (LookupError)  no stored session has that id
     │    ├── SessionExpired                 too long without a step; it was removed
     │    ├── SessionConflict                a write lost the compare-and-set on the version
     │    ├── CorruptSession                 the stored row is unreadable or was tampered with
     │    └── StoreUnavailable               the store cannot be opened or reached
     ├── InvalidPeopleFile (ValueError)      the people file is unreadable or holds a bad entry
     ├── PasskeyRefused                      a passkey assertion or enrollment did not verify
     ├── GraphvizMissing                     `dot` (for SVG and PNG diagrams) is not on PATH
     └── GraphvizFailed                      `dot` refused a diagram; has what it reported

Each class carries its ``code``, the one name a CLI report (``--json``'s ``error``), an MCP
result (``error.code``) and the docs give it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

__all__ = [
    "CorruptSession",
    "GraphvizFailed",
    "GraphvizMissing",
    "InvalidAnswers",
    "InvalidFlow",
    "InvalidIntention",
    "InvalidPeopleFile",
    "InvalidSeal",
    "InvalidSnapshot",
    "PasskeyRefused",
    "PreflightFsmError",
    "SessionConflict",
    "SessionExpired",
    "SessionFinished",
    "SessionNotFound",
    "SessionStoreError",
    "SnapshotFlowMismatch",
    "SnapshotVersionError",
    "StoreUnavailable",
]


class PreflightFsmError(Exception):
    """Base of every error preflight-fsm raises on purpose."""

    code: ClassVar[str] = "error"


class InvalidFlow(PreflightFsmError, ValueError):
    """A flow definition (TOML or data) is broken; the message names the offending ids."""

    code: ClassVar[str] = "invalid_flow"

    def __init__(self, message: str, *, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class InvalidIntention(PreflightFsmError, ValueError):
    """The intention is empty, a placeholder, too long, or holds refused characters (C5)."""

    code: ClassVar[str] = "invalid_intention"


class InvalidAnswers(PreflightFsmError, ValueError):
    """A step's answers were refused; the session is unchanged (C5).

    ``feedback`` is the structured, JSON-serialisable account of what was wrong and what to send.
    """

    code: ClassVar[str] = "invalid_answers"

    def __init__(self, feedback: dict[str, Any]) -> None:
        self.feedback = feedback
        super().__init__(_describe(feedback))

    @classmethod
    def of_field(cls, field: str, provided: object, problem: str, requirement: str) -> Self:
        """The refusal of one input outside the answers (``answered_by``, ``principal``,
        ``proof``, ``owner``), in the same feedback shape, saying nothing was recorded."""
        shown = repr(provided) if len(repr(provided)) <= 80 else repr(provided)[:77] + "..."
        issue = {"field": field, "provided": shown, "problem": problem, "requirement": requirement}
        return cls(
            {
                "result": "validation_failed",
                "issues": {"invalid": [issue], "missing": [], "unknown": []},
                "issue_count": 1,
                "action": f"Send {field} as {requirement}. Nothing was recorded.",
            }
        )


class SessionFinished(PreflightFsmError):
    """The session already ended in Done or NoPatch; start a new session to ask again."""

    code: ClassVar[str] = "session_finished"


class InvalidSnapshot(PreflightFsmError, ValueError):
    """A snapshot was refused (C9); ``field`` names the offending field. Nothing was restored."""

    code: ClassVar[str] = "invalid_snapshot"

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"invalid snapshot: {field}: {problem}")


class SnapshotVersionError(InvalidSnapshot):
    """The snapshot's schema_version is not one this version can read or migrate."""

    code: ClassVar[str] = "snapshot_version"


class SnapshotFlowMismatch(InvalidSnapshot):
    """The snapshot's flow is not registered; register the flow it started on (C10).

    ``session_id`` names the stored session it was raised for, when one was (``Sessions.list``).
    """

    code: ClassVar[str] = "flow_mismatch"

    session_id: str | None = None


class InvalidSeal(InvalidSnapshot):
    """A seal key is configured and the snapshot is unsealed or sealed under another key (C11)."""

    code: ClassVar[str] = "invalid_seal"


class SessionStoreError(PreflightFsmError):
    """A stored session could not be read or written; ``session_id`` names it (if any)."""

    code: ClassVar[str] = "store_error"

    def __init__(self, message: str, *, session_id: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take other arguments than the message; rebuild from the state so the error
        # survives pickling (multiprocessing workers raise them).
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class SessionNotFound(SessionStoreError, LookupError):
    """No stored session has this id (it never existed, was deleted, or expired long ago)."""

    code: ClassVar[str] = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"no session has the id {session_id!r} (never started here, deleted, or expired); "
            "start a new one",
            session_id=session_id,
        )


class SessionExpired(SessionStoreError):
    """The session went too long without a step and was removed; start a new session."""

    code: ClassVar[str] = "session_expired"

    def __init__(self, session_id: str, expire_after: float) -> None:
        super().__init__(
            f"session {session_id!r} expired after {_duration(expire_after)} without a step "
            "and was removed; start a new session with the same intention to ask again",
            session_id=session_id,
        )
        self.expire_after = expire_after


class SessionConflict(SessionStoreError):
    """Another writer changed the session first; nothing was written. Reload, then retry.

    ``expected`` is the version the write was based on, ``actual`` the stored one (None when the
    write was a create and the id was taken).
    """

    code: ClassVar[str] = "session_conflict"

    def __init__(self, session_id: str, expected: int | None, actual: int | None) -> None:
        if expected is None:
            problem = "a session with this id already exists; create it under another id"
        else:
            problem = (
                f"it is at version {actual}, not {expected}: another writer stepped it first; "
                "reload it and send the answers its current turn asks for"
            )
        super().__init__(
            f"session {session_id!r} was not written: {problem}", session_id=session_id
        )
        self.expected = expected
        self.actual = actual


class CorruptSession(SessionStoreError):
    """The stored row of this session is unreadable or was tampered with; delete it."""

    code: ClassVar[str] = "corrupt_session"

    def __init__(self, session_id: str, problem: str) -> None:
        super().__init__(
            f"session {session_id!r} is corrupt ({problem}); delete it and start a new session",
            session_id=session_id,
        )
        self.problem = problem


class StoreUnavailable(SessionStoreError):
    """The session store cannot be opened or reached (a bad path or URL, a server down)."""

    code: ClassVar[str] = "store_unavailable"


class InvalidPeopleFile(PreflightFsmError, ValueError):
    """The people file (``people.py``) cannot be read or holds a bad entry; the message names the
    file and the entry, and says what to fix."""

    code: ClassVar[str] = "invalid_people_file"


class PasskeyRefused(PreflightFsmError):
    """A passkey assertion (or enrollment) did not verify; ``reason`` names why.

    Reasons: ``unknown_credential`` (no person in the people file holds it), ``wrong_person``
    (the proof names another person than the file does), ``bad_signature``,
    ``wrong_challenge`` (signed for another session, step or answers), ``wrong_rp_id``,
    ``wrong_origin``, ``user_not_verified``, ``malformed``; on the answer page also
    ``counter_not_increased`` (a cloned authenticator's count) and ``counts_unusable`` (the
    counts file cannot be kept, ``sign_counts.py``).
    """

    code: ClassVar[str] = "passkey_refused"

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


class GraphvizMissing(PreflightFsmError):
    """Graphviz's ``dot`` program, needed for SVG and PNG diagrams, is not on PATH."""

    code: ClassVar[str] = "graphviz_missing"


class GraphvizFailed(PreflightFsmError):
    """Graphviz's ``dot`` program refused a diagram; the message carries what it reported."""

    code: ClassVar[str] = "graphviz_failed"


def _rebuild(
    cls: type[SessionStoreError], args: tuple[Any, ...], state: dict[str, Any]
) -> SessionStoreError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


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
