"""What the MCP tools return: one model per ``status``, and the JSON both forms carry.

``require_clarification`` answers with exactly one of :class:`NeedsClarification`,
:class:`Completed`, :class:`Stopped` or :class:`Failed`, told apart by ``status`` (the tool's
output schema is their union); ``get_session`` answers with a :class:`SessionView` or a
:class:`Failed`. Field names follow Preflights' own MCP results where it has one
(``session_id``, ``questions``, ``error.code``, ``error.recovery_hint``), and a question carries
every field of the contract's :class:`~preflight_fsm.Question`, the ``__other`` companion included.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import pydantic_core
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, WithJsonSchema

from preflight_fsm import AnsweredBy, Question, TraceStep, Turn
from preflight_fsm.answered_by import SOURCES_DESCRIBED, Source
from preflight_fsm.errors import (
    CorruptSession,
    InvalidAnswers,
    InvalidIntention,
    SessionConflict,
    SessionExpired,
    SessionFinished,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.flow import Hint
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.states import DONE, NO_PATCH, StateName
from preflight_fsm.store import SessionState

__all__ = [
    "ENGINE_ERRORS",
    "ERROR_CODES",
    "ClarificationOutcome",
    "Completed",
    "DecidedOut",
    "ErrorCode",
    "ErrorDetail",
    "Failed",
    "NeedsClarification",
    "PatchField",
    "PatchOut",
    "SessionOutcome",
    "SessionView",
    "StepOut",
    "Stopped",
    "TraceOut",
    "outcome_of",
    "session_view",
    "tool_result",
]

ENGINE_ERRORS: Final = (
    InvalidIntention,
    InvalidAnswers,
    SessionNotFound,
    SessionExpired,
    SessionFinished,
    SessionConflict,
    CorruptSession,
    StoreUnavailable,
)
"""The engine's and the store's errors a result names by their own ``code``; any other error is
an ``internal_error``."""

ERROR_CODES: Final[tuple[str, ...]] = (
    "invalid_arguments",
    "undecodable_text",
    *(error.code for error in ENGINE_ERRORS),
    "invalid_request_state",
    "answers_need_user",
    "internal_error",
)
"""One code per condition; ``docs/mcp.md`` lists what each means and what to send next."""

ErrorCode = Annotated[str, WithJsonSchema({"enum": list(ERROR_CODES), "type": "string"})]


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PatchField(_Result):
    """One field of the decision: ``{"name": "Strategy", "value": "OAuth"}``."""

    name: str
    value: str


class PatchOut(_Result):
    """The decision a completed session extracted (C6)."""

    category: str
    fields: list[PatchField]


class DecidedOut(_Result):
    """Who supplied one value of the decision: ``{"name": "Strategy", "answered_by": ...}``."""

    name: str = Field(description="'Category', or a field of the patch.")
    answered_by: Source = Field(
        description=f"The answered_by of the step that supplied it: {SOURCES_DESCRIBED}; or "
        "'intention' when the intention's own words decided it."
    )


class NeedsClarification(_Result):
    """The session waits for answers: ask ``questions``, then call again with ``answers``."""

    status: Literal["needs_clarification"] = "needs_clarification"
    session_id: str
    questions: list[Question] = Field(
        description="This turn's questions: the field question and, for a choice, its optional "
        "`<id>__other` companion (send it when the answer is 'Other (specify)')."
    )
    missing_info: list[str]
    progress: float
    decision_hint: Hint
    turn: int = Field(description="The question turn being asked (1-3); send it back as `turn`.")


class Completed(_Result):
    """The session ended with a decision (``Done``)."""

    status: Literal["completed"] = "completed"
    session_id: str
    patch: PatchOut
    decided_by: list[DecidedOut] = Field(
        default_factory=list,
        description="Who supplied each value of the decision, the category first.",
    )
    decision_hint: Hint
    progress: float
    turn: int


class Stopped(_Result):
    """The session ended without a decision (``NoPatch``): declined, or out of turns."""

    status: Literal["stopped"] = "stopped"
    session_id: str
    missing_info: list[str]
    progress: float
    decision_hint: Hint
    turn: int


class ErrorDetail(_Result):
    """What went wrong, and what to send next; the session is unchanged by any error."""

    code: ErrorCode
    message: str
    recovery_hint: str
    feedback: dict[str, Any] | None = Field(
        default=None,
        description="For invalid_answers: the engine's structured feedback (C5): result, "
        "issues {invalid, missing, unknown}, issue_count, action.",
    )


class Failed(_Result):
    """The call was refused; ``session_id`` is set when the error concerns a known session."""

    status: Literal["error"] = "error"
    error: ErrorDetail
    session_id: str | None = None


class TraceOut(_Result):
    """One transition a session took: during which step (0 = start), from where, to where, why."""

    turn: int
    trigger: Literal["start", "answer"]
    source: str
    dest: str
    guards: list[str]
    answered_by: AnsweredBy | None = Field(
        default=None,
        description="Who supplied the answers of the step that took it (absent for the start).",
    )


class StepOut(_Result):
    """One accepted step: its answers as recorded (null: given blank) and who supplied them."""

    step: int = Field(description="1 for the first step; the trace's `turn` of its transitions.")
    answered_by: AnsweredBy = Field(description=SOURCES_DESCRIBED + ".")
    principal: str | None = Field(
        default=None,
        description="The authenticated caller that sent the step (a token's name, an OIDC "
        "subject); null when the call was not authenticated.",
    )
    proof: PasskeyProof | None = Field(
        default=None,
        description="A user_passkey step's WebAuthn assertion (base64url parts) and the person "
        "whose passkey made it: `preflight-fsm verify` checks it against the people file.",
    )
    answers: dict[str, str | None]


class SessionView(_Result):
    """Where a stored session stands, with every transition it took (``get_session``)."""

    status: Literal["needs_clarification", "completed", "stopped"]
    session_id: str
    state: StateName
    version: int = Field(description="The stored version: it grows by one with every step.")
    intention: str
    owner: str | None = Field(
        default=None,
        description="The authenticated principal that started the session; null when none was.",
    )
    answers: dict[str, str]
    turn: int
    progress: float
    decision_hint: Hint
    missing_info: list[str]
    questions: list[Question]
    patch: PatchOut | None = None
    decided_by: list[DecidedOut] = Field(
        default_factory=list, description="Who supplied each value of the decision (Done only)."
    )
    steps: list[StepOut] = Field(
        default_factory=list, description="Every accepted step, with who supplied its answers."
    )
    trace: list[TraceOut]
    updated_at: float
    expires_at: float


def _flat_schema(union: Any) -> dict[str, Any]:
    """The JSON schema of ``union`` with every ``$ref`` written out in place and ``oneOf`` as
    ``anyOf``: the same documents are valid (each branch fixes its own ``status``), and a client
    that validates every result against it (the SDK's, with jsonschema) does about half the work:
    no reference lookups, and it stops at the first branch that matches."""
    schema = TypeAdapter(union).json_schema()
    definitions = schema.pop("$defs", {})

    def written_out(node: Any) -> Any:
        """A schema (a dict of keywords) or a value of one, written out."""
        if isinstance(node, list):
            return [written_out(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return written_out(definitions[node["$ref"].rsplit("/", 1)[-1]])
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties":  # field names, each mapped to a schema: names kept as they are
                out[key] = {name: written_out(field) for name, field in value.items()}
            elif key != "discriminator":  # its mapping names the $defs written out here
                out["anyOf" if key == "oneOf" else key] = written_out(value)
        return out

    return {**written_out(schema), "type": "object"}


_Clarification = Annotated[
    NeedsClarification | Completed | Stopped | Failed, Field(discriminator="status")
]


class ClarificationOutcome(RootModel[Any]):
    """The output schema of ``require_clarification``: one of four shapes, by ``status``."""

    root: Annotated[_Clarification, WithJsonSchema(_flat_schema(_Clarification))]


class SessionOutcome(RootModel[Any]):
    """The output schema of ``get_session``: the session's view, or an error."""

    root: Annotated[SessionView | Failed, WithJsonSchema(_flat_schema(SessionView | Failed))]


def _patch(turn: Turn) -> PatchOut | None:
    if turn.patch is None:
        return None
    fields = [PatchField(name=name, value=value) for name, value in turn.patch.fields]
    return PatchOut(category=turn.patch.category, fields=fields)


def _decided(decided_by: tuple[tuple[str, Source], ...]) -> list[DecidedOut]:
    return [DecidedOut(name=name, answered_by=source) for name, source in decided_by]


def outcome_of(
    session_id: str, turn: Turn, decided_by: tuple[tuple[str, Source], ...] = ()
) -> NeedsClarification | Completed | Stopped:
    """The ``require_clarification`` result for a session at ``turn``; ``decided_by`` says who
    supplied each value of a decision."""
    if turn.state == DONE:
        patch = _patch(turn)
        assert patch is not None  # Done always carries its patch (C6)
        return Completed(
            session_id=session_id,
            patch=patch,
            decided_by=_decided(decided_by),
            decision_hint=turn.decision_hint,
            progress=turn.progress,
            turn=turn.number,
        )
    if turn.state == NO_PATCH:
        return Stopped(
            session_id=session_id,
            missing_info=list(turn.missing_info),
            progress=turn.progress,
            decision_hint=turn.decision_hint,
            turn=turn.number,
        )
    return NeedsClarification(
        session_id=session_id,
        questions=list(turn.questions),
        missing_info=list(turn.missing_info),
        progress=turn.progress,
        decision_hint=turn.decision_hint,
        turn=turn.number,
    )


def session_view(state: SessionState, trace: tuple[TraceStep, ...]) -> SessionView:
    """``get_session``'s answer for a stored session."""
    turn = state.turn
    status = outcome_of(state.id, turn).status
    sources = {s.step: s.answered_by for s in state.steps}
    return SessionView(
        status=status,
        session_id=state.id,
        state=turn.state,
        version=state.version,
        intention=state.intention,
        owner=state.owner,
        answers=dict(state.answers),
        turn=turn.number,
        progress=turn.progress,
        decision_hint=turn.decision_hint,
        missing_info=list(turn.missing_info),
        questions=list(turn.questions),
        patch=_patch(turn),
        decided_by=_decided(state.decided_by),
        steps=[
            StepOut(
                step=s.step,
                answered_by=s.answered_by,
                principal=s.principal,
                proof=s.proof,
                answers=dict(s.answers),
            )
            for s in state.steps
        ],
        trace=[
            TraceOut(
                turn=t.turn,
                trigger=t.trigger,
                source=t.source,
                dest=t.dest,
                guards=list(t.guards),
                # A step's transitions carry its number as their turn (0: the start).
                answered_by=sources.get(t.turn) if t.trigger == "answer" else None,
            )
            for t in trace
        ],
        updated_at=state.updated_at,
        expires_at=state.expires_at,
    )


def tool_result(result: _Result) -> CallToolResult:
    """The result as structured content and, for clients without it, the same JSON as text.

    ``None`` fields are left out, so each status shows only its own fields; an error result is
    also flagged ``isError`` so clients show it as a failed call.
    """
    data = result.model_dump(mode="json", exclude_none=True)
    # The same text as json.dumps(data, ensure_ascii=False, indent=2), written by pydantic-core:
    # json.dumps with an indent runs its pure-Python encoder, about a tenth of a call's CPU.
    text = pydantic_core.to_json(data, indent=2).decode()
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data,
        is_error=isinstance(result, Failed),
    )
