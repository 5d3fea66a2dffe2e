"""A provider call's total deadline, kept by the connection itself.

The SDKs' ``timeout`` bounds each read, not a call: a provider that drips a byte within every
read's timeout keeps a call (its thread and its connection) going for ever, long after the guard
answered with the engine. So the deadline is kept by the connection itself: every connect, read
and write waits at most :func:`time_left` of the call it serves.

This module holds the deadline: the calling context's (:func:`call_deadline`), set by the guard
in the thread it asks the provider from; ``preflight_fsm.llm.connection`` holds the client, which
needs the ``llm`` extra. A call outside any deadline waits as the SDK's timeout says.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["call_deadline", "time_left"]

_DEADLINE: Final[contextvars.ContextVar[float | None]] = contextvars.ContextVar(
    "preflight_fsm_llm_deadline", default=None
)


@contextmanager
def call_deadline(seconds: float) -> Iterator[None]:
    """Within this block, every request of ``connection.deadline_http_client()`` ends
    ``seconds`` from now (``time.monotonic``), whatever the provider sends."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left(timeout: float | None, failure: type[Exception]) -> float | None:
    """``timeout`` (seconds, None for none) cut to what is left of the call's deadline.

    Raises ``failure`` once the deadline passed.
    """
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise failure("the call's deadline passed")
    return left if timeout is None else min(timeout, left)
