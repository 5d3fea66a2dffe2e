"""mcp/stdio.py: over stdio, every request line gets a reply, a malformed one a JSON-RPC error.

The SDK's own client cannot send these lines (it refuses to encode a lone surrogate and builds
only valid messages), so the server runs as a real subprocess fed raw lines: one process for the
module, each test's line followed by a request that must still be answered.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import IO, Any

import anyio
import pytest

from mcp_servers import PREFLIGHT_FSM
from preflight_fsm.mcp.stdio import (
    MAX_LINE_CHARS,
    _Replies,
    checked,
    replies_only_on_stdout,
    request_id,
    requests_only_on_stdin,
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DEEP = "[" * 5000 + "]" * 5000
CALL = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_session",'

MALFORMED = {
    "lone-surrogate-escape": (CALL + '"arguments":{"session_id":"\\ud800"}}}', 7, -32700),
    "5000-deep-arguments": (CALL + '"arguments":{"x":' + DEEP + "}}}", 7, -32700),
    "params-not-an-object": (
        '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":"x"}', 8, -32602
    ),
    "jsonrpc-1.0": ('{"jsonrpc":"1.0","id":9,"method":"tools/list"}', 9, -32602),
    "object-id": ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None, -32600),
}  # fmt: skip


def _forward(lines: IO[str], into: queue.Queue[str]) -> None:
    for line in lines:
        into.put(line)


class StdioServer:
    """`preflight-fsm mcp` as a subprocess fed raw lines, its replies read by a thread (so that a
    reply that never comes fails the test, not hangs it)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process, self.stdin = process, process.stdin
        self.received: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_forward, args=(process.stdout, self.received), daemon=True).start()

    def replies(self, lines: list[str], wanted: int) -> list[dict[str, Any]]:
        """The server's next ``wanted`` replies, ``lines`` sent; queue.Empty after 30 s without
        one."""
        self.stdin.write("\n".join(lines) + "\n")
        self.stdin.flush()
        return [json.loads(self.received.get(timeout=30)) for _ in range(wanted)]


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioServer]:
    """One stdio server, initialized, for the module's malformed lines: each test checks that
    its line is answered and that the server goes on answering (its input never ends in between:
    the SDK cancels what is in flight at end of input)."""
    cwd = tmp_path_factory.mktemp("stdio")
    with subprocess.Popen(
        [PREFLIGHT_FSM, "mcp", "--store", str(cwd / "s.sqlite3")],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            server = StdioServer(process)
            (initialized,) = server.replies([json.dumps(INITIALIZE), json.dumps(INITIALIZED)], 1)
            assert 0 == initialized["id"]
            yield server
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


@pytest.mark.parametrize(("line", "expected_id", "code"), MALFORMED.values(), ids=MALFORMED)
def test_a_malformed_request_over_stdio_gets_an_error_reply(
    stdio: StdioServer, line: str, expected_id: int | None, code: int
) -> None:
    """Issue 23: the request gets a JSON-RPC error carrying its id (when it has a valid one),
    as over HTTP, instead of no reply; the server goes on answering the next request."""
    after = '{"jsonrpc":"2.0","id":10,"method":"tools/list"}'
    error, listed = stdio.replies([line, after], 2)
    assert (expected_id, code) == (error["id"], error["error"]["code"])
    assert (10, True) == (listed["id"], "result" in listed)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"jsonrpc":"2.0","id":3,"params":{"id":"inner"}}', 3),
        ('{"params":{"id":"inner"},"id":"outer"}', "outer"),
        ('{"params":{"s":"\\"id\\": 9"},"id": 4 }', 4),
        ('{"id":{"a":1}}', None),
        ('{"id":1.5}', None),
        ('{"x":' + DEEP + ',"id":12}', 12),
        ("not json", None),
    ],
    ids=["first", "after-nested-id", "id-inside-a-string", "object", "float", "after-deep",
         "no-json"],
)  # fmt: skip
def test_request_id_reads_the_top_level_id_only(line: str, expected: int | str | None) -> None:
    """The id is read from the top-level object by scanning: nested "id" members and strings
    holding "id" are skipped, and a line too deep for any parser still yields it."""
    assert expected == request_id(line)


def test_a_valid_message_passes_unchecked() -> None:
    """A line the SDK reads as a message is left to it."""
    assert None is checked(json.dumps(INITIALIZE))
    assert None is checked(json.dumps(INITIALIZED))


def test_while_serving_a_stray_write_to_standard_output_goes_to_standard_error(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Only replies reach the wire: file descriptor 1 points at standard error meanwhile, and is
    the wire again afterwards."""
    with replies_only_on_stdout() as wire:
        os.write(1, b"stray\n")
        wire.write(b"reply\n")
        wire.flush()
    os.write(1, b"after\n")
    assert ("reply\nafter\n", "stray\n") == capfd.readouterr()


def test_while_serving_a_child_reads_end_of_input_and_the_requests_reach_only_the_server() -> None:
    """No handler or child process can take a request off the wire: file descriptor 0 reads the
    null device meanwhile, and is the client's pipe again afterwards."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        os.write(write_end, b"request\n")
        with requests_only_on_stdin() as wire:
            child = subprocess.run(["cat"], capture_output=True, timeout=30, check=True)
            assert (b"", b"request\n") == (child.stdout, wire.readline())
        os.write(write_end, b"after\n")
        assert b"after\n" == os.read(0, 100)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(write_end)


def test_a_line_over_the_http_body_limit_is_answered_and_skipped(stdio: StdioServer) -> None:
    """A request line longer than MAX_LINE_CHARS (the HTTP transport's 4 MiB) gets -32600 with
    its id, its rest is skipped unread, and the next request is answered."""
    huge = CALL + '"arguments":{"x":"' + "a" * MAX_LINE_CHARS + '"}}}'
    after = '{"jsonrpc":"2.0","id":10,"method":"tools/list"}'
    error, listed = stdio.replies([huge, after], 2)
    assert (7, -32600) == (error["id"], error["error"]["code"])
    assert 10 == listed["id"]


def test_a_line_over_the_limit_is_answered_before_its_end_arrives(stdio: StdioServer) -> None:
    """An endless line is refused as soon as it passes the limit, not when (if ever) it ends."""
    stdio.stdin.write(CALL + '"arguments":{"x":"' + "a" * MAX_LINE_CHARS)
    stdio.stdin.flush()
    error = json.loads(stdio.received.get(timeout=30))
    assert (7, -32600) == (error["id"], error["error"]["code"])
    (listed,) = stdio.replies(['"}}}', '{"jsonrpc":"2.0","id":11,"method":"tools/list"}'], 1)
    assert 11 == listed["id"]


def test_replies_reach_the_wire_whole_and_in_order() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as received, os.fdopen(write_end, "wb") as wire:
        replies = _Replies(wire)

        async def send() -> None:
            for n in range(5):
                await replies.write(json.dumps({"id": n}))
                await replies.write("\n")
                await replies.flush()

        anyio.run(send)
        replies.finish(timeout=30)
        wire.close()
        assert [{"id": n} for n in range(5)] == [json.loads(line) for line in received]


def test_a_reply_the_wire_refused_is_raised_by_the_next_flush() -> None:
    """As the SDK's own standard output raises it: the client is gone, the server ends."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb", buffering=0) as wire:  # nothing left to flush at its close
        replies = _Replies(wire)

        async def send() -> None:
            await replies.write("{}\n")
            await replies.flush()
            await anyio.to_thread.run_sync(replies.finish, 30)  # the refused write is done
            await replies.write("{}\n")
            await replies.flush()

        with pytest.raises(BrokenPipeError):
            anyio.run(send)
