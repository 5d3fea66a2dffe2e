"""A store location's secrets: the passwords a URL carries, and the URL as it may be shown.

Every store whose location is a URL (Redis, PostgreSQL, a third party's) prints its location only
through :func:`redacted` and scrubs what its driver says with :func:`secrets_of`: a password
never reaches a message, a log or a file.
"""

from __future__ import annotations

import re
import urllib.parse
from contextlib import suppress

__all__ = ["redacted", "secrets_of"]

# The user part of a URL (up to its last "@" before the path), and a password in its query, as
# redis-py and libpq read them (``redis://:pw@host``, ``unix://:pw@/path``, ``...?password=pw``).
# Found by pattern, not by urllib, so that a URL urllib refuses (``redis://:pw@[::1/0``) is
# redacted too.
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^/?#:@]*):(?P<pw>[^/?#]*)@")
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&;]password=)(?P<pw>[^&;#]*)", re.IGNORECASE)


def secrets_of(url: str) -> list[str]:
    """Every password ``url`` carries, as written and percent-decoded, longest first."""
    found = [m.group("pw") for m in _QUERY_PASSWORD.finditer(url)]
    userinfo = _USERINFO.match(url)
    if userinfo is not None:
        found.append(userinfo.group("pw"))
    with suppress(ValueError):  # what urllib reads, where it differs from the patterns
        found.append(urllib.parse.urlsplit(url).password or "")
    decoded = [urllib.parse.unquote(secret) for secret in found]
    return sorted({s for s in found + decoded if s}, key=len, reverse=True)


def redacted(url: str) -> str:
    """``url`` with every password (its user part's, a ``password=`` in its query) as ``***``.

    >>> redacted("unix://:s3cret@/run/redis.sock?db=0&password=s3cret")
    'unix://:***@/run/redis.sock?db=0&password=***'
    """
    shown = _QUERY_PASSWORD.sub(r"\g<key>***", url)
    userinfo = _USERINFO.match(shown)
    if userinfo is not None:
        shown = shown[: userinfo.start("pw")] + "***" + shown[userinfo.end("pw") :]
    for secret in secrets_of(url):  # one urllib reads elsewhere, or quoted twice
        if secret != "***":
            shown = shown.replace(secret, "***")
    return shown
