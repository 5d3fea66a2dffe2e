"""A Redis store, for several worker processes and hosts sharing sessions (extra ``redis``).

Each session is one hash, ``<prefix><id>`` → ``version``, ``snapshot``, ``created_at``,
``updated_at``. Every write is a Lua script, so Redis runs the compare-and-set (read the version,
compare, write) as one atomic command whatever the number of clients. Expiry follows the store's
clock like every backend; the key also carries a Redis TTL of twice ``expire_after`` so sessions
nobody comes back to are reclaimed without anyone listing them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    StoreUnavailable,
)
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    Clock,
    SessionStore,
    StoredSession,
    record_from,
)

if TYPE_CHECKING:
    import redis

__all__ = ["DEFAULT_PREFIX", "RedisStore"]

DEFAULT_PREFIX = "preflight-fsm:session:"

# Every script answers {status, detail}. A key of another type than hash is a corrupt session.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists', ''} end
redis.call('HSET', KEYS[1], 'version', '1', 'snapshot', ARGV[1],
           'created_at', ARGV[2], 'updated_at', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'ok', '1'}
"""

_PUT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', ''} end
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return {'corrupt', 'not a hash'} end
local row = redis.call('HMGET', KEYS[1], 'version', 'updated_at', 'created_at')
local version = tonumber(row[1])
local updated = tonumber(row[2])
if not version or not updated or not tonumber(row[3]) then
  return {'corrupt', 'its version or times are unreadable'}
end
if tonumber(ARGV[3]) - updated >= tonumber(ARGV[4]) then
  redis.call('DEL', KEYS[1])
  return {'expired', ''}
end
if row[1] ~= ARGV[1] then return {'conflict', row[1]} end
redis.call('HSET', KEYS[1], 'version', ARGV[5], 'snapshot', ARGV[2], 'updated_at', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {'ok', row[3]}
"""

# Remove an expired session only if no write came first (its version is still the one read).
_DELETE_IF_VERSION = """
if redis.call('HGET', KEYS[1], 'version') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisStore(SessionStore):
    """Sessions in Redis at ``url`` (``redis://host:port/db``), shared by any number of processes.

    Needs the ``redis`` package: ``pip install 'preflight-fsm[redis]'``.
    """

    def __init__(
        self,
        url: str,
        *,
        expire_after: float = DEFAULT_EXPIRE_AFTER,
        clock: Clock = time.time,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(expire_after=expire_after, clock=clock)
        try:
            import redis
        except ImportError:
            raise StoreUnavailable(
                f"the session store {url!r} needs the redis package: "
                "pip install 'preflight-fsm[redis]'"
            ) from None
        self.url = url
        self.prefix = prefix
        self._redis = redis
        try:
            self._client: redis.Redis = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as exc:
            raise StoreUnavailable(f"not a Redis URL: {url!r} ({exc})") from None
        self._create = self._client.register_script(_CREATE)
        self._put = self._client.register_script(_PUT)
        self._delete_if_version = self._client.register_script(_DELETE_IF_VERSION)

    @property
    def location(self) -> str:
        return self.url

    def close(self) -> None:
        self._client.close()

    # -- the interface -------------------------------------------------------------------------

    def get(self, session_id: str) -> StoredSession:
        key = self._key(self.checked_id(session_id))
        with self._guard(session_id):
            row = cast(dict[bytes, bytes], self._client.hgetall(key))
            if not row:
                raise SessionNotFound(session_id)
            record = _record(session_id, row)
            if self.is_expired(record.updated_at):
                self._delete_if_version(keys=[key], args=[str(record.version)])
                raise SessionExpired(session_id, self.expire_after)
            return record

    def create(self, session_id: str, snapshot: str) -> StoredSession:
        key = self._key(self.new_id_checked(session_id))
        self.checked_snapshot(snapshot)
        now = self.clock()
        with self._guard(session_id):
            status, _ = _decode(self._create(keys=[key], args=[snapshot, repr(now), self._ttl_ms]))
        if status == "exists":
            raise SessionConflict(session_id, None, None)
        return StoredSession(session_id, 1, snapshot, now, now)

    def put(self, session_id: str, snapshot: str, expected_version: int) -> StoredSession:
        key = self._key(self.checked_id(session_id))
        self.checked_snapshot(snapshot)
        now = self.clock()
        with self._guard(session_id):
            # The script compares the version as text: an int's str() is canonical.
            args = [
                str(expected_version),
                snapshot,
                repr(now),
                repr(self.expire_after),
                str(expected_version + 1),
                self._ttl_ms,
            ]
            status, detail = _decode(self._put(keys=[key], args=args))
        if status == "missing":
            raise SessionNotFound(session_id)
        if status == "corrupt":
            raise CorruptSession(session_id, detail)
        if status == "expired":
            raise SessionExpired(session_id, self.expire_after)
        if status == "conflict":
            actual = int(detail) if detail.isdigit() else None
            raise SessionConflict(session_id, expected_version, actual)
        return StoredSession(session_id, expected_version + 1, snapshot, float(detail), now)

    def delete(self, session_id: str) -> None:
        key = self._key(self.checked_id(session_id))
        with self._guard(session_id):
            removed = self._client.delete(key)
        if not removed:
            raise SessionNotFound(session_id)

    def list(self) -> list[str]:
        with self._guard(None):
            keys = sorted(self._client.scan_iter(match=_glob_escape(self.prefix) + "*", count=500))
            ids: list[str] = []
            now = self.clock()
            for raw in keys:
                key = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
                session_id = key[len(self.prefix) :]
                try:
                    version, updated_at = cast(
                        list[bytes], self._client.hmget(key, ["version", "updated_at"])
                    )
                    expired = int(version) >= 1 and self.is_expired(float(updated_at), now)
                except (self._redis.ResponseError, TypeError, ValueError):
                    expired = False  # unreadable: listed, so that it is reported as corrupt
                if expired:
                    self._delete_if_version(keys=[key], args=[version])
                    continue
                ids.append(session_id)
            return sorted(ids)

    # -- plumbing ------------------------------------------------------------------------------

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}{session_id}"

    @property
    def _ttl_ms(self) -> str:
        return str(math.ceil(self.expire_after * 2000))

    @contextmanager
    def _guard(self, session_id: str | None) -> Iterator[None]:
        """Redis failures as StoreUnavailable; a key of the wrong type as CorruptSession."""
        try:
            yield
        except self._redis.ResponseError as exc:
            if session_id is not None and "WRONGTYPE" in str(exc):
                raise CorruptSession(session_id, "its key does not hold a hash") from None
            raise StoreUnavailable(f"the session store {self.url!r} failed: {exc}") from None
        except self._redis.RedisError as exc:
            raise StoreUnavailable(f"cannot reach the session store {self.url!r}: {exc}") from None


def _record(session_id: str, row: dict[bytes, bytes]) -> StoredSession:
    fields = {k.decode("utf-8", "replace"): v for k, v in row.items()}
    missing = [f for f in ("version", "snapshot", "created_at", "updated_at") if f not in fields]
    if missing:
        raise CorruptSession(session_id, "its hash lacks " + ", ".join(missing))
    return record_from(
        session_id,
        _number(fields["version"], int),
        fields["snapshot"],
        _number(fields["created_at"], float),
        _number(fields["updated_at"], float),
    )


def _number(raw: bytes, kind: type[int] | type[float]) -> object:
    """The number Redis holds as text, or the raw text (which record_from reports as corrupt)."""
    try:
        return kind(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", "replace")


def _decode(reply: Any) -> tuple[str, str]:
    status, detail = reply
    return (
        status.decode() if isinstance(status, bytes) else str(status),
        detail.decode() if isinstance(detail, bytes) else str(detail),
    )


def _glob_escape(text: str) -> str:
    return "".join(f"\\{ch}" if ch in "*?[]\\" else ch for ch in text)
