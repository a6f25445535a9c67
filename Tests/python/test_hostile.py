"""A hostile daemon: garbage, a line that never ends, a connection closed mid-reply, silence. Each gives a
clear exception within the deadline, and memory stays bounded."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import tracemalloc
from collections.abc import Callable

import pytest
from conftest import DEADLINE, FakeDaemon, read_line

import pwflags

Serve = Callable[[socket.socket, int], None]


def answering(reply: bytes) -> Serve:
    """Reads one request, sends `reply`, then closes."""

    def serve(conn: socket.socket, number: int) -> None:
        if read_line(conn):
            conn.sendall(reply)
        conn.shutdown(socket.SHUT_WR)
        read_line(conn)

    return serve


def endless(conn: socket.socket, number: int) -> None:
    """Answers with a line that never ends, until the client hangs up."""
    read_line(conn)
    chunk = b"x" * 65536
    try:
        while True:
            conn.sendall(chunk)
    except OSError:
        pass


def silent(conn: socket.socket, number: int) -> None:
    while read_line(conn):
        pass


CASES: dict[str, tuple[Serve, type[pwflags.Error]]] = {
    "garbage": (answering(b"\x00\xffnot json at all\n"), pwflags.ProtocolError),
    "not an object": (answering(b"[1,2,3]\n"), pwflags.ProtocolError),
    "NaN": (answering(b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}\n'), pwflags.ProtocolError),
    "deep nesting": (answering(b"[" * 100000 + b"]" * 100000 + b"\n"), pwflags.ProtocolError),
    "huge number": (answering(b'{"id":1,"result":{"n":' + b"9" * 10000 + b"}}\n"), pwflags.ProtocolError),
    "wrong id": (answering(b'{"jsonrpc":"2.0","id":7,"result":{}}\n'), pwflags.ProtocolError),
    "result not an object": (answering(b'{"jsonrpc":"2.0","id":1,"result":3}\n'), pwflags.ProtocolError),
    "bad error": (answering(b'{"jsonrpc":"2.0","id":1,"error":"no"}\n'), pwflags.ProtocolError),
    "bad flag": (answering(b'{"jsonrpc":"2.0","id":1,"result":{"flag":{"key":1}}}\n'), pwflags.ProtocolError),
    "closed mid-reply": (answering(b'{"jsonrpc":"2.0","id":1,"res'), pwflags.ConnectionLost),
    "closed at once": (answering(b""), pwflags.ConnectionLost),
    "endless line": (endless, pwflags.ProtocolError),
    "silence": (silent, pwflags.Timeout),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_blocking_client_raises_a_clear_error(case: str, fake: Callable[[Serve], FakeDaemon]) -> None:
    serve, expected = CASES[case]
    server = fake(serve)
    started = time.monotonic()
    with pwflags.Client(server.path, timeout=1.0, max_line_bytes=1 << 20) as client:
        with pytest.raises(expected) as raised:
            client.get("new_checkout")
        assert isinstance(raised.value, pwflags.Error) and str(raised.value)
    assert time.monotonic() - started < DEADLINE


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_async_client_raises_a_clear_error(case: str, fake: Callable[[Serve], FakeDaemon]) -> None:
    serve, expected = CASES[case]
    server = fake(serve)

    async def main() -> None:
        async with pwflags.AsyncClient(server.path, timeout=1.0, max_line_bytes=1 << 20) as client:
            with pytest.raises(expected):
                await client.get("new_checkout")

    asyncio.run(asyncio.wait_for(main(), DEADLINE))


def test_an_endless_line_holds_at_most_the_line_bound(fake: Callable[[Serve], FakeDaemon]) -> None:
    server = fake(endless)
    bound = 1 << 20
    tracemalloc.start()
    try:
        with pwflags.Client(server.path, timeout=DEADLINE, max_line_bytes=bound) as client:
            with pytest.raises(pwflags.ProtocolError):
                client.get("new_checkout")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * bound, f"peak {peak} bytes for a {bound}-byte line bound"


def test_the_mirror_survives_a_hostile_daemon_and_closes_promptly(fake: Callable[[Serve], FakeDaemon]) -> None:
    def hostile(conn: socket.socket, number: int) -> None:
        read_line(conn)
        replies = [b"garbage\n", b'{"jsonrpc":"2.0","id":5,"result":{}}\n', b"x" * (1 << 16), b""]
        conn.sendall(replies[number % len(replies)])

    server = fake(hostile)
    client = pwflags.Client(server.path, timeout=0.5, max_line_bytes=1 << 15)
    client.start()
    deadline = time.monotonic() + DEADLINE
    while server.connections < 5 and time.monotonic() < deadline:
        server.connected.wait(0.5)
        server.connected.clear()
    assert server.connections >= 5, "the mirror did not keep reconnecting"
    assert not client.has_snapshot and not client.is_connected
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 1.0


def test_a_listen_answered_unchanged_out_of_turn_is_refused(fake: Callable[[Serve], FakeDaemon]) -> None:
    def lying(conn: socket.socket, number: int) -> None:
        request = json.loads(read_line(conn) or b"{}")
        result = {"subscription": "s1", "epoch": "e", "revision": 3, "unchanged": True, "expiresAt": None}
        conn.sendall(json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": result}).encode() + b"\n")
        read_line(conn)

    server = fake(lying)
    with pwflags.Client(server.path) as client:
        client.start()
        deadline = time.monotonic() + DEADLINE
        while server.connections < 2 and time.monotonic() < deadline:
            server.connected.wait(0.5)
            server.connected.clear()
        assert server.connections >= 2 and not client.has_snapshot
