"""A Redis store, for several worker processes and hosts sharing sessions (extra ``redis``).

Each session is one hash, ``<prefix><id>`` → ``version``, ``snapshot``, ``created_at``,
``updated_at``, ``expire_after``, ``flow``. Every write is a Lua script, so Redis runs the
compare-and-set (read the version, compare, write) as one atomic command whatever the number of
clients. Expiry follows the store's clock like every backend, with each session's own
``expire_after``; the key also carries a Redis TTL of twice that (at most about 3,170 years), so
sessions nobody comes back to are reclaimed without anyone listing them. A create whose TTL cannot
be set removes what it wrote: no failed write leaves a session behind, let alone one that never
expires.

Durability is the server's: sessions survive a Redis restart only with AOF (``appendonly yes``)
or RDB snapshots configured; :meth:`RedisStore.durability_warning` says when the server has
neither. The URL's passwords (its user part's, a ``password=`` in its query, in ``redis://``
and ``unix://`` URLs alike) never appear in any message (:func:`redacted`).
"""

from __future__ import annotations

import math
import queue
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
    RECLAIM_BATCH,
    Clock,
    SessionEntry,
    SessionStore,
    StoredSession,
    entry_from,
    record_from,
)
from preflight_fsm.store.schemes import register_store
from preflight_fsm.store.secrets import redacted, secrets_of

if TYPE_CHECKING:
    import redis

__all__ = ["DEFAULT_PREFIX", "RedisStore", "redacted"]

DEFAULT_PREFIX = "preflight-fsm:session:"

# The longest Redis TTL set, in milliseconds (about 3,170 years: "never" for a session). Lua
# hands numbers to Redis as text with 14 significant digits, so a longer one would reach PEXPIRE
# as "1e+303" and be refused; the _PUT script caps at the same 14 nines.
_MAX_TTL_MS = 99_999_999_999_999

# Every script answers {status, detail}. A key of another type than hash is a corrupt session.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists', ''} end
redis.call('HSET', KEYS[1], 'version', '1', 'snapshot', ARGV[1],
           'created_at', ARGV[2], 'updated_at', ARGV[2], 'expire_after', ARGV[4], 'flow', ARGV[5])
-- A script's writes are not rolled back on an error: a session whose TTL could not be set is
-- removed again, so a failed create leaves nothing behind.
local set = redis.pcall('PEXPIRE', KEYS[1], ARGV[3])
if type(set) == 'table' and set.err then
  redis.call('DEL', KEYS[1])
  return redis.error_reply(set.err)
end
return {'ok', '1'}
"""

_PUT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', ''} end
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return {'corrupt', 'not a hash'} end
local row = redis.call('HMGET', KEYS[1], 'version', 'updated_at', 'created_at', 'expire_after',
                      'flow')
local version = tonumber(row[1])
local updated = tonumber(row[2])
local limit = tonumber(row[4])
if not version or not updated or not tonumber(row[3]) or not limit or limit <= 0 or not row[5] then
  return {'corrupt', 'its version, times or expiry are unreadable'}
end
if tonumber(ARGV[3]) - updated >= limit then
  redis.call('DEL', KEYS[1])
  return {'expired', row[4]}
end
if row[1] ~= ARGV[1] then return {'conflict', row[1]} end
local flow = row[5]
if ARGV[5] ~= '' then flow = ARGV[5] end
redis.call('HSET', KEYS[1], 'version', ARGV[4], 'snapshot', ARGV[2], 'updated_at', ARGV[3],
           'flow', flow)
redis.call('PEXPIRE', KEYS[1], math.min(math.ceil(limit * 2000), 99999999999999))
return {'ok', row[3], row[4], flow}
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

    Needs the ``redis`` package (the ``redis`` extra: ``pip install -e '.[redis]'`` in a clone,
    or ``pip install 'redis>=5'``).
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
            from preflight_fsm.extras import install_hint

            raise StoreUnavailable(
                f"the session store {redacted(url)!r} needs the redis package; install it "
                f"with: {install_hint('redis')}"
            ) from None
        self.url = url
        self.location_shown = redacted(url)
        self.prefix = prefix
        self._redis = redis
        try:
            self._client: redis.Redis = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as exc:
            raise StoreUnavailable(
                f"not a Redis URL: {self.location_shown!r} ({self._hidden(str(exc))})"
            ) from None
        self._idle: queue.SimpleQueue[redis.Redis] = queue.SimpleQueue()
        self._create = self._client.register_script(_CREATE)
        self._put = self._client.register_script(_PUT)
        self._delete_if_version = self._client.register_script(_DELETE_IF_VERSION)

    @classmethod
    def at(cls, location: str, *, expire_after: float, clock: Clock, create: bool) -> RedisStore:
        """The store at a ``redis://``, ``rediss://`` or ``unix://`` URL (``create`` is moot: a
        Redis store needs no making)."""
        return cls(location, expire_after=expire_after, clock=clock)

    @property
    def location(self) -> str:
        """The URL with its password replaced by ``***``: safe to print."""
        return self.location_shown

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()  # its connection back to the pool
            except queue.Empty:
                break
        self._client.close()  # the pool's connections

    # -- the interface -------------------------------------------------------------------------

    def get(self, session_id: str) -> StoredSession:
        key = self._key(self.checked_id(session_id))
        with self._guard(session_id), self._connection() as client:
            row = cast(dict[bytes, bytes], client.hgetall(key))
            if not row:
                raise SessionNotFound(session_id)
            record = _record(session_id, row)
            if self.is_expired(record.updated_at, expire_after=record.expire_after):
                self._delete_if_version(keys=[key], args=[str(record.version)], client=client)
                raise SessionExpired(session_id, record.expire_after)
            return record

    def create(
        self, session_id: str, snapshot: str, *, expire_after: float | None = None, flow: str = ""
    ) -> StoredSession:
        key = self._key(self.new_id_checked(session_id))
        self.checked_snapshot(snapshot)
        expiry, flow = self.expiry_for(expire_after), self.checked_flow(flow)
        now = self.clock()
        ttl_ms = str(min(math.ceil(expiry * 2000), _MAX_TTL_MS))
        args = [snapshot, repr(now), ttl_ms, repr(expiry), flow]
        with self._guard(session_id), self._connection() as client:
            status, *_ = _decode(self._create(keys=[key], args=args, client=client))
        if status == "exists":
            raise SessionConflict(session_id, None, None)
        return StoredSession(session_id, 1, snapshot, now, now, expiry, flow)

    def put(
        self, session_id: str, snapshot: str, expected_version: int, *, flow: str | None = None
    ) -> StoredSession:
        key = self._key(self.checked_id(session_id))
        self.checked_snapshot(snapshot)
        moved = "" if flow is None else self.checked_flow(flow)
        now = self.clock()
        # The script compares the version as text: an int's str() is canonical.
        args = [str(expected_version), snapshot, repr(now), str(expected_version + 1), moved]
        with self._guard(session_id), self._connection() as client:
            status, detail, *rest = _decode(self._put(keys=[key], args=args, client=client))
        if status == "missing":
            raise SessionNotFound(session_id)
        if status == "corrupt":
            raise CorruptSession(session_id, detail)
        if status == "expired":
            raise SessionExpired(session_id, float(detail))
        if status == "conflict":
            actual = int(detail) if detail.isdigit() else None
            raise SessionConflict(session_id, expected_version, actual)
        expiry, flow = rest
        return StoredSession(
            session_id, expected_version + 1, snapshot, float(detail), now, float(expiry), flow
        )

    def delete(self, session_id: str) -> None:
        key = self._key(self.checked_id(session_id))
        with self._guard(session_id), self._connection() as client:
            removed = client.delete(key)
        if not removed:
            raise SessionNotFound(session_id)

    def entries(self, *, flow: str | None = None) -> list[SessionEntry | CorruptSession]:
        with self._guard(None), self._connection() as client:
            keys = sorted(client.scan_iter(match=_glob_escape(self.prefix) + "*", count=500))
            found: list[SessionEntry | CorruptSession] = []
            now = self.clock()
            for raw in keys:
                key = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
                session_id = key[len(self.prefix) :]
                try:
                    values = cast(list[bytes | None], client.hmget(key, list(_META)))
                except self._redis.ResponseError:
                    found.append(CorruptSession(session_id, "its key does not hold a hash"))
                    continue
                if all(value is None for value in values):
                    continue  # deleted since the scan
                try:
                    entry = _entry(session_id, values)
                except CorruptSession as corrupt:
                    found.append(corrupt)
                    continue
                if flow is not None and entry.flow != flow:
                    continue
                if not self.is_expired(entry.updated_at, now, entry.expire_after):
                    found.append(entry)
            return sorted(
                found, key=lambda e: str(e.session_id if isinstance(e, CorruptSession) else e.id)
            )

    def reclaim(self, limit: int = RECLAIM_BATCH) -> int:
        """Expired sessions by the store's clock (the keys' TTL, twice each expiry, reclaims the
        rest without being asked); each removed only if no write came first."""
        removed = 0
        with self._guard(None), self._connection() as client:
            for raw in client.scan_iter(match=_glob_escape(self.prefix) + "*", count=500):
                if removed >= limit:
                    break
                key = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
                try:
                    values = cast(list[bytes | None], client.hmget(key, list(_META)))
                    entry = _entry(key[len(self.prefix) :], values)
                except (self._redis.ResponseError, CorruptSession):
                    continue  # not a session's hash, or one deleted since the scan: not ours
                if self.is_expired(entry.updated_at, expire_after=entry.expire_after):
                    version = [str(entry.version)]
                    removed += int(self._delete_if_version(keys=[key], args=version, client=client))
        return removed

    def check(self) -> str | None:
        try:
            with self._guard(None), self._connection() as client:
                client.ping()
        except StoreUnavailable as exc:
            return str(exc)
        return None

    def durability_warning(self) -> str | None:
        """Why sessions would not survive a restart of this Redis server, or None.

        None too when the server does not let this user read its configuration (``CONFIG GET``).
        """
        try:
            with self._guard(None), self._connection() as client:
                appendonly = client.config_get("appendonly").get("appendonly")
                save = client.config_get("save").get("save")
        except StoreUnavailable:
            return None
        if appendonly in ("no", b"no") and save in ("", b""):
            return (
                f"the Redis server at {self.location_shown} keeps sessions in memory only "
                "(appendonly no, no save points): a restart loses every session; "
                "configure appendonly yes (docs/sessions.md)"
            )
        return None

    def eviction_policy(self) -> str | None:
        """The server's ``maxmemory-policy`` when it evicts keys (any but ``noeviction``): under
        memory pressure Redis then deletes live sessions, which read as never started. None when
        it does not evict, or does not let this user read its configuration."""
        try:
            with self._guard(None), self._connection() as client:
                found = client.config_get("maxmemory-policy").get("maxmemory-policy")
        except StoreUnavailable:
            return None
        policy = found.decode() if isinstance(found, bytes) else found
        return None if policy in (None, "noeviction") else str(policy)

    # -- plumbing ------------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[redis.Redis]:
        """A client holding one connection of its own: an idle one, else a new one, put back
        for the next command once the block ends.

        Every command goes through here. redis-py's pooled client takes a connection from its pool
        and gives it back around each command, with a lock and its metrics each way: about a
        quarter of its CPU per command (D316, docs/performance.md). A client holds at most as many
        connections as commands ran at once, as the pool did; ``close`` closes them all.
        """
        try:
            client = self._idle.get_nowait()
        except queue.Empty:
            # Connects at once, inside the caller's _guard; the pool's settings are the URL's.
            pool = self._client.connection_pool
            client = self._redis.Redis(connection_pool=pool, single_connection_client=True)
        try:
            yield client
        finally:
            self._idle.put(client)

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}{session_id}"

    @contextmanager
    def _guard(self, session_id: str | None) -> Iterator[None]:
        """Redis failures as StoreUnavailable; a key of the wrong type as CorruptSession."""
        where = self.location_shown
        try:
            yield
        except self._redis.ResponseError as exc:
            message = self._hidden(str(exc))
            if _is_auth_error(exc):
                raise StoreUnavailable(_auth_message(where, message)) from None
            if session_id is not None and "WRONGTYPE" in message:
                raise CorruptSession(session_id, "its key does not hold a hash") from None
            raise StoreUnavailable(f"the session store {where!r} failed: {message}") from None
        except self._redis.RedisError as exc:
            message = self._hidden(str(exc))
            if _is_auth_error(exc):
                raise StoreUnavailable(_auth_message(where, message)) from None
            raise StoreUnavailable(f"cannot reach the session store {where!r}: {message}") from None

    def _hidden(self, text: str) -> str:
        """``text`` without the URL's secrets, wherever a library quoted them."""
        text = text.replace(self.url, self.location_shown)
        for secret in secrets_of(self.url):
            text = text.replace(secret, "***")
        return text


_META = ("version", "created_at", "updated_at", "expire_after", "flow")


def _record(session_id: str, row: dict[bytes, bytes]) -> StoredSession:
    fields = {k.decode("utf-8", "replace"): v for k, v in row.items()}
    missing = [f for f in ("snapshot", *_META) if f not in fields]
    if missing:
        raise CorruptSession(session_id, "its hash lacks " + ", ".join(missing))
    return record_from(
        session_id,
        _number(fields["version"], int),
        fields["snapshot"],
        _number(fields["created_at"], float),
        _number(fields["updated_at"], float),
        _number(fields["expire_after"], float),
        fields["flow"],
    )


def _entry(session_id: str, values: list[bytes | None]) -> SessionEntry:
    missing = [name for name, value in zip(_META, values, strict=True) if value is None]
    if missing:
        raise CorruptSession(session_id, "its hash lacks " + ", ".join(missing))
    version, created_at, updated_at, expire_after, flow = cast(list[bytes], values)
    return entry_from(
        session_id,
        _number(version, int),
        _number(created_at, float),
        _number(updated_at, float),
        _number(expire_after, float),
        flow,
    )


def _is_auth_error(exc: Exception) -> bool:
    text = str(exc)
    return type(exc).__name__.startswith("Authentication") or any(
        code in text for code in ("NOAUTH", "WRONGPASS", "NOPERM", "invalid password")
    )


def _auth_message(where: str, message: str) -> str:
    return (
        f"the session store {where!r} refused the credentials: {message}; "
        "put the user and password in the URL (redis://user:password@host:port/db)"
    )


def _number(raw: bytes, kind: type[int] | type[float]) -> object:
    """The number Redis holds as text, or the raw text (which record_from reports as corrupt)."""
    try:
        return kind(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", "replace")


def _decode(reply: Any) -> list[str]:
    return [part.decode() if isinstance(part, bytes) else str(part) for part in reply]


def _glob_escape(text: str) -> str:
    return "".join(f"\\{ch}" if ch in "*?[]\\" else ch for ch in text)


register_store(
    ("redis://", "rediss://", "unix://"),
    "a redis://, rediss:// or unix:// URL",
    RedisStore.at,
    shown=redacted,
)
