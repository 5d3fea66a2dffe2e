"""Serving MCP over stdio so that every request line gets a reply.

The SDK's stdio transport drops a line it cannot read as a JSON-RPC message (a lone surrogate
escape, JSON nested 5,000 deep, ``"params": "x"``, ``"jsonrpc": "1.0"``, an object as id): the
client then waits for its own timeout. Over HTTP the same request gets a JSON-RPC error. Here each
line is checked before the transport sees it, and one that fails is answered as the HTTP
transport answers it (``-32700`` when it is no JSON, ``-32602`` when it is no JSON-RPC message),
with the request's id when it can be read at the top level of the line; an id that is neither a
string nor an integer, which both transports would take for a notification's extra member and
never answer, gets ``-32600``, and so does a line longer than the HTTP transport's body limit,
whose rest is skipped unread. The SDK is not patched.

The lines are read by a thread of their own and each reply is written and flushed by another
(the SDK's transport takes a worker-thread hop per line, and two per reply, one to write and one
to flush: a tenth of an echo call's CPU here; D290, D293, D296).
While the server runs, file descriptor 1 points at standard error, as the SDK's transport does
it: a stray write (a library's ``print``, a child process) cannot corrupt the replies.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import json
import os
import queue
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from io import TextIOWrapper
from typing import Any, BinaryIO, Final

import anyio
import mcp_types as types
import pydantic_core
from anyio.abc import ObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["MAX_LINE_CHARS", "checked", "replies_only_on_stdout", "request_id", "run_stdio"]

_MAX_ID_CHARS: Final = 200  # an id is a short token; a longer "id" is not looked for
_MESSAGE: Final = types.jsonrpc_message_adapter
MAX_LINE_CHARS: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The longest request line read whole: the SDK's HTTP body limit (4 MiB)."""
_AHEAD: Final = 2
"""Lines read before the loop takes them, and replies queued before the wire takes them, at most
(each line up to MAX_LINE_CHARS)."""
_LAST_REPLIES_WAIT: Final = 10.0
"""Seconds the end of the server waits for its last replies to be written."""


def checked(line: str) -> types.JSONRPCError | None:
    """None for a line the transport reads as a JSON-RPC message, else the error to reply."""
    try:  # a request (nearly every line) read as the transport reads it: one parse, no more
        if type(_MESSAGE.validate_json(line, by_name=False)) is types.JSONRPCRequest:
            return None
    except ValidationError:
        pass  # said why below
    try:
        raw = pydantic_core.from_json(line)
    except ValueError as exc:
        return _error(request_id(line), types.PARSE_ERROR, f"Parse error: {_why(line, exc)}")
    if isinstance(raw, dict) and "id" in raw and type(raw["id"]) not in (int, str):
        # Else read as a notification (which takes any extra member) and never answered.
        return _error(
            None, types.INVALID_REQUEST, "Invalid request: the id must be a string or an integer"
        )
    try:
        _MESSAGE.validate_python(raw, by_name=False)
    except ValidationError as exc:
        problem = f"Validation error: {exc.error_count()} problem(s): " + "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}" for e in exc.errors()[:3]
        )
        return _error(request_id(line), types.INVALID_PARAMS, problem)
    return None


def _why(line: str, exc: ValueError) -> str:
    """What is wrong with a line no JSON parser here takes, said plainly where it can be."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return str(exc)
    # Python's parser takes what pydantic's refuses only for a lone surrogate escape.
    return (
        "a \\uD800-\\uDFFF escape without its pair is no character; send the text as UTF-8 "
        "or as a surrogate pair"
    )


def request_id(line: str) -> int | str | None:
    """The ``id`` member of the line's top-level object, if it is an integer or a string.

    Read by scanning, without parsing the rest: the line may be JSON no parser takes (nested too
    deep, a lone surrogate escape), yet its id is what lets the client match the error reply to
    its request. None when there is none (or it is no valid id: an object, a float).
    """
    depth, i, size = 0, 0, len(line)
    while i < size:
        char = line[i]
        if char == '"':
            end = _string_end(line, i)
            if depth == 1 and line[i : end + 1] == '"id"':
                return _id_after(line, end + 1)
            i = end + 1
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        i += 1
    return None


def _string_end(line: str, start: int) -> int:
    """The index of the quote closing the JSON string that opens at ``start``."""
    i = start + 1
    while i < len(line) and line[i] != '"':
        i += 2 if line[i] == "\\" else 1
    return i


def _id_after(line: str, i: int) -> int | str | None:
    rest = line[i : i + _MAX_ID_CHARS + 8].lstrip()
    if not rest.startswith(":"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(rest[1:].lstrip())
    except ValueError:
        return None
    return value if type(value) in (int, str) else None


def _error(request: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request, error=types.ErrorData(code=code, message=message)
    )


class _Borrowed(TextIOWrapper):
    """A text layer over standard input's buffer that leaves the buffer open when it goes:
    closing it would close ``sys.stdin`` for the rest of the process."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


class _CheckedLines:
    """Standard input's lines, those the transport cannot read answered here and held back.

    The lines are read by a thread of their own (reading blocks), at most ``_AHEAD`` ahead of
    the loop, and handed to the loop with one wake each (a worker-thread hop per line took two:
    D293). Ctrl-C abandons the thread blocked in its read: the command ends the process
    without joining it (cli/mcp.py).
    """

    def __init__(self, wire: BinaryIO) -> None:
        self.replies: ObjectSendStream[SessionMessage] | None = None
        self.ready = anyio.Event()
        # As the SDK reads stdin: UTF-8, undecodable bytes as U+FFFD (MCP-NOTES).
        self._stdin = _Borrowed(wire, encoding="utf-8", errors="replace")
        self._read: collections.deque[str] = collections.deque()
        self._arrived = anyio.Event()
        self._room = threading.Semaphore(_AHEAD)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()  # anyio.run's: serve() runs on asyncio
        threading.Thread(target=self._reader, args=(loop,), name="stdin", daemon=True).start()
        while line := await self._next_line():
            if _too_long_line(line):
                await self._reply(_too_long(line))  # its rest is skipped by the reader
                continue
            if not line.strip():
                continue
            error = checked(line)
            if error is None:
                yield line
            else:
                await self._reply(error)

    def _reader(self, loop: asyncio.AbstractEventLoop) -> None:
        """The reading thread: each line handed to the loop, then "" at the end of input."""
        line = None
        try:
            while line != "":
                self._room.acquire()
                line = self._stdin.readline(MAX_LINE_CHARS + 1)
                loop.call_soon_threadsafe(self._hand_over, line)
                if _too_long_line(line):
                    # Over the HTTP transport's body limit: answered, and the rest of it skipped
                    # unread, so no line holds the process's memory (an endless one included).
                    while (rest := self._stdin.readline(MAX_LINE_CHARS)) and rest[-1] != "\n":
                        pass
        except (OSError, ValueError):  # standard input closed under it: its end
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._hand_over, "")
        except RuntimeError:  # the loop has ended (the server stopped): nobody waits for lines
            pass

    def _hand_over(self, line: str) -> None:
        self._read.append(line)
        self._arrived.set()

    async def _next_line(self) -> str:
        while not self._read:
            await self._arrived.wait()
            self._arrived = anyio.Event()
        self._room.release()
        return self._read.popleft()

    async def _reply(self, error: types.JSONRPCError) -> None:
        await self.ready.wait()
        assert self.replies is not None  # set before ready
        await self.replies.send(SessionMessage(error))


def _too_long_line(line: str) -> bool:
    return len(line) > MAX_LINE_CHARS and not line.endswith("\n")


def _too_long(line: str) -> types.JSONRPCError:
    return _error(
        request_id(line),
        types.INVALID_REQUEST,
        f"Request too large: a message holds at most {MAX_LINE_CHARS:,} characters (as the "
        "HTTP transport's body limit)",
    )


class _Replies:
    """Standard output as the transport writes to it (``write``, then ``flush``, per reply).

    At the flush the reply is queued, whole, for a thread of its own that writes and flushes
    it: one wake of that thread per reply, where a worker-thread hop took two (D296). At most
    ``_AHEAD`` replies wait; a flush beyond that waits (off the loop) for the client to read.
    A write that failed (the client gone) is raised by the next flush, as the SDK's would be.
    """

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        self._pending: list[str] = []
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._room = threading.Semaphore(_AHEAD)
        self._failure: OSError | ValueError | None = None
        self._writer = threading.Thread(target=self._write_all, name="stdout", daemon=True)
        self._writer.start()

    async def write(self, text: str) -> None:
        self._pending.append(text)

    async def flush(self) -> None:
        if self._failure is not None:
            raise self._failure
        data = "".join(self._pending).encode("utf-8")
        self._pending.clear()
        if not self._room.acquire(blocking=False):
            await anyio.to_thread.run_sync(self._room.acquire, abandon_on_cancel=True)
        self._queue.put(data)

    def finish(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the replies queued to be written, then stop."""
        self._queue.put(None)
        self._writer.join(timeout)

    def _write_all(self) -> None:
        while (data := self._queue.get()) is not None:
            if self._failure is None:
                try:
                    self._wire.write(data)
                    self._wire.flush()
                except (OSError, ValueError) as exc:
                    self._failure = exc
            self._room.release()


@contextlib.contextmanager
def _diverted(fd: int, diversion: Callable[[], int]) -> Iterator[int | None]:
    """A private duplicate of file descriptor ``fd`` (closed in children) for the wire, ``fd``
    itself pointed at ``diversion()`` until the block ends, as ``stdio_server`` does when it
    opens the standard streams itself; None where ``fd`` cannot be diverted (serve it in place).
    The duplicate is never closed: a thread may still be reading or writing it at the end."""
    try:
        wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no such descriptor
        yield None
        return
    try:
        substitute = diversion()
    except OSError:
        os.close(wire)
        yield None
        return
    os.dup2(substitute, fd)
    os.close(substitute)
    try:
        yield wire
    finally:
        os.dup2(wire, fd)


@contextlib.contextmanager
def requests_only_on_stdin() -> Iterator[BinaryIO]:
    """Standard input's file for the requests alone; file descriptor 0 reads the null device
    until the block ends, so a handler or a child process reads end of input, never a request."""
    with _diverted(0, lambda: os.open(os.devnull, os.O_RDONLY)) as wire:
        yield sys.stdin.buffer if wire is None else os.fdopen(wire, "rb", closefd=False)


@contextlib.contextmanager
def replies_only_on_stdout() -> Iterator[BinaryIO]:
    """Standard output's file for the replies alone; file descriptor 1 points at standard error
    until the block ends, so a stray write (a `print`, a child's output) never reaches the wire."""
    sys.stdout.flush()
    try:
        with _diverted(1, lambda: os.dup(2)) as wire:
            yield sys.stdout.buffer if wire is None else os.fdopen(wire, "wb", closefd=False)
    finally:
        sys.stdout.flush()


async def run_stdio(server: MCPServer[Any]) -> None:
    """Run ``server`` over stdin and stdout until stdin ends (``MCPServer.run_stdio_async``,
    with every line checked first and every reply sent in one hop)."""
    with requests_only_on_stdin() as requests, replies_only_on_stdout() as wire:
        lines = _CheckedLines(requests)
        # The transport takes any async iterable of lines as its stdin, and any object with
        # async write and flush as its stdout.
        replies = _Replies(wire)
        try:
            async with stdio_server(stdin=lines, stdout=replies) as (  # type: ignore[arg-type]
                read_stream,
                write_stream,
            ):
                lines.replies = write_stream
                lines.ready.set()
                lowlevel = server._lowlevel_server  # what run_stdio_async runs, here
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )
        finally:
            # The last replies reach the client before the process ends (bounded: a client
            # that reads nothing more would hold it forever).
            await anyio.to_thread.run_sync(replies.finish, _LAST_REPLIES_WAIT)
