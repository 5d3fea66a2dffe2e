"""Rounds answered on the answer page (``--answers-from web`` and ``person``; docs/web.md,
docs/mcp.md).

The page is one more way to collect a round's answers (``rounds.py`` hands every round to it
under ``web`` and ``person``): the person answers each turn in their browser, recorded
``user_web`` (under ``person`` the page is a :class:`~preflight_fsm.web.signing.SignedAnswerPage`
and each turn is confirmed with their passkey, recorded ``user_passkey``), and the call returns
the outcome once the session has ended. Under ``user`` the page gives the person a link when no
form reaches them. How the link reaches the person:

- a client that declares URL-mode elicitation gets it that way, so the agent never sees it:
  handshake-era ``elicitation/create`` with ``mode: "url"`` inside the call; a 2026-07-28 client
  an input-required round carrying a URL-mode ``ElicitRequest``, and the outcome when it calls
  back;
- any other client gets ``answers_need_user`` with the link in the hint, to show to the person;
  a later call with the ``session_id`` returns the outcome once they have answered (or a fresh
  link while the session still waits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import ElicitRequest, ElicitRequestURLParams, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from preflight_fsm.mcp.auth import current_caller
from preflight_fsm.mcp.elicitation import ANSWER_KEY
from preflight_fsm.mcp.policy import NEED_USER_ON_PAGE, SIGNED, AnswersFrom
from preflight_fsm.mcp.request_state import RoundSealer, RoundState

if TYPE_CHECKING:  # the page's modules (starlette, WebAuthn) load only where a page is served
    from preflight_fsm.web import AnswerPage, PageListener

__all__ = ["PageRounds", "can_open_urls", "waiting_message"]

PAGE_MESSAGE: Final = (
    "preflight-fsm needs your decision before code is written: open this page to answer "
    "(the link is for you alone and works once)."
)


PAGE_PORT_TAKEN: Final = (
    "The person answers on this server's answer page, served on localhost:{port} (under "
    "--answers-from person the port their passkeys were enrolled on, which no other port can "
    "replace). Another program holds it (another agent session's preflight-fsm server, say): "
    "ask the person to end that one, then call require_clarification with session_id "
    "{session_id!r} and no answers for the page's link."
)


def can_open_urls(ctx: Context[Any]) -> bool:
    """True when the client declared URL-mode elicitation (it shows the person a URL)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and elicitation.url is not None


class PageRounds:
    """A server's rounds on ``page``, served as a route of the HTTP server or by ``listener``
    (the stdio server's loopback listener, started with the first link)."""

    def __init__(self, page: AnswerPage, listener: PageListener | None = None) -> None:
        self.page = page
        self.listener = listener

    def _link(self, session_id: str) -> str | None:
        """A link to the session's current turn (None once it has ended); OSError when the
        listener cannot listen (its port is taken)."""
        if self.listener is not None:
            self.listener.start()
        # The principal of a page answer is the authenticated caller that asked for its link
        # (docs/decisions.md D267): the link is a capability handed to that caller's client.
        return self.page.link(session_id, current_caller({}).principal)

    async def link(self, session_id: str) -> str | None:
        """A new link to the session's current turn (None once it has ended)."""
        return await anyio.to_thread.run_sync(self._link, session_id)

    async def ask(self, ctx: Context[Any], host: Any, asked: Any, sealer: RoundSealer) -> Any:
        """The round ``asked`` (a ``rounds.Round``) put on the page; what the call returns."""
        try:
            link = await anyio.to_thread.run_sync(self._link, asked.session_id)
        except OSError as error:
            return self._unserved(host, asked.session_id, error)
        if link is None:  # it ended meanwhile
            return await self._outcome(host, asked.session_id)
        if not can_open_urls(ctx):
            level: AnswersFrom = host.answers_from
            return host.failure(
                "answers_need_user",
                waiting_message(level, asked.turn, asked.before),
                asked.session_id,
                hint=_on_page_hint(level, link, asked.session_id),
            )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            state = RoundState(asked.session_id, asked.version, asked.turn, 0)
            request = ElicitRequest(params=ElicitRequestURLParams(message=PAGE_MESSAGE, url=link))
            return InputRequiredResult(
                input_requests={ANSWER_KEY: request}, request_state=sealer.seal(state)
            )
        reply = await ctx.elicit_url(PAGE_MESSAGE, link, f"{asked.session_id}:{asked.turn}")
        if reply.action != "accept":
            return self._declined(host, asked.session_id, link)
        return await self._after_page(host, asked.session_id, link)

    async def resume(self, ctx: Context[Any], host: Any, state: RoundState) -> Any:
        """A 2026-07-28 URL round coming back: the outcome once the person has answered."""
        response = (ctx.input_responses or {}).get(ANSWER_KEY)
        action = getattr(response, "action", None)
        if action != "accept":
            try:
                link = await anyio.to_thread.run_sync(self._link, state.session_id)
            except OSError as error:
                return self._unserved(host, state.session_id, error)
            return self._declined(host, state.session_id, link)
        return await self._after_page(host, state.session_id, None)

    async def _after_page(self, host: Any, session_id: str, link: str | None) -> Any:
        """Wait while the person answers (each turn within a link's lifetime), then the
        session's outcome; an unanswered turn ends the call with a fresh link."""
        finished = await anyio.to_thread.run_sync(
            self.page.until_finished, session_id, self.page.links.ttl, abandon_on_cancel=True
        )
        if finished is None:
            fresh = await anyio.to_thread.run_sync(self._link, session_id)
            return self._declined(host, session_id, fresh)
        return await self._outcome(host, session_id)

    async def _outcome(self, host: Any, session_id: str) -> Any:
        position = await host.reopen_latest(session_id)
        return position

    def _unserved(self, host: Any, session_id: str, error: OSError) -> Any:
        """The page cannot be served: its loopback port is taken (under ``person`` the port the
        passkeys were enrolled on, by another server's page, say). Nothing was recorded; the
        next call tries again."""
        port = self.listener.port if self.listener is not None else 0
        return host.failure(
            "answers_need_user",
            f"the answer page cannot be served on localhost:{port} ({error.strerror or error}): "
            "another program holds the port; nothing was recorded",
            session_id,
            hint=PAGE_PORT_TAKEN.format(port=port, session_id=session_id),
        )

    @staticmethod
    def _declined(host: Any, session_id: str, link: str | None) -> Any:
        return host.failure(
            "answers_need_user",
            "the person did not answer on the answer page (declined, closed, or the link "
            "expired); nothing more was recorded",
            session_id,
            hint=_on_page_hint(host.answers_from, link or "(ask again)", session_id),
        )


def waiting_message(level: AnswersFrom, turn: int, before: str | None) -> str:
    """What an agent's call learns while turn ``turn`` waits for the person on the page: what
    is recorded (the turns before it, the last one ``before``) and what waits."""
    on_page = f"the person on the answer page{SIGNED if level == 'person' else ''}"
    waits = f"turn {turn} waits for {on_page} (--answers-from {level})"
    if turn <= 1:
        return f"{waits}; nothing is recorded yet"
    how = f" ({before})" if before else ""
    if turn == 2:
        return f"turn 1 recorded{how}; {waits}"
    last = f" (turn {turn - 1} {before})" if before else ""
    return f"turns 1-{turn - 1} recorded{last}; {waits}"


def _on_page_hint(level: AnswersFrom, link: str, session_id: str) -> str:
    signed = SIGNED if level == "person" else ""
    return NEED_USER_ON_PAGE.format(signed=signed, level=level, link=link, session_id=session_id)
