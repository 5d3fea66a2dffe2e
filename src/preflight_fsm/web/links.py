"""The answer page's links: capabilities for one turn of one session (docs/web.md).

A link's token is 256 random bits (``secrets``); the book keeps only its SHA-256, with what the
link grants: one session, the stored version it was issued at (so one turn), who asked for it,
when it expires and the form's cross-site token. A link is spent by the step it carries;
a spent or expired link is remembered, so the page can say "used" or "expired" rather than
"unknown". The book is bounded: past :data:`MAX_LINKS` links of either kind the oldest is
dropped.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "DEFAULT_LINK_TTL",
    "ENROLL_PATH",
    "MAX_LINKS",
    "TOKEN_BYTES",
    "Grant",
    "LinkBook",
    "LinkProblem",
]

TOKEN_BYTES: Final = 32
"""Random bytes in a link's token (256 bits; at least 128 are required)."""
DEFAULT_LINK_TTL: Final = 15 * 60.0
"""Seconds a link stays good (``--link-ttl``)."""
ENROLL_PATH: Final = "/enroll/"
"""Where an enrollment link's token follows (``enroll.py``); kept out of access logs like the
answer page's."""
MAX_LINKS: Final = 10_000
"""Live links one book keeps; issuing more drops the oldest."""

LinkProblem = Literal["unknown", "expired", "used"]
"""Why a link grants nothing: never issued here (tampered, foreign), past its time, or spent."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What one link allows: answering ``turn`` of ``session_id`` at stored ``version``."""

    session_id: str
    version: int
    turn: int
    expires: float
    csrf: str
    principal: str | None = None


def _key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class LinkBook:
    """Issues, finds and spends links; thread-safe (the page may run in a thread of its own)."""

    def __init__(
        self,
        ttl: float = DEFAULT_LINK_TTL,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_links: int = MAX_LINKS,
    ) -> None:
        if ttl <= 0:
            raise ValueError(f"a link's lifetime must be positive seconds, not {ttl!r}")
        self.ttl = ttl
        self.clock = clock
        self.max_links = max_links
        self._live: OrderedDict[str, Grant] = OrderedDict()
        self._gone: OrderedDict[str, LinkProblem] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self, session_id: str, version: int, turn: int, principal: str | None = None) -> str:
        """A new token granting ``turn`` of ``session_id`` at ``version``."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        grant = Grant(
            session_id,
            version,
            turn,
            self.clock() + self.ttl,
            secrets.token_urlsafe(TOKEN_BYTES),
            principal,
        )
        with self._lock:
            self._forget_expired()
            self._live[_key(token)] = grant
            while len(self._live) > self.max_links:
                self._live.popitem(last=False)
        return token

    def find(self, token: str) -> Grant | LinkProblem:
        """The grant of ``token``, or why it grants nothing."""
        key = _key(token)
        with self._lock:
            self._forget_expired()
            return self._live.get(key) or self._gone.get(key, "unknown")

    def spend(self, token: str) -> bool:
        """Spend ``token`` (its step was taken); False if it was not live."""
        key = _key(token)
        with self._lock:
            if self._live.pop(key, None) is None:
                return False
            self._remember(key, "used")
        return True

    def _remember(self, key: str, why: LinkProblem) -> None:
        self._gone[key] = why
        while len(self._gone) > self.max_links:
            self._gone.popitem(last=False)

    def _forget_expired(self) -> None:
        now = self.clock()
        for key in [k for k, g in self._live.items() if g.expires <= now]:
            del self._live[key]
            self._remember(key, "expired")
