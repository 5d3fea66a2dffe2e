"""Each store backend registers the locations it opens; ``open_store`` asks the registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight_fsm.cli.stores import STORE_HELP
from preflight_fsm.errors import StoreUnavailable
from preflight_fsm.store import MemoryStore, SessionStore, open_store, register_store
from preflight_fsm.store import schemes as _schemes
from preflight_fsm.store.base import Clock
from preflight_fsm.store.schemes import accepted_locations, registered_schemes, scheme_for


@pytest.fixture
def registry() -> Iterator[None]:
    """The registry as it was before the test, whatever the test registered."""
    before = list(registered_schemes())
    yield
    _schemes._SCHEMES[:] = before


def test_a_registered_scheme_is_opened_by_open_store(registry: None) -> None:
    """A third party's backend registered with its prefix is what open_store opens for it."""

    def opened(location: str, *, expire_after: float, clock: Clock, create: bool) -> SessionStore:
        return MemoryStore(expire_after=expire_after, clock=clock)

    register_store(("acme://",), "an acme:// URL", opened)
    with open_store("acme://team/sessions", expire_after=90) as store:
        assert (MemoryStore, 90.0) == (type(store), store.expire_after)
    assert accepted_locations().endswith("or an acme:// URL")


def test_a_prefix_already_registered_is_refused(registry: None) -> None:
    """Two backends cannot claim one prefix: the second registration names the clash."""
    with pytest.raises(ValueError, match="already opens redis://"):
        register_store(("redis://",), "a redis:// URL", MemoryStore.at)


def test_every_built_in_location_is_in_the_store_option_help() -> None:
    """--store's help names every prefix a built-in backend opens across processes."""
    prefixes = {p for s in registered_schemes() for p in s.prefixes} - {"memory:"}
    assert set() == {p for p in prefixes if p not in STORE_HELP}


def test_a_redis_password_is_hidden_where_a_location_is_shown() -> None:
    """The registry's way of showing a Redis URL replaces its password with ***."""
    scheme = scheme_for("redis://user:hunter2@localhost:6379/0")
    assert scheme is not None
    assert "redis://user:***@localhost:6379/0" == scheme.shown(
        "redis://user:hunter2@localhost:6379/0"
    )


def test_memory_with_anything_after_it_is_refused() -> None:
    """Only memory: itself is the in-process store; memory:x is refused, not a new store."""
    with pytest.raises(StoreUnavailable, match="write memory: alone"):
        open_store("memory:x")


def test_sqlites_in_memory_name_is_refused_rather_than_made_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--store :memory: names no file: it is refused with what to write, and no file appears."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreUnavailable, match="or write memory: for sessions kept in one process"):
        open_store(":memory:")
    assert [] == list(tmp_path.iterdir())
