"""Who calls the HTTP server, and which sessions they may touch (docs/deploy.md).

Authentication goes through the SDK's own hooks: a token verifier (``tokens.py``, ``oidc.py``,
or both) and ``AuthSettings``, from which the SDK answers 401 with ``WWW-Authenticate`` and, for
an identity provider, publishes the protected-resource metadata (RFC 9728). A tool reads the
caller with :func:`current_caller`; :meth:`Caller.may_use` is the one rule of ownership: a
session belongs to the principal that started it and to that principal's team, and to anyone
else it does not exist (``session_not_found``, exactly as for an id never issued).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings

__all__ = ["Caller", "ServerAuth", "TokenVerifiers", "current_caller"]


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated principal of a call (None: the server has no authentication) and
    the team the operator grouped it in."""

    principal: str | None = None
    team: str | None = None

    def may_use(self, owner: str | None, teams: Mapping[str, str]) -> bool:
        """Whether this caller may read, answer or delete a session ``owner`` started."""
        if self.principal is None:
            return True  # no authentication: one operator's server (refused off loopback)
        if owner is None:
            return False  # started unauthenticated (the CLI, a local server): no one's here
        if owner == self.principal:
            return True
        team = teams.get(owner)
        return team is not None and team == self.team


def current_caller(teams: Mapping[str, str]) -> Caller:
    """The caller of the request being served (through the SDK's auth context)."""
    token = get_access_token()
    if token is None:
        return Caller()
    principal = token.subject or token.client_id
    return Caller(principal, teams.get(principal))


class TokenVerifiers:
    """Several verifiers as one (a tokens file and an issuer): the first that knows the token."""

    def __init__(self, verifiers: Sequence[TokenVerifier]) -> None:
        self.verifiers = tuple(verifiers)

    async def verify_token(self, token: str) -> AccessToken | None:
        for verifier in self.verifiers:
            found = await verifier.verify_token(token)
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class ServerAuth:
    """What the SDK needs to authenticate every request, and the operator's teams."""

    settings: AuthSettings
    verifier: TokenVerifier
    teams: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        verifiers: Sequence[TokenVerifier],
        public_url: str,
        issuer: str | None,
        teams: Mapping[str, str],
    ) -> ServerAuth:
        """Auth for a server reached at ``public_url``; with an ``issuer`` the protected-resource
        metadata names it (clients then know where to get a token)."""
        settings = AuthSettings(
            issuer_url=issuer or public_url,
            resource_server_url=public_url if issuer else None,
            # The OIDC verifier checks the audience itself (oidc.py); tokens-file tokens have none.
            validate_token_resource=False if issuer else None,
        )
        verifier = verifiers[0] if len(verifiers) == 1 else TokenVerifiers(verifiers)
        return cls(settings, verifier, dict(teams))
