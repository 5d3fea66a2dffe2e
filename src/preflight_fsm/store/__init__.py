"""Durable session stores: sessions that outlive the process (``docs/sessions.md``).

A :class:`SessionStore` keeps snapshot JSON by session id with a version written by
compare-and-set; :class:`Sessions` steps stored sessions through the engine. Backends:
:class:`MemoryStore`, :class:`SqliteStore` (the default), ``RedisStore`` (extra ``redis``) and
``PostgresStore`` (extra ``postgres``), each opened by :func:`open_store` from the location it
registered (:func:`register_store`); ``preflight_fsm.store.testing`` is the conformance suite
every backend, a third party's too, passes.
"""

from preflight_fsm.errors import (
    CorruptSession,
    SessionConflict,
    SessionExpired,
    SessionNotFound,
    SessionStoreError,
    StoreUnavailable,
)
from preflight_fsm.store.base import (
    DEFAULT_EXPIRE_AFTER,
    SessionEntry,
    SessionStore,
    StoredSession,
    StoreWouldWait,
)
from preflight_fsm.store.location import (
    DEFAULT_PATH,
    STORE_ENV,
    accepted_locations,
    open_store,
    resolve_location,
    shown_location,
)
from preflight_fsm.store.memory import MemoryStore
from preflight_fsm.store.schemes import StoreScheme, register_store
from preflight_fsm.store.sessions import Sessions, SessionState, new_session_id
from preflight_fsm.store.sqlite import SqliteStore

__all__ = [
    "DEFAULT_EXPIRE_AFTER",
    "DEFAULT_PATH",
    "STORE_ENV",
    "CorruptSession",
    "MemoryStore",
    "SessionConflict",
    "SessionEntry",
    "SessionExpired",
    "SessionNotFound",
    "SessionState",
    "SessionStore",
    "SessionStoreError",
    "Sessions",
    "SqliteStore",
    "StoreScheme",
    "StoreUnavailable",
    "StoreWouldWait",
    "StoredSession",
    "accepted_locations",
    "new_session_id",
    "open_store",
    "register_store",
    "resolve_location",
    "shown_location",
]
