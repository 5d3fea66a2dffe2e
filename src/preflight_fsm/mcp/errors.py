"""Error results: every refused call gets one ``code``, a message and a recovery hint.

The codes are stable API for agents (``docs/mcp.md``). A hint always says what to send next,
never "try again". No error changes a session: the engine refuses before recording, and the
store writes only whole steps (C5, compare-and-set).
"""

from __future__ import annotations

from preflight_fsm.errors import (
    CorruptSession,
    InvalidAnswers,
    InvalidIntention,
    PreflightFsmError,
    SessionConflict,
    SessionExpired,
    SessionFinished,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.mcp.policy import NEED_USER_ARGUMENTS
from preflight_fsm.mcp.results import ENGINE_ERRORS, ErrorCode, ErrorDetail, Failed

__all__ = ["failed", "failure_of"]

_HINTS: dict[ErrorCode, str] = {
    "invalid_arguments": "Send user_intention (a string) to start a session, or session_id (a "
    "string) with answers (an object of question id to text, or list of texts) to continue one.",
    "undecodable_text": "Send the text as valid UTF-8: undecodable bytes reach the server as "
    "U+FFFD, and lone surrogates are not text.",
    InvalidIntention.code: "Send user_intention as one to 2,000 characters saying what to change "
    "(not a placeholder such as 'tbd'), without control characters; keep optional_context short.",
    InvalidAnswers.code: "Nothing was recorded. Follow feedback.action: answer the ids in "
    "feedback.issues.missing, fix those in feedback.issues.invalid, drop those in "
    "feedback.issues.unknown, and call again with the same session_id.",
    # A prefix is never looked up (D264): it would tell a caller about sessions not theirs.
    SessionNotFound.code: "Send session_id whole, as a result returned it (no prefix of it is "
    "looked up here), or start a new session: call require_clarification with user_intention.",
    SessionExpired.code: "The session was removed after too long without a step; start a new "
    "session with the same user_intention.",
    SessionFinished.code: "The session already ended; get_session shows its outcome. Start a new "
    "session with user_intention to ask again.",
    SessionConflict.code: "Another caller stepped this session first and nothing was written: call "
    "get_session (or require_clarification with the session_id and no answers) and answer the "
    "turn it asks now.",
    CorruptSession.code: "The stored session cannot be used; start a new session with "
    "user_intention (`preflight-fsm delete SESSION_ID` removes the broken one).",
    StoreUnavailable.code: "The session store cannot be reached; nothing was changed. Call again "
    "once it is back (the server's --store names it).",
    "invalid_request_state": "The elicitation state sent back was refused (changed, expired, or "
    "minted by another server) and nothing was changed: call require_clarification with the "
    "session_id and no answers to see the current turn.",
    "answers_need_user": NEED_USER_ARGUMENTS,
    "internal_error": "Nothing was changed. Call get_session to see where the session stands; "
    "report the message if it persists.",
}


def failed(
    code: ErrorCode,
    message: str,
    *,
    session_id: str | None = None,
    feedback: dict[str, object] | None = None,
    hint: str | None = None,
) -> Failed:
    """An error result with the code's recovery hint (or ``hint``)."""
    return Failed(
        error=ErrorDetail(
            code=code, message=message, recovery_hint=hint or _HINTS[code], feedback=feedback
        ),
        session_id=session_id,
    )


def failure_of(error: PreflightFsmError, session_id: str | None = None) -> Failed:
    """The error result for an engine or store error; InvalidAnswers carries its feedback."""
    code = error.code if isinstance(error, ENGINE_ERRORS) else "internal_error"
    feedback = error.feedback if isinstance(error, InvalidAnswers) else None
    known = getattr(error, "session_id", None) or session_id
    if isinstance(error, SessionNotFound):
        known = None  # there is no such session to point at
    return failed(code, str(error), session_id=known, feedback=feedback)
