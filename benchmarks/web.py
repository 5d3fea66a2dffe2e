"""The answer page's server work (issue 28): CPU per request, beside the MCP groups' form rounds.

In process, without the HTTP stack: ``AnswerPage.show`` (a GET: the link looked up, the session
loaded, the form rendered) and one answered turn (a link issued, then ``AnswerPage.answer``: the
form's token checked, the step taken and written, the link spent, the next link issued), on the
in-memory store, so the figures are the page's own work. Thread CPU time, medians over rounds
(``timing.py``); compare with ``mcp.stdio.ours.server_cpu``, a form round's server CPU over MCP.
"""

from __future__ import annotations

from benchmarks.report import Figure
from benchmarks.timing import median_per_call
from preflight_fsm import ClarificationMachine
from preflight_fsm.store import Sessions
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.web import AnswerPage

__all__ = ["web_figures"]

US = 1e6
FORM = {"change_category": ["Database"], "action": ["answer"]}


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
    ]
