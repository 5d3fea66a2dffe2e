"""The answer page's server work (issue 28): CPU per request, beside the MCP groups' form rounds.

In process, without the HTTP stack: ``AnswerPage.show`` (a GET: the link looked up, the session
loaded, the form rendered) and one answered turn (a link issued, then ``AnswerPage.answer``: the
form's token checked, the step taken and written, the link spent, the next link issued), on the
in-memory store, so the figures are the page's own work. And one signed turn under
``--answers-from person`` (``SignedAnswerPage``): the form posted (the answers checked, the
WebAuthn challenge made, the confirm page rendered), then the assertion posted (checked by
py_webauthn, the step written with its proof, the next link issued); the assertion is made
beforehand, untimed, by a software passkey (``tests/software_authenticator.py``, real ECDSA), as
the person's authenticator would. Thread CPU time, medians over rounds (``timing.py``); compare
with ``mcp.stdio.ours.server_cpu``, a form round's server CPU over MCP.
"""

from __future__ import annotations

from typing import Any

from tests.software_authenticator import SoftwareAuthenticator

from benchmarks.report import Figure
from benchmarks.timing import batched, median_per_call
from preflight_fsm import ClarificationMachine
from preflight_fsm.passkeys import step_challenge
from preflight_fsm.people import People
from preflight_fsm.store import Sessions
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import AnswerPage
from preflight_fsm.web.html import CSRF_FIELD
from preflight_fsm.web.signing import SignedAnswerPage

__all__ = ["web_figures"]

US = 1e6
FORM = {"change_category": ["Database"], "action": ["answer"]}
ANSWERS = {"change_category": "Database"}
ADA = SoftwareAuthenticator(seed=1)


class Mismatch(AssertionError):
    """A benchmark measured something other than the behaviour it claims to measure."""


def web_figures(inner: int, rounds: int) -> list[Figure]:
    sessions = Sessions(MemoryStore())
    page = AnswerPage(sessions, base_url="http://localhost:8765")
    shown = sessions.create(ClarificationMachine("Add a thing"))
    token = page.link(shown.id).rsplit("/", 1)[1]  # type: ignore[union-attr]
    if page.show(token).status != 200:
        raise Mismatch("the page did not show the form")

    def one_get() -> object:
        return page.show(token)

    def one_turn() -> object:
        record = sessions.create(ClarificationMachine("Add a thing"))
        link = page.link(record.id)
        assert link is not None
        answered = link.rsplit("/", 1)[1]
        grant = page.links.find(answered)
        assert not isinstance(grant, str)
        return page.answer(answered, FORM | {"csrf_token": [grant.csrf]})

    reply = one_turn()
    if getattr(reply, "status", None) != 303:
        raise Mismatch(f"the turn was not answered: {reply}")
    get = median_per_call(one_get, inner=inner, rounds=rounds)
    turn = median_per_call(one_turn, inner=max(1, inner // 4), rounds=rounds)
    signed = _signed_turn(max(1, inner // 4), rounds)
    return [
        Figure(
            "web.page.get",
            get * US,
            "µs",
            note="one GET of a turn's page: link lookup, session load, the form rendered",
        ),
        Figure(
            "web.page.answered_turn",
            turn * US,
            "µs",
            note="one turn answered on the page: session created, link issued, the POST's step "
            "taken and written, next link issued (memory store)",
        ),
        Figure(
            "web.signed_turn",
            signed * US,
            "µs",
            note="one turn under --answers-from person: form posted (answers checked, challenge, "
            "confirm page), assertion posted (py_webauthn ES256, step written with its proof, "
            "next link issued); session and assertion made untimed; memory store",
        ),
    ]


def _signed_turn(inner: int, rounds: int) -> float:
    """Seconds of the page's CPU per signed turn; each turn's session and assertion made untimed."""
    sessions = Sessions(MemoryStore())
    page = SignedAnswerPage(
        sessions, People((ADA.person("Ada Lovelace"),)), base_url=ADA.origin, rp_id=ADA.rp_id
    )

    def make() -> tuple[str, dict[str, Any]]:
        record = sessions.create(ClarificationMachine("Add a thing"))
        machine, _ = sessions.load(record.id)
        return record.id, ADA.sign(step_challenge(machine, record.id, ANSWERS))

    def use(item: tuple[str, dict[str, Any]]) -> tuple[int, str, str | None]:
        session_id, credential = item
        link = page.link(session_id)
        assert link is not None
        token = link.rsplit("/", 1)[1]
        grant = page.links.find(token)
        assert not isinstance(grant, str)
        confirm = page.answer(token, FORM | {CSRF_FIELD: [grant.csrf]})
        if confirm.status != 200:
            raise Mismatch(f"the form did not ask for the passkey: {confirm}")
        return page.sign(token, {CSRF_FIELD: grant.csrf, "credential": credential})

    checked = make()
    reply = use(checked)
    machine, _ = sessions.load(checked[0])
    recorded = machine.snapshot()
    if reply[:2] != (200, "Signed and recorded.") or recorded.answered_by != ("user_passkey",):
        said = f"{reply}, answered_by {recorded.answered_by}"
        raise Mismatch(f"the turn was not recorded as user_passkey: {said}")
    if recorded.proofs[0] is None:
        raise Mismatch("the user_passkey step was recorded without its proof")
    return batched(make, use, inner=inner, rounds=rounds)
