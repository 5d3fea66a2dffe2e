"""The tokens file (``mcp --tokens FILE``): bearer tokens the operator hands out, kept hashed.

One ``[[token]]`` table per token: the ``principal`` it authenticates (recorded on every step
its holder answers), an optional ``team`` (principals of one team share their sessions), and
the SHA-256 of the token. ``[[team]]`` tables (``name``, ``members``) group principals that have
no token here, such as an identity provider's subjects (``--oidc-issuer``). The token itself is
printed once by ``preflight-fsm tokens add`` and never stored: a copy of the file lets no one
in. Tokens are 256 random bits, so one unsalted SHA-256 is what they need (a slow hash guards
guessable passwords, which these are not).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Final

from mcp.server.auth.provider import AccessToken

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.errors import PreflightFsmError
from preflight_fsm.principal import PRINCIPAL_REQUIREMENT, principal_problem

__all__ = [
    "TOKEN_PREFIX",
    "InvalidTokensFile",
    "TokenHolder",
    "TokensFile",
    "add_token",
    "read_tokens",
    "token_digest",
]

TOKEN_PREFIX: Final = "pfsm_"
"""Every token starts so: a secret scanner (and a person) can tell what leaked."""

MAX_TOKENS_FILE: Final = 1024 * 1024
_KEYS: Final = frozenset({"principal", "team", "sha256"})


class InvalidTokensFile(PreflightFsmError, ValueError):
    """The tokens file cannot be used; the message names the file, the entry and the fix."""

    code: ClassVar[str] = "invalid_tokens_file"


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """Who a token authenticates."""

    principal: str
    team: str | None = None


@dataclass(frozen=True)
class TokensFile:
    """The tokens of one file, by digest, and the teams of principals without a token here
    (an identity provider's subjects), by principal."""

    holders: dict[str, TokenHolder]
    members: dict[str, str] = field(default_factory=dict)

    def holder(self, token: str) -> TokenHolder | None:
        return self.holders.get(token_digest(token))

    def teams(self) -> dict[str, str]:
        """Each principal's team, for those the operator grouped."""
        found = {h.principal: h.team for h in self.holders.values() if h.team is not None}
        return {**found, **self.members}


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def read_tokens(path: Path) -> TokensFile:
    """The tokens in ``path``; InvalidTokensFile naming what is wrong."""
    try:
        raw = read_bounded(path, MAX_TOKENS_FILE)
    except OSError as exc:
        raise InvalidTokensFile(
            f"cannot read the tokens file {path} ({exc.strerror or exc}): create it with "
            f"preflight-fsm tokens add NAME --tokens {path}"
        ) from None
    except Unreadable as exc:
        raise InvalidTokensFile(f"the tokens file {path} {exc.problem}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidTokensFile(f"the tokens file {path} is not TOML: {exc}") from None
    unknown = sorted(set(data) - {"token", "team"})
    entries = data.get("token", [])
    if unknown or not isinstance(entries, list):
        raise InvalidTokensFile(
            f"the tokens file {path} holds {', '.join(unknown) or 'token'} where only "
            "[[token]] and [[team]] tables belong"
        )
    holders: dict[str, TokenHolder] = {}
    for number, entry in enumerate(entries, start=1):
        holder, digest = _entry(path, number, entry)
        if digest in holders:
            raise InvalidTokensFile(f"{path}: token {number} repeats an earlier token's sha256")
        holders[digest] = holder
    members = _members(path, data.get("team", []))
    for holder in holders.values():
        grouped = members.get(holder.principal)
        if holder.team is not None and grouped is not None and grouped != holder.team:
            raise InvalidTokensFile(
                f"{path}: {holder.principal} is in team {holder.team} (its token) and in team "
                f"{grouped} ([[team]]); a principal belongs to one team"
            )
    return TokensFile(holders, members)


def _members(path: Path, teams: object) -> dict[str, str]:
    """``[[team]]`` tables (``name``, ``members``: principals, such as an identity provider's
    subjects, that have no token in this file) as principal -> team."""
    if not isinstance(teams, list):
        raise InvalidTokensFile(f"{path}: team must be [[team]] tables (name, members)")
    members: dict[str, str] = {}
    for number, team in enumerate(teams, start=1):
        where = f"{path}: team {number}"
        if not isinstance(team, dict) or set(team) != {"name", "members"}:
            raise InvalidTokensFile(f"{where} must hold exactly name and members")
        name, listed = team["name"], team["members"]
        if not isinstance(listed, list):
            raise InvalidTokensFile(f"{where}: members must be a list of principals")
        for value in (name, *listed):
            problem = principal_problem(value)
            if problem is not None:
                raise InvalidTokensFile(f"{where}: {value!r} {problem}")
        for member in listed:
            if members.get(member, name) != name:
                raise InvalidTokensFile(
                    f"{where}: {member} is already in team {members[member]}; a principal "
                    "belongs to one team"
                )
            members[member] = name
    return members


def _entry(path: Path, number: int, entry: object) -> tuple[TokenHolder, str]:
    where = f"{path}: token {number}"
    if not isinstance(entry, dict) or set(entry) - _KEYS:
        extra = sorted(set(entry) - _KEYS) if isinstance(entry, dict) else []
        raise InvalidTokensFile(f"{where} holds {extra or entry!r}; keys: principal, team, sha256")
    principal, team, digest = entry.get("principal"), entry.get("team"), entry.get("sha256")
    for name, value in (("principal", principal), ("team", team)):
        if value is None and name == "team":
            continue
        problem = principal_problem(value)
        if problem is not None:
            raise InvalidTokensFile(f"{where}: {name} {problem}; send {PRINCIPAL_REQUIREMENT}")
    valid_digest = isinstance(digest, str) and len(digest) == 64
    if not valid_digest or not all(c in "0123456789abcdef" for c in str(digest)):
        raise InvalidTokensFile(f"{where}: sha256 must be 64 lower-case hex digits")
    assert isinstance(principal, str)
    assert isinstance(digest, str)
    return TokenHolder(principal, team if isinstance(team, str) else None), digest


def add_token(path: Path, principal: str, team: str | None = None) -> str:
    """A new token for ``principal`` (in ``team``), its digest appended to ``path`` (created
    readable by its owner only); the token, to be printed once."""
    for name, value in (("principal", principal), ("team", team)):
        problem = None if value is None else principal_problem(value)
        if problem is not None:
            raise InvalidTokensFile(f"the {name} {value!r} {problem}")
    if path.exists():
        read_tokens(path)  # a broken file is reported, not appended to
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    lines = ["", "[[token]]", f"principal = {_toml_string(principal)}"]
    if team is not None:
        lines.append(f"team = {_toml_string(team)}")
    lines.append(f'sha256 = "{token_digest(token)}"')
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(descriptor, "a", encoding="utf-8") as stream:
        stream.write("\n".join(lines) + "\n")
    return token


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class TokensVerifier:
    """The SDK's token verifier over a tokens file."""

    def __init__(self, tokens: TokensFile) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        holder = self.tokens.holder(token)
        if holder is None:
            return None
        claims = {"team": holder.team} if holder.team is not None else {}
        return AccessToken(
            token=token,
            client_id=holder.principal,
            subject=holder.principal,
            scopes=[],
            claims=claims,
        )
