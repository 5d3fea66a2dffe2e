"""A loopback listener of the page's own, started on demand and stopped with its owner, the
way ``gh auth login`` serves its callback: ``127.0.0.1`` on an ephemeral port, reached as
``http://localhost:PORT`` (WebAuthn needs a domain, not an IP address, as relying party).

Used by the front ends that have no HTTP server of their own: ``mcp`` over stdio, ``pf`` and
``chat`` with ``--web``. No access log is written (a link is a capability).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Final

import uvicorn

from preflight_fsm.web.app import page_app
from preflight_fsm.web.enroll import Enrollment, enroll_app
from preflight_fsm.web.page import AnswerPage

__all__ = ["PageListener"]

_START_TIMEOUT: Final = 10.0
_MAX_CONNECTIONS: Final = 32


class PageListener:
    """Serves ``page`` on loopback from a thread of its own, between :meth:`start` and
    :meth:`stop` (or as a context manager); sets the page's ``base_url``. ``port`` 0 takes a
    free one; a passkey's page needs the port its people were enrolled on (their origin)."""

    def __init__(
        self,
        page: AnswerPage | Enrollment,
        host: str = "127.0.0.1",
        name: str = "localhost",
        *,
        port: int = 0,
    ) -> None:
        self.page = page
        self.host = host
        self.name = name
        self.port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> str:
        """Listen (once) and return the base URL the page's links start with."""
        if self._server is not None:
            assert self.page.base_url is not None
            return self.page.base_url
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError:  # the port is taken: the caller says so; no socket left open
            sock.close()
            raise
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            enroll_app(self.page) if isinstance(self.page, Enrollment) else page_app(self.page),
            access_log=False,
            log_level="warning",
            limit_concurrency=_MAX_CONNECTIONS,
            timeout_keep_alive=5,
            h11_max_incomplete_event_size=16 * 1024,
            lifespan="off",
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="answer-page", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)  # uvicorn offers no event for "listening"
        if not server.started:
            raise OSError(f"the answer page could not listen on {self.host}")
        self._server, self._thread = server, thread
        self.page.base_url = f"http://{self.name}:{port}"
        return self.page.base_url

    def stop(self) -> None:
        """Stop listening and wait for the thread to end."""
        if self._server is None:
            return
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(_START_TIMEOUT)
        self._server = self._thread = None

    def __enter__(self) -> PageListener:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
