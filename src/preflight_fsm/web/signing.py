"""The answer page under ``--answers-from person``: every turn answered on the page and
confirmed with the person's passkey (docs/web.md).

The form is posted as under ``web``; the engine checks the answers without recording them
(``recorded_answers``: a refusal is shown on the form). The page then asks for the passkey:
``navigator.credentials.get`` over :func:`passkeys.step_challenge` (session id, step number,
answers, flow fingerprint), the people file's credentials allowed, user verification required.
Only a verified assertion steps the session, recorded ``user_passkey`` with the proof; a refused
or cancelled one records nothing and the page says why, and so does one whose signature counter
does not exceed the last one seen for its credential (a cloned authenticator, ``sign_counts.py``).

The answers waiting for their passkey are kept in memory, bounded like everything a network
client sends: at most :data:`MAX_PENDING` of them (the oldest dropped first), each for at most a
link's lifetime; a forgotten one is answered again on the form.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Final

from preflight_fsm.errors import InvalidAnswers, PasskeyRefused, SessionConflict
from preflight_fsm.passkeys import (
    assertion_options,
    proof_of,
    sign_count,
    step_challenge,
    verify_assertion,
)
from preflight_fsm.people import People
from preflight_fsm.proof import PasskeyProof
from preflight_fsm.sign_counts import SignCounts
from preflight_fsm.store import Sessions
from preflight_fsm.turn import Question
from preflight_fsm.web.html import CSRF_FIELD, document
from preflight_fsm.web.links import Grant, LinkBook
from preflight_fsm.web.page import PAGE_PATH, AnswerPage, PageReply
from preflight_fsm.web.script import SCRIPT_PATH

__all__ = ["FINISHED", "MAX_PENDING", "SIGN_SUFFIX", "Checked", "SignedAnswerPage"]

MAX_PENDING: Final = 1_000
"""Checked answers one page keeps waiting for their passkey; past it the oldest are dropped."""

SIGN_SUFFIX = "/sign"
"""Where a turn's assertion is posted: ``PAGE_PATH + token + SIGN_SUFFIX``."""


FINISHED: Final = "Signed and recorded: the session is finished. You can close this page."
"""What the page says once the last turn is signed."""


@dataclass(frozen=True, slots=True)
class Checked:
    """Answers checked as a turn's next step, waiting for the passkey: the challenge that signs
    them, and the intention and questions the confirm page shows them with."""

    answers: dict[str, Any]
    challenge: bytes
    intention: str
    questions: Sequence[Question]


class SignedAnswerPage(AnswerPage):
    """The answer page whose every step is signed by someone the people file lists."""

    answered_by = "user_passkey"

    def __init__(
        self,
        sessions: Sessions,
        people: People,
        links: LinkBook | None = None,
        base_url: str | None = None,
        rp_id: str = "localhost",
        *,
        max_pending: int = MAX_PENDING,
    ) -> None:
        super().__init__(sessions, links, base_url)
        self._signed_by(people, rp_id, max_pending)

    def _signed_by(self, people: People, rp_id: str, max_pending: int) -> None:
        """Sign with the passkeys ``people`` lists on ``rp_id``, keeping at most
        ``max_pending`` checked answers waiting for one."""
        self.people = people
        self.rp_id = rp_id
        self.max_pending = max_pending
        # Beside the people file as first given: it keeps its path when re-read (mcp --enroll).
        self.counts = SignCounts.beside(people)
        # By the link's hash: when the answers were checked, and the answers.
        self._pending: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def pending(self) -> int:
        """How many checked answers wait for their passkey now."""
        with self._lock:
            self._forget_old()
            return len(self._pending)

    def _keep(self, token: str, answers: dict[str, Any]) -> None:
        with self._lock:
            self._forget_old()
            self._pending.pop(_key(token), None)
            self._pending[_key(token)] = (self.links.clock(), answers)
            while len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)

    def _waiting(self, token: str) -> dict[str, Any] | None:
        with self._lock:
            self._forget_old()
            kept = self._pending.get(_key(token))
        return None if kept is None else kept[1]

    def _forget_old(self) -> None:
        """Drop answers older than a link's lifetime (their link has expired too)."""
        oldest = self.links.clock() - self.links.ttl
        while self._pending and next(iter(self._pending.values()))[0] <= oldest:
            self._pending.popitem(last=False)

    def _take_form(self, token: str, grant: Grant, form: Mapping[str, Sequence[str]]) -> PageReply:
        """Check the answers (nothing recorded) and ask for the passkey that confirms them."""
        checked = self._checked(token, grant, form)
        if isinstance(checked, PageReply):
            return checked
        self._keep(token, checked.answers)
        return PageReply(200, self._confirm(token, grant, checked))

    def _checked(
        self, token: str, grant: Grant, form: Mapping[str, Sequence[str]]
    ) -> Checked | PageReply:
        """The posted answers checked as the turn's next step (nothing recorded), with the
        challenge that signs them; else the page that says why not."""
        machine = self._current(grant)
        if isinstance(machine, PageReply):
            return machine
        answers = self._answers(machine, form)
        try:
            challenge = step_challenge(machine, grant.session_id, answers)
        except InvalidAnswers as error:
            return PageReply(422, self._form(machine, token, grant, str(error)))
        return Checked(answers, challenge, machine.intention, machine.turn.questions)

    def sign(self, token: str, posted: Any) -> tuple[int, str, str | None]:
        """Verify the posted assertion over the pending answers and take the step;
        (status, what the page says, where it goes next)."""
        grant = self.links.find(token)
        if isinstance(grant, str):
            return 410, f"This link grants nothing ({grant}). Nothing was recorded.", None
        if not isinstance(posted, dict) or not isinstance(posted.get(CSRF_FIELD), str):
            return 400, "Send the page's own request. Nothing was recorded.", None
        if not isinstance(posted.get("credential"), dict):
            said = "Nothing was recorded: these answers are taken only with your passkey"
            return 403, said + " (--answers-from person): press Sign with my passkey.", None
        if not secrets.compare_digest(posted[CSRF_FIELD], grant.csrf):
            return 403, "The request did not carry this page's token. Nothing was recorded.", None
        answers = self._waiting(token)
        if answers is None:
            return 409, "Nothing waits for a passkey here: answer the form again.", None
        try:
            return self._take(grant, token, answers, posted["credential"])
        except PasskeyRefused as error:
            said = f"Nothing was recorded: the passkey was refused ({error.reason}): {error}."
            return 403, said + " Sign these answers on this page with your own passkey.", None
        except InvalidAnswers as error:
            return 422, f"Not recorded: {error}", None
        except SessionConflict:
            return 410, "This turn was already answered. Nothing was recorded.", None

    def _proof(self, credential: Any, challenge: bytes) -> PasskeyProof:
        """The posted ``credential`` as a proof, verified over ``challenge`` with a passkey the
        people file lists, its signature counter above the last one seen (a clone's is not:
        ``sign_counts.py``); PasskeyRefused otherwise."""
        proof = proof_of(credential, self.people)
        verify_assertion(self.people, proof, challenge)
        self.counts.advance(proof.credential_id, sign_count(proof))
        return proof

    def _take(
        self, grant: Grant, token: str, answers: dict[str, Any], credential: Any
    ) -> tuple[int, str, str | None]:
        """Step the turn with ``answers`` signed by ``credential``: what ``sign`` returns."""
        machine = self._current(grant)
        if isinstance(machine, PageReply):
            return 409, "Nothing waits for a passkey here: answer the form again.", None
        proof = self._proof(credential, step_challenge(machine, grant.session_id, answers))
        machine.step(answers, self.answered_by, principal=grant.principal, proof=proof)
        record = self.sessions.save(grant.session_id, machine, grant.version)
        self._stepped_to(grant, record.version, token)
        if machine.finished:
            return 200, FINISHED, None
        following = self.links.issue(
            grant.session_id, record.version, machine.turn.number, grant.principal
        )
        return 200, "Signed and recorded.", self._url(following)

    def _forget(self, token: str) -> None:
        """No answers wait for a passkey on ``token`` any more."""
        with self._lock:
            self._pending.pop(_key(token), None)

    def _stepped_to(self, grant: Grant, version: int, token: str) -> None:
        self.links.spend(token)
        self._forget(token)
        with self._changed:
            self._stepped[grant.session_id] = version
            self._changed.notify_all()

    def _confirm(self, token: str, grant: Grant, checked: Checked) -> str:
        options = assertion_options(
            rp_id=self.rp_id,
            challenge=checked.challenge,
            credential_ids=[p.credential_id for p in self.people if p.rp_id == self.rp_id],
        )
        # The flow's wording: each question's text and the chosen options' labels, never ids.
        questions: dict[str, Question] = {q.id: q for q in checked.questions}
        shown = "".join(
            f"<dt>{escape(questions[k].question if k in questions else k)}</dt>"
            f"<dd>{escape(_shown(v))}</dd>"
            for k, v in checked.answers.items()
        )
        intention = checked.intention
        body = (
            "<h1>Confirm your answers with your passkey</h1>\n"
            f'<p class="intention">{escape(intention)}</p>\n'
            f"<dl>{shown}</dl>\n"
            "<p>Nothing is recorded until your passkey signs these answers.</p>\n"
            f'<div id="passkey" data-ceremony="get" data-options="{escape(options)}" '
            f'data-csrf="{escape(grant.csrf)}" '
            f'data-action="{escape(PAGE_PATH + token + SIGN_SUFFIX)}">\n'
            '<button type="button" id="passkey-button">Sign with my passkey</button>\n'
            '<p id="passkey-status" role="status" aria-live="polite"></p>\n</div>\n'
            f'<p><a href="{escape(PAGE_PATH + token)}">Change the answers</a></p>\n'
        )
        return document("Confirm: " + intention[:60], body, script=SCRIPT_PATH)


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "(declined)" if value == "" else str(value)


def _key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
