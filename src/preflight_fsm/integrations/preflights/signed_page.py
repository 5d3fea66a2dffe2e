"""Preflights' rounds on the answer page under ``--answers-from person`` (docs/web.md,
docs/preflights.md).

The signing flow is the engine page's (:class:`~preflight_fsm.web.signing.SignedAnswerPage`: the
answers checked and kept, the confirm page, the assertion posted and verified); only what is
signed and how a round is taken are Preflights'. A round that takes an engine step is signed
over that step's challenge, computed without recording anything
(:meth:`FsmPreflightsApp.step_challenge`: what ``preflight-fsm verify`` recomputes), and taken
with the proof, recorded ``user_passkey``. Preflights' own follow-up rounds (allowlist paths,
acceptance criteria, asked once the engine decided) are no engine step and not in the
attestation: they are answered on the page by the person, recorded ``user_web``, unsigned
(docs/decisions.md D270).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from preflight_fsm.errors import InvalidAnswers
from preflight_fsm.integrations.preflights.forms import PreflightsForms
from preflight_fsm.integrations.preflights.page import PreflightsPage
from preflight_fsm.mcp.rounds import Round
from preflight_fsm.people import People
from preflight_fsm.web import LinkBook, PageReply
from preflight_fsm.web.links import Grant
from preflight_fsm.web.signing import FINISHED, MAX_PENDING, Checked, SignedAnswerPage

__all__ = ["Challenge", "SignedPreflightsPage"]

Challenge = Callable[[str, dict[str, Any]], "bytes | None"]
"""What a passkey signs for these answers to continue the session (PreflightsTools'
``step_challenge``): None when the round takes no engine step; InvalidAnswers when refused."""


class SignedPreflightsPage(SignedAnswerPage, PreflightsPage):
    """Preflights' answer page whose every engine step is signed by someone ``people`` lists."""

    def __init__(
        self,
        forms: PreflightsForms,
        people: People,
        challenge: Challenge,
        links: LinkBook | None = None,
        base_url: str | None = None,
        rp_id: str = "localhost",
        *,
        max_pending: int = MAX_PENDING,
    ) -> None:
        PreflightsPage.__init__(self, forms, links, base_url)
        self._signed_by(people, rp_id, max_pending)
        self.challenge = challenge

    def _checked(
        self, token: str, grant: Grant, form: Mapping[str, Sequence[str]]
    ) -> Checked | PageReply:
        """The answers and their challenge; a follow-up round of Preflights' own is taken now,
        unsigned (``user_web``), and its next page returned."""
        with self._stepping:
            asked = self._round(grant)
            if isinstance(asked, PageReply):
                return asked
            answers = self.answers_to(asked.questions, form)
            try:
                challenge = self.challenge(grant.session_id, answers)
            except InvalidAnswers as error:
                return PageReply(422, self._page(asked, token, grant, str(error)))
            if challenge is not None:
                return Checked(answers, challenge, asked.intention, asked.questions)
            following = self._record(token, grant, asked, answers, "user_web")
        return self._reply(token, grant, asked, following)

    def _take(
        self, grant: Grant, token: str, answers: dict[str, Any], credential: Any
    ) -> tuple[int, str, str | None]:
        with self._stepping:
            asked = self._round(grant)
            challenge = None
            if not isinstance(asked, PageReply):
                challenge = self.challenge(grant.session_id, answers)
            if isinstance(asked, PageReply) or challenge is None:
                return 409, "Nothing waits for a passkey here: answer the form again.", None
            proof = self._proof(credential, challenge)
            following = self._record(token, grant, asked, answers, "user_passkey", proof)
        self._forget(token)
        if isinstance(following, Round):
            return 200, "Signed and recorded.", self.link_to(grant, following)
        if isinstance(following, tuple):
            status, problem = following
            return status, f"Not recorded: {problem}", None
        return 200, FINISHED, None
