"""Which backend opens which store location: each backend registers its schemes here.

A backend module calls :func:`register_store` once, at import, with the location prefixes it
opens (``"redis://"``), the words error messages use for them, and how to open one. The built-in
backends register when this registry is first asked (their drivers are imported only when a store
is opened); a third-party backend registers when its module is imported, then ``open_store``,
``--store`` and ``PREFLIGHT_FSM_STORE`` accept its locations like the built-in ones
(docs/sessions.md, "How to add a store").
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from preflight_fsm.store.base import Clock, SessionStore

__all__ = [
    "BUILTIN_BACKENDS",
    "StoreOpener",
    "StoreScheme",
    "accepted_locations",
    "register_store",
    "registered_schemes",
    "scheme_for",
]

BUILTIN_BACKENDS: Final = (
    "preflight_fsm.store.sqlite",
    "preflight_fsm.store.redis",
    "preflight_fsm.store.postgres",
    "preflight_fsm.store.memory",
)
"""The modules of the backends that ship with preflight-fsm, in the order messages name them."""


class StoreOpener(Protocol):
    """Opens the store at ``location`` (a location one of the backend's prefixes starts)."""

    def __call__(
        self, location: str, *, expire_after: float, clock: Clock, create: bool
    ) -> SessionStore: ...


def _as_written(location: str) -> str:
    return location


@dataclass(frozen=True, slots=True)
class StoreScheme:
    """One backend's locations: the ``prefixes`` it opens, what they are in a sentence
    (``describes``), its ``opener``, and ``shown`` (a location as it may be printed: passwords
    replaced by ``***``)."""

    prefixes: tuple[str, ...]
    describes: str
    opener: StoreOpener
    shown: Callable[[str], str] = _as_written


_SCHEMES: list[StoreScheme] = []
_builtins_loaded = False


def register_store(
    prefixes: tuple[str, ...],
    describes: str,
    opener: StoreOpener,
    *,
    shown: Callable[[str], str] = _as_written,
) -> StoreScheme:
    """Let ``open_store`` open locations starting with one of ``prefixes`` through ``opener``.

    ``describes`` completes "a store is ..." in messages (``"a postgresql:// URL"``); ``shown``
    hides a location's secrets. A prefix another backend registered is refused (ValueError).
    """
    if not prefixes or not all(isinstance(p, str) and p for p in prefixes):
        raise ValueError(f"a store registers at least one location prefix, not {prefixes!r}")
    taken = {p for scheme in _SCHEMES for p in scheme.prefixes}
    if clash := sorted(taken.intersection(prefixes)):
        raise ValueError(f"another store backend already opens {', '.join(clash)}")
    scheme = StoreScheme(tuple(prefixes), describes, opener, shown)
    _SCHEMES.append(scheme)
    return scheme


def registered_schemes() -> tuple[StoreScheme, ...]:
    """Every registered backend's locations, the built-in ones first."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in BUILTIN_BACKENDS:
            importlib.import_module(module)
    order = {module: i for i, module in enumerate(BUILTIN_BACKENDS)}
    return tuple(sorted(_SCHEMES, key=lambda s: order.get(s.opener.__module__, len(order))))


def scheme_for(location: str | os.PathLike[str]) -> StoreScheme | None:
    """The backend whose prefix starts ``location`` (the longest such prefix), or None."""
    text = str(location)
    found = [(len(p), s) for s in registered_schemes() for p in s.prefixes if text.startswith(p)]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def accepted_locations() -> str:
    """What a store location may be, as error messages and ``--store`` help say it."""
    said = ["a SQLite file path", *(s.describes for s in registered_schemes())]
    return ", ".join(said[:-1]) + f", or {said[-1]}" if len(said) > 1 else said[0]
