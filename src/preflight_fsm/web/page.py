"""The answer page as a service: links for a session's turn, the page for a link, the step
its form posts, and waiting for the person (docs/web.md).

Nothing here speaks HTTP (``app.py`` does): each method takes what the request carried and
returns a :class:`PageReply`. Store work is blocking; the app runs these methods in a thread.
An answer through the page is recorded as ``user_web``; a failed step changes nothing and
leaves the link good for another try.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from preflight_fsm.answered_by import AnsweredBy
from preflight_fsm.errors import InvalidAnswers, PreflightFsmError, SessionConflict
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.store import Sessions
from preflight_fsm.turn import Question
from preflight_fsm.web.html import CSRF_FIELD, DECLINE, decision_page, notice_page, turn_page
from preflight_fsm.web.links import Grant, LinkBook, LinkProblem

__all__ = ["PAGE_PATH", "AnswerPage", "PageReply"]

PAGE_PATH: Final = "/answer/"
"""Where the page's links live on the server that serves it: ``PAGE_PATH + token``."""

_GONE: Final[dict[LinkProblem, tuple[str, str]]] = {
    "unknown": (
        "This link is not valid",
        "This server never issued this link (it may be mistyped or altered, or belong to "
        "another server). Nothing was changed. Ask for a new link.",
    ),
    "expired": (
        "This link has expired",
        "Links to the answer page are good for a limited time. Nothing was changed. Ask for a "
        "new link.",
    ),
    "used": (
        "This link was already used",
        "Each link answers one turn once, and this turn has been answered. Nothing was changed. "
        "Ask for a new link if the session still waits for you.",
    ),
}


@dataclass(frozen=True, slots=True)
class PageReply:
    """What the app sends: a status and a page, or a redirect to ``location``."""

    status: int
    html: str = ""
    location: str | None = None


class AnswerPage:
    """The page over ``sessions``; ``base_url`` is the origin the person's browser uses
    (``http://localhost:PORT``, no path), set by whoever serves the page."""

    answered_by: AnsweredBy = "user_web"

    def __init__(
        self, sessions: Sessions, links: LinkBook | None = None, base_url: str | None = None
    ) -> None:
        self.sessions = sessions
        self.links = links or LinkBook()
        self.base_url = base_url
        self._stepped: dict[str, int] = {}
        self._changed = threading.Condition()

    # -- for the front ends ------------------------------------------------------------------

    def link(self, session_id: str, principal: str | None = None) -> str | None:
        """A new link to the session's current turn (None once it has ended)."""
        machine, record = self.sessions.load(session_id)
        if machine.finished:
            return None
        return self._url(
            self.links.issue(session_id, record.version, machine.turn.number, principal)
        )

    def wait(self, session_id: str, version: int, timeout: float) -> bool:
        """Wait until the page has stepped ``session_id`` past stored ``version``; False when
        ``timeout`` seconds passed first."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._stepped.get(session_id, 0) > version, timeout
            )

    def until_finished(self, session_id: str, timeout: float) -> ClarificationMachine | None:
        """Wait while the person answers turn after turn on the page: the finished session, or
        None when a turn went unanswered for ``timeout`` seconds."""
        while True:
            machine, record = self.sessions.load(session_id)
            if machine.finished:
                return machine
            if not self.wait(session_id, record.version, timeout):
                return None

    # -- for the app ---------------------------------------------------------------------------

    def show(self, token: str) -> PageReply:
        """The page of ``token``: its turn's form, or why the link grants nothing."""
        grant = self.links.find(token)
        if isinstance(grant, str):
            return self.gone(grant)
        return self._granted_form(token, grant)

    def answer(self, token: str, form: Mapping[str, Sequence[str]]) -> PageReply:
        """Take the posted ``form`` as the answers of the link's turn (:meth:`_take_form`): the
        next turn, the decision, or the same form with the refusal (nothing recorded); refused
        first for a link that grants nothing or a form without the page's token."""
        grant = self.links.find(token)
        if isinstance(grant, str):
            return self.gone(grant)
        refused = self.csrf_refused(grant, form)
        if refused is not None:
            return refused
        return self._take_form(token, grant, form)

    # -- what a page over other rounds supplies (integrations/preflights/page.py) -------------

    def _granted_form(self, token: str, grant: Grant, problem: str | None = None) -> PageReply:
        """The form of the turn ``grant`` is for, ``problem`` above it (a refusal: 422), or why
        the session no longer waits for that turn."""
        loaded = self._current(grant)
        if isinstance(loaded, PageReply):
            return loaded
        return PageReply(422 if problem else 200, self._form(loaded, token, grant, problem))

    def _take_form(self, token: str, grant: Grant, form: Mapping[str, Sequence[str]]) -> PageReply:
        """The posted ``form`` taken as the step of the turn ``grant`` is for (its link and
        token already checked): the next turn's link, the decision, or the refusal."""
        loaded = self._current(grant)
        if isinstance(loaded, PageReply):
            return loaded
        machine = loaded
        answers = self._answers(machine, form)
        try:
            machine.step(answers, self.answered_by, principal=grant.principal)
            record = self.sessions.save(grant.session_id, machine, grant.version)
        except InvalidAnswers as error:
            return self._granted_form(token, grant, str(error))
        except SessionConflict:
            return self.gone("used")
        self.links.spend(token)
        with self._changed:
            self._stepped[grant.session_id] = record.version
            self._changed.notify_all()
        if machine.finished:
            return PageReply(200, decision_page(machine.intention, machine.turn))
        following = self.links.issue(
            grant.session_id, record.version, machine.turn.number, grant.principal
        )
        return PageReply(303, location=self._url(following))

    # -- the parts -----------------------------------------------------------------------------

    @staticmethod
    def csrf_refused(grant: Grant, form: Mapping[str, Sequence[str]]) -> PageReply | None:
        """The refusal of a ``form`` that does not carry the link's cross-site token."""
        sent = form.get(CSRF_FIELD, ())
        if len(sent) == 1 and secrets.compare_digest(sent[0], grant.csrf):
            return None
        return PageReply(
            403,
            notice_page(
                "This form was refused",
                "The form did not carry this page's token (was it sent from another site?). "
                "Nothing was changed. Reload the page and answer again.",
            ),
        )

    def _url(self, token: str) -> str:
        return f"{(self.base_url or '').rstrip('/')}{PAGE_PATH}{token}"

    def gone(self, why: LinkProblem) -> PageReply:
        title, message = _GONE[why]
        return PageReply(410 if why != "unknown" else 404, notice_page(title, message))

    def _current(self, grant: Grant) -> ClarificationMachine | PageReply:
        """The session the grant is for, if it still stands at the granted version."""
        try:
            machine, record = self.sessions.load(grant.session_id)
        except PreflightFsmError:
            return self.gone("unknown")
        if record.version != grant.version or machine.finished:
            return self.gone("used")
        return machine

    def _form(
        self, machine: ClarificationMachine, token: str, grant: Grant, problem: str | None = None
    ) -> str:
        return turn_page(machine.intention, machine.turn, PAGE_PATH + token, grant.csrf, problem)

    @staticmethod
    def _answers(
        machine: ClarificationMachine, form: Mapping[str, Sequence[str]]
    ) -> dict[str, object]:
        """The turn's answers from the form: only its questions' fields, a blank companion
        left out; a decline is the asked question answered blank (C5)."""
        return AnswerPage.answers_to(machine.turn.questions, form)

    @staticmethod
    def answers_to(
        questions: Sequence[Question], form: Mapping[str, Sequence[str]]
    ) -> dict[str, object]:
        """The answers ``form`` gives ``questions`` (as :meth:`_answers`, for any front end's
        round)."""
        if DECLINE in form.get("action", ()):
            asked = next(q for q in questions if q.depends_on_question_id is None)
            return {asked.id: ""}
        answers: dict[str, object] = {}
        for q in questions:
            values = [v for v in form.get(q.id, ()) if v.strip()]
            if not values:
                continue
            answers[q.id] = list(values) if q.type == "multi_choice" else values[-1]
        return answers
