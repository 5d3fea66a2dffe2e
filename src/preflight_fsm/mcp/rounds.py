"""Form rounds: a session's questions asked of the person, one round per turn, in both eras.

Both MCP servers (``mcp``: :mod:`preflight_fsm.mcp.tools`; ``mcp --preflights``:
:mod:`preflight_fsm.integrations.preflights.forms`) ask through this module. A round is a
session's current turn (:class:`Round`), the way its answers are collected (a
:class:`Collector`: today the elicitation form, recorded as ``user_form``), and who answered.
Each server is a :class:`RoundHost`: it loads and steps its sessions and shapes its own results;
this module owns the protocol and the policy around it:

- handshake-era clients get ``elicitation/create`` requests inside the call, round after round;
- 2026-07-28 clients get input-required rounds whose request state is sealed
  (:mod:`.request_state`) and checked when it comes back;
- a refused form is asked again with the problem above it, at most :data:`MAX_FORM_RETRIES`
  times per call; a declined form, or a client without forms, leaves the questions to the agent
  under ``--answers-from any`` and ends in ``answers_need_user`` under ``user`` (:mod:`.policy`),
  with the answer page's link for the person when the server has a page.

The third way, the answer page (by a URL-mode elicitation or a link, ``page_rounds.py``), takes
every round under ``--answers-from web`` and ``person``: the person answers there, not in a form
(under ``person`` confirming each turn with their passkey).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import ElicitRequest, ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.mcp.elicitation import (
    ANSWER_KEY,
    answers_from,
    can_elicit,
    elicit_form,
    form_message,
    input_request,
)
from preflight_fsm.mcp.page_rounds import PageRounds
from preflight_fsm.mcp.policy import (
    NEED_USER_DECLINED,
    NEED_USER_DECLINED_NO_PAGE,
    NEED_USER_NO_FORMS,
    NEED_USER_NO_FORMS_NO_PAGE,
    AnswersFrom,
    arguments_hint,
    arguments_refused,
    on_page,
)
from preflight_fsm.mcp.request_state import InvalidRoundState, RoundSealer, RoundState
from preflight_fsm.turn import Question

__all__ = [
    "ARGUMENTS_REFUSED",
    "MAX_FORM_RETRIES",
    "Collector",
    "FormCollector",
    "FormRounds",
    "Refusal",
    "Round",
    "RoundFailure",
    "RoundHost",
]

logger = logging.getLogger(__name__)

MAX_FORM_RETRIES: Final = 3
"""Refused forms (C5) asked again within one call before the call ends in invalid_answers."""

ARGUMENTS_REFUSED: Final = arguments_refused("user")
"""The message refusing an agent's answers under ``--answers-from user``."""

RoundFailure = Literal[
    "invalid_request_state", "invalid_arguments", "invalid_answers", "answers_need_user"
]
"""The ways a round ends in an error; each server names them in its own codes."""

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Round:
    """A session's current turn as asked of the person.

    ``version`` and ``turn`` are what the sealed request state pins (0 when the server does not
    track them); ``intention`` is what the form says is being clarified; ``source`` is the
    host's own view of the session (a loaded machine, a result), handed back to it unread;
    ``before`` says how the turn before this one was recorded (``answered_through``), when the
    host knows.
    """

    session_id: str
    version: int
    turn: int
    intention: str
    questions: tuple[Question, ...]
    source: Any = field(default=None, compare=False, repr=False)
    before: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Answers the engine refused (C5): the problem to show above the form asked again."""

    problem: str
    feedback: dict[str, Any] | None = None


class RoundHost(Protocol[R_co]):
    """What a server supplies: its sessions and its results (of one type)."""

    answers_from: AnswersFrom

    async def reopen(self, state: RoundState) -> Round | R_co:
        """The round a sealed ``state`` was minted for, or the error ending the call."""
        ...

    async def submit(
        self, asked: Round, answers: dict[str, str], answered_by: AnsweredBy
    ) -> Round | R_co | Refusal:
        """Step ``asked``'s session: the next round, the final result, or the answers refused."""
        ...

    def questions(self, asked: Round) -> R_co:
        """The round's questions as the result for the agent (nobody answered a form)."""
        ...

    def failure(
        self,
        kind: RoundFailure,
        message: str,
        session_id: str | None,
        *,
        hint: str | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> R_co:
        """The server's error result for ``kind`` (its own code and, without ``hint``, hint)."""
        ...


class Collector(Protocol):
    """A way to collect a round's answers, and who they are recorded as coming from."""

    answered_by: AnsweredBy

    def request(self, asked: Round, problem: str | None) -> ElicitRequest:
        """The input request of a 2026-07-28 round asking ``asked``."""
        ...

    async def elicit(
        self, ctx: Context[Any], asked: Round, problem: str | None
    ) -> ElicitResult | None:
        """Ask ``asked`` inside the call (handshake era); None when the client could not."""
        ...

    def answers(self, asked: Round, content: object) -> tuple[dict[str, str], str | None]:
        """A step's answers from accepted content, or the problem with it."""
        ...


class FormCollector:
    """The elicitation form (:mod:`.elicitation`): the person's answers, as ``user_form``."""

    answered_by: AnsweredBy = "user_form"

    def request(self, asked: Round, problem: str | None) -> ElicitRequest:
        return input_request(
            form_message(asked.intention, asked.questions, problem), asked.questions
        )

    async def elicit(
        self, ctx: Context[Any], asked: Round, problem: str | None
    ) -> ElicitResult | None:
        message = form_message(asked.intention, asked.questions, problem)
        return await elicit_form(ctx, message, asked.questions)

    def answers(self, asked: Round, content: object) -> tuple[dict[str, str], str | None]:
        return answers_from(asked.questions, content)


class FormRounds(Generic[R]):
    """The rounds of one server (``host``): asked, resumed, retried, declined."""

    def __init__(
        self,
        host: RoundHost[R],
        sealer: RoundSealer,
        collector: Collector | None = None,
        page: PageRounds | None = None,
    ) -> None:
        self.host = host
        self.sealer = sealer
        self.collector: Collector = collector or FormCollector()
        self.page = page
        """The answer page, which collects every round under ``--answers-from web`` and
        ``person``, and gives the person a link under ``user`` when no form reaches them."""

    @property
    def _on_page(self) -> bool:
        return self.page is not None and on_page(self.host.answers_from)

    def asks_the_person(self, ctx: Context[Any]) -> bool:
        """Whether a round is put to the person (a form, the answer page), not to the agent."""
        return self._on_page or can_elicit(ctx)

    async def ask(self, ctx: Context[Any], start: Round | R) -> R | InputRequiredResult:
        """Ask ``start`` (a round, or a result that ends the call as it is) of the person."""
        if not isinstance(start, Round):
            return start
        if self.page is not None and self._on_page:
            return await self.page.ask(ctx, self.host, start, self.sealer)  # type: ignore[no-any-return]
        if not can_elicit(ctx):
            return await self._unanswered(start, declined=False)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._input_required(start, 0, None)
        return await self._in_place(ctx, start)

    async def resume(self, ctx: Context[Any], session_id: str | None) -> R | InputRequiredResult:
        """A 2026-07-28 round coming back: check its state, take the answers, ask on or end."""
        try:
            state = self.sealer.open(ctx.request_state)
        except InvalidRoundState as exc:
            logger.warning("refused a round state: %s", exc)
            return self.host.failure(
                "invalid_request_state",
                f"the request state sent back was refused ({exc}); nothing was changed",
                session_id,
            )
        if self.page is not None and self._on_page:
            return await self.page.resume(ctx, self.host, state)  # type: ignore[no-any-return]
        asked = await self.host.reopen(state)
        if not isinstance(asked, Round):
            return asked
        response = (ctx.input_responses or {}).get(ANSWER_KEY)
        if not isinstance(response, ElicitResult):
            return self.host.failure(
                "invalid_arguments",
                f"the retry carries no response to the form {ANSWER_KEY!r}",
                asked.session_id,
            )
        if response.action != "accept":
            return await self._unanswered(asked, declined=True)
        following = await self._take(asked, response.content, state.retries)
        if isinstance(following, _Retry):
            return self._input_required(asked, following.retries, following.problem)
        if isinstance(following, Round):
            return self._input_required(following, 0, None)
        return following

    def refuse_arguments(self, session_id: str | None) -> R:
        """The error for answers an agent passed under ``--answers-from user``, ``web`` or
        ``person``."""
        level = self.host.answers_from
        return self.host.failure(
            "answers_need_user",
            arguments_refused(level),
            session_id,
            hint=arguments_hint(level),
        )

    def _input_required(
        self, asked: Round, retries: int, problem: str | None
    ) -> InputRequiredResult:
        state = RoundState(asked.session_id, asked.version, asked.turn, retries)
        return InputRequiredResult(
            input_requests={ANSWER_KEY: self.collector.request(asked, problem)},
            request_state=self.sealer.seal(state),
        )

    async def _in_place(self, ctx: Context[Any], asked: Round) -> R:
        """Handshake-era clients: one ``elicitation/create`` per round until the session ends.

        Bounded: each accepted form is a step (at most the flow's turn budget), each refused
        one counts towards MAX_FORM_RETRIES.
        """
        retries, problem = 0, None
        while True:
            reply = await self.collector.elicit(ctx, asked, problem)
            if reply is None:  # the client could not show the form
                return await self._unanswered(asked, declined=False)
            if reply.action != "accept":
                return await self._unanswered(asked, declined=True)
            following = await self._take(asked, reply.content, retries)
            if isinstance(following, _Retry):
                retries, problem = following.retries, following.problem
            elif isinstance(following, Round):
                asked, retries, problem = following, 0, None
            else:
                return following

    async def _take(self, asked: Round, content: object, retries: int) -> Round | R | _Retry:
        """Accepted content: the next round or result, or the round to ask again."""
        answers, problem = self.collector.answers(asked, content)
        feedback: dict[str, Any] | None = None
        if problem is None:
            following = await self.host.submit(asked, answers, self.collector.answered_by)
            if not isinstance(following, Refusal):
                return following
            problem, feedback = following.problem, following.feedback
        if retries + 1 >= MAX_FORM_RETRIES:
            return self.host.failure(
                "invalid_answers",
                f"the form was refused {MAX_FORM_RETRIES} times; last: {problem}",
                asked.session_id,
                feedback=feedback,
            )
        return _Retry(retries + 1, problem)

    async def _unanswered(self, asked: Round, *, declined: bool) -> R:
        """A round nobody answered: the questions for the agent under ``any``; under ``user``
        the policy's error, the session as it stood, with the answer page's link for the
        person (a terminal command on a server without a page)."""
        if self.host.answers_from != "user":
            return self.host.questions(asked)
        link = None if self.page is None else await self.page.link(asked.session_id)
        if declined:
            why = "the person declined or closed the form"
            hint = NEED_USER_DECLINED if link else NEED_USER_DECLINED_NO_PAGE
        else:
            why = "this client cannot show forms"
            hint = NEED_USER_NO_FORMS if link else NEED_USER_NO_FORMS_NO_PAGE
        which = f"turn {asked.turn}" if asked.turn else "this round"
        return self.host.failure(
            "answers_need_user",
            f"{which} was not answered: {why}, and this server takes answers only from the "
            "person (--answers-from user); nothing was recorded",
            asked.session_id,
            hint=hint.format(session_id=asked.session_id, link=link),
        )


@dataclass(frozen=True, slots=True)
class _Retry:
    """The same round, asked again after ``problem`` (the ``retries``-th refusal)."""

    retries: int
    problem: str
