"""mcp/rounds.py: form rounds over a host, in process (the servers' own tests drive the SDK)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import anyio
from mcp_types import ElicitRequest, ElicitResult

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.mcp.elicitation import input_request
from preflight_fsm.mcp.policy import AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer, RoundState
from preflight_fsm.mcp.rounds import MAX_FORM_RETRIES, FormRounds, Refusal, Round, RoundFailure
from preflight_fsm.turn import Question

_QUESTION = Question(
    id="Category", type="single_choice", question="Which kind?", options=("Backend", "Other")
)
_ROUND = Round("s1", 1, 1, "Add OAuth login", (_QUESTION,))


@dataclass
class _Host:
    """A host recording what it was asked to do; every submit is refused or accepted as told."""

    answers_from: AnswersFrom = "any"
    refuse: bool = False
    submitted: list[tuple[dict[str, str], AnsweredBy]] = field(default_factory=list)

    async def reopen(self, state: RoundState) -> Round | dict[str, Any]:
        return _ROUND

    async def submit(
        self, asked: Round, answers: dict[str, str], answered_by: AnsweredBy
    ) -> Round | dict[str, Any] | Refusal:
        self.submitted.append((answers, answered_by))
        return Refusal("not accepted") if self.refuse else {"status": "completed"}

    def questions(self, asked: Round) -> dict[str, Any]:
        return {"status": "needs_clarification"}

    def failure(
        self,
        kind: RoundFailure,
        message: str,
        session_id: str | None,
        *,
        hint: str | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {"status": "error", "code": kind, "message": message}


@dataclass
class _Collector:
    """A way to collect answers that replies with ``action`` and ``content`` every time."""

    action: str = "accept"
    content: dict[str, Any] = field(default_factory=lambda: {"Category": "Backend"})
    answered_by: AnsweredBy = "user_web"
    asked: int = 0

    def request(self, asked: Round, problem: str | None) -> ElicitRequest:
        return input_request("form", asked.questions)

    async def elicit(self, ctx: Any, asked: Round, problem: str | None) -> ElicitResult | None:
        self.asked += 1
        return ElicitResult(action=self.action, content=self.content)

    def answers(self, asked: Round, content: object) -> tuple[dict[str, str], str | None]:
        return dict(self.content), None


def _handshake_client() -> Any:
    elicitation = SimpleNamespace(form=SimpleNamespace(), url=None)
    return SimpleNamespace(
        client_capabilities=SimpleNamespace(elicitation=elicitation),
        protocol_version="2025-06-18",
    )


def _ask(host: _Host, collector: _Collector) -> Any:
    rounds = FormRounds(host, RoundSealer(), collector)

    async def run() -> Any:
        return await rounds.ask(_handshake_client(), _ROUND)

    return anyio.run(run)


def test_answers_are_submitted_as_coming_from_the_collector() -> None:
    """The way a round's answers are collected says who answered (the answer page's hook)."""
    host = _Host()
    result = _ask(host, _Collector(answered_by="user_web"))
    assert {"status": "completed"} == result
    assert [({"Category": "Backend"}, "user_web")] == host.submitted


def test_a_round_refused_max_times_ends_in_invalid_answers_with_the_last_problem() -> None:
    """Refused answers are asked again, MAX_FORM_RETRIES times in all, then the call ends."""
    host, collector = _Host(refuse=True), _Collector()
    result = _ask(host, collector)
    assert ("invalid_answers", MAX_FORM_RETRIES) == (result["code"], collector.asked)
    assert result["message"].endswith("last: not accepted")


def test_a_declined_round_under_answers_from_user_ends_in_answers_need_user() -> None:
    """A declined form never leaves the questions to the agent when only the person answers."""
    host = _Host(answers_from="user")
    result = _ask(host, _Collector(action="decline"))
    assert ("answers_need_user", []) == (result["code"], host.submitted)


def test_a_declined_round_under_answers_from_any_gives_the_agent_the_questions() -> None:
    """Under ``any`` a declined form leaves the round's questions for the agent to ask."""
    result = _ask(_Host(), _Collector(action="decline"))
    assert {"status": "needs_clarification"} == result
