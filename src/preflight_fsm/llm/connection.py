"""The HTTP client Preflights' provider adapters use under the guard: calls end by their deadline.

The official ``anthropic`` and ``openai`` SDKs bound each read, not a call (see
``preflight_fsm.llm.deadline``). Every connect, read and write of :func:`deadline_http_client`
waits at most until the deadline of the call it serves; past it the read fails as a timeout, the
connection is closed, and the call ends as the provider's timeout, its thread with it.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from preflight_fsm.llm.deadline import time_left

__all__ = ["deadline_http_client"]


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the call's deadline."""

    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, time_left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, time_left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        bounded = time_left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """Connections that keep the call's deadline."""

    def __init__(self) -> None:
        self._backend = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        bounded = time_left(timeout, httpcore2.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        bounded = time_left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@functools.cache
def _verified_tls() -> ssl.SSLContext:
    """The SDKs' default TLS context (certificates verified), built once per process: loading
    the CA bundle costs about 70 ms of CPU, and it was loaded twice for every adapter."""
    return httpx2.create_ssl_context()


def deadline_http_client() -> httpx2.Client:
    """An HTTP client for the SDKs (``http_client=``) whose requests end by the call's deadline.

    Direct connections only: the SDKs' defaults otherwise (TLS verified, HTTP/1.1).
    """
    transport = httpx2.HTTPTransport(verify=_verified_tls())
    # httpx2's transport takes no network backend; its pool does. Same settings as the default.
    transport._pool = httpcore2.ConnectionPool(
        ssl_context=_verified_tls(),
        max_connections=100,
        max_keepalive_connections=20,
        network_backend=_DeadlineBackend(),
    )
    return httpx2.Client(transport=transport, follow_redirects=True)
