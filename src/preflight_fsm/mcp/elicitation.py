"""Asking a turn's questions through MCP elicitation: one form per turn.

A choice question becomes a form whose required field is an enum of its options (the
canonical "Other (specify)" last) plus an optional text field, the ``<id>__other`` companion,
for the text when "Other (specify)" is picked. The free text that ``NeedOther`` waits for
becomes a form with that one required text field. Field names are the question ids, so an
accepted form is a step's answers as it stands, and the engine judges it like any other (C5).

The same form model serves both protocol eras: handshake-era clients get it as an
``elicitation/create`` request (``ctx.elicit``), 2026-07-28 clients as an input request of an
input-required round (:func:`input_request`).
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any, Literal

import anyio
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from preflight_fsm import Question

__all__ = [
    "ANSWER_KEY",
    "answers_from",
    "can_elicit",
    "elicit_form",
    "form_message",
    "form_model",
    "input_request",
]

logger = logging.getLogger(__name__)

ANSWER_KEY = "answer"
"""The key of the one input request each round carries (and of its response)."""


def can_elicit(ctx: Context[Any]) -> bool:
    """True when the client declared that it shows forms (elicitation in form mode)."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        return False
    # An empty elicitation capability means form mode (the spec's default).
    elicitation = capabilities.elicitation
    return elicitation.form is not None or elicitation.url is None


async def elicit_form(
    ctx: Context[Any], message: str, questions: tuple[Question, ...]
) -> ElicitResult | None:
    """The handshake-era form asking ``questions``, answered or not; None when the client could
    not show it (the request failed), which the caller reports like a client without forms."""
    try:
        return await ctx.request_context.session.elicit_form(
            message=message,
            requested_schema=render_elicitation_schema(form_model(questions)),
            related_request_id=ctx.request_id,
        )
    except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        logger.warning("elicitation failed (%s); returning the questions", exc)
        return None


@lru_cache(maxsize=256)
def form_model(questions: tuple[Question, ...]) -> type[BaseModel]:
    """The form asking ``questions`` (one turn's); built once per distinct turn."""
    fields: dict[str, Any] = {}
    for question in questions:
        if question.options:
            # An enum of the options: Literal over a runtime tuple (pydantic renders it as enum).
            choice: Any = Literal.__getitem__(question.options)
            fields[question.id] = (choice, Field(title=question.question))
        elif question.optional:
            fields[question.id] = (
                str | None,
                Field(
                    default=None,
                    title=question.question,
                    description=f"Only when the answer above is {question.depends_on_value!r}.",
                ),
            )
        else:
            fields[question.id] = (str, Field(title=question.question, min_length=1))
    name = "Form_" + "_".join(q.id for q in questions)
    model: type[BaseModel] = create_model(
        name, __config__=ConfigDict(extra="ignore", str_strip_whitespace=True), **fields
    )
    return model


def form_message(intention: str, questions: tuple[Question, ...], problem: str | None) -> str:
    """What the form says above its fields: the question, the intention, any earlier refusal."""
    visible = next(q for q in questions if q.depends_on_question_id is None)
    lines = [] if problem is None else [f"Not accepted: {problem}", ""]
    short = intention if len(intention) <= 300 else intention[:299] + "…"
    lines += [visible.question, "", f"(Clarifying: {short})"]
    return "\n".join(lines)


def input_request(message: str, questions: tuple[Question, ...]) -> ElicitRequest:
    """The form as the input request of a 2026-07-28 input-required round."""
    schema = render_elicitation_schema(form_model(questions))
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def answers_from(
    questions: tuple[Question, ...], content: object
) -> tuple[dict[str, str], str | None]:
    """A step's answers from accepted form content, or the problem with it (for the re-ask)."""
    model = form_model(questions)
    try:
        data = model.model_validate(content if isinstance(content, dict) else {})
    except ValidationError as error:
        problems = []
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"]) or "form"
            problems.append(f"{where}: {item['msg']}")
        return {}, "; ".join(problems)
    return {k: v for k, v in data.model_dump().items() if v is not None}, None
