"""Preflights' rounds on the answer page (``--answers-from web``, ``pf --web``; docs/web.md).

The page (:mod:`preflight_fsm.web`) serves a session's current round to the person with a
one-round link. Here the rounds are Preflights' own (:class:`PreflightsForms` keeps them): the
questions in Preflights' wording, its options with "Other (specify)" and the text field beside
it, answered through Preflights' application as ``user_web``, so the ADR and task it writes
record that the person answered on the page. A refusal (C5) is shown above the form again and
records nothing; the last page shows the decision written (or that there is none).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any, Final, cast

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.integrations.preflights.forms import PreflightsForms, Result, ended
from preflight_fsm.mcp.rounds import Refusal, Round
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.web import PAGE_PATH, AnswerPage, LinkBook, PageReply
from preflight_fsm.web.html import document, questions_page
from preflight_fsm.web.links import Grant

if TYPE_CHECKING:
    from preflight_fsm.store import Sessions

__all__ = ["PreflightsPage", "outcome_page"]

_KINDS: Final = {
    "adr": "Decision record (ADR)",
    "task": "Task",
    "projection": "Architecture state",
}
"""How the last page names each kind of file Preflights wrote."""


class PreflightsPage(AnswerPage):
    """The answer page over the rounds ``forms`` asks (no engine sessions of its own)."""

    def __init__(
        self, forms: PreflightsForms, links: LinkBook | None = None, base_url: str | None = None
    ) -> None:
        super().__init__(cast("Sessions", None), links, base_url)
        self.forms = forms
        self._stepping = threading.Lock()  # one round answered at a time

    def link(self, session_id: str, principal: str | None = None) -> str | None:
        """A new link to the session's current round (None once it has ended here)."""
        asked = self.forms.current(session_id)
        if asked is None:
            return None
        return self._url(self.links.issue(session_id, asked.version, asked.turn, principal))

    def until_finished(self, session_id: str, timeout: float) -> Any:
        """Wait while the person answers round after round: the session's outcome (Preflights'
        result), or None when a round went unanswered for ``timeout`` seconds."""
        while True:
            found = self.forms.outcome(session_id)
            if found is not None:
                return found
            asked = self.forms.current(session_id)
            if asked is None or not self.wait(session_id, asked.version, timeout):
                return None

    def _granted_form(self, token: str, grant: Grant, problem: str | None = None) -> PageReply:
        asked = self._round(grant)
        if isinstance(asked, PageReply):
            return asked
        return PageReply(422 if problem else 200, self._page(asked, token, grant, problem))

    def _take_form(self, token: str, grant: Grant, form: Mapping[str, Sequence[str]]) -> PageReply:
        """Answer the round with the posted ``form``: the next round, the decision, or the same
        form with the refusal (nothing recorded)."""
        with self._stepping:
            asked = self._round(grant)
            if isinstance(asked, PageReply):
                return asked
            answers = self.answers_to(asked.questions, form)
            following = self._record(token, grant, asked, answers, self.answered_by)
        return self._reply(token, grant, asked, following)

    def _reply(
        self, token: str, grant: Grant, asked: Round, following: Round | Result | tuple[int, str]
    ) -> PageReply:
        """The page after ``asked`` was answered: the next round's, the refusal, the outcome."""
        if isinstance(following, Round):
            return PageReply(303, location=self.link_to(grant, following))
        if isinstance(following, tuple):
            status, problem = following
            return PageReply(status, self._page(asked, token, grant, problem))
        return PageReply(200, outcome_page(asked.intention, following))

    def _record(
        self,
        token: str,
        grant: Grant,
        asked: Round,
        answers: dict[str, object],
        answered_by: AnsweredBy,
        proof: PasskeyProof | None = None,
    ) -> Round | Result | tuple[int, str]:
        """Answer ``asked`` (holding ``_stepping``): the next round, the result ending the
        session, or (status, why) when nothing was recorded."""
        following = self.forms.step(asked, answers, answered_by, grant.principal, proof)
        if isinstance(following, Refusal):
            return 422, following.problem
        if isinstance(following, dict) and not ended(following):
            return 409, str((following.get("error") or {}).get("message", "not recorded"))
        self.links.spend(token)
        with self._changed:
            self._stepped[grant.session_id] = asked.version + 1
            self._changed.notify_all()
        return following

    def link_to(self, grant: Grant, following: Round) -> str:
        """The link to the round that follows the one ``grant`` was for."""
        issued = self.links.issue(
            grant.session_id, following.version, following.turn, grant.principal
        )
        return self._url(issued)

    def _round(self, grant: Grant) -> Round | PageReply:
        """The round the grant is for, if the session still waits for it."""
        asked = self.forms.current(grant.session_id)
        if asked is None or asked.version != grant.version:
            return self.gone("used")
        return asked

    def _page(self, asked: Round, token: str, grant: Grant, problem: str | None = None) -> str:
        return questions_page(
            asked.intention, asked.turn, asked.questions, PAGE_PATH + token, grant.csrf, problem
        )


def outcome_page(intention: str, result: Result) -> str:
    """The last page: the decision files Preflights wrote, or why there is no decision."""
    if result.get("status") == "completed":
        files = "".join(
            f"<dt>{escape(_KINDS.get(str(a.get('type')), 'File'))}</dt>"
            f"<dd>{escape(str(a.get('path')))}</dd>"
            for a in result.get("artifacts_created") or ()
        )
        summary = escape(str(result.get("summary") or "Decision recorded."))
        outcome = f"<p>{summary}</p><dl>{files}</dl>"
    else:
        message = (result.get("error") or {}).get("message") or "the session ended"
        outcome = f"<p>No decision was recorded: {escape(str(message))}</p>"
    body = (
        "<h1>Thank you: the session is finished</h1>\n"
        '<h2 id="intention-label">What was decided</h2>\n'
        f'<p class="intention" aria-labelledby="intention-label">{escape(intention)}</p>\n'
        f'<div class="decision" role="status">{outcome}</div>\n'
        "<p>You can close this page.</p>\n"
    )
    return document("Decided: " + intention[:60], body)
