"""The asyncio client: every method, the updates iterator, restarts, and cancelled tasks."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest
from conftest import DEADLINE, DEMO, Daemon, FakeDaemon, flag, read_line

import pwflags


def run(coroutine: Any) -> Any:
    """Runs a test coroutine with the tests' deadline."""

    async def bounded() -> Any:
        async with asyncio.timeout(DEADLINE * 3):
            return await coroutine

    return asyncio.run(bounded())


def test_every_call_against_the_daemon(daemon: Daemon) -> None:
    async def main() -> None:
        async with pwflags.AsyncClient(daemon.socket) as client:
            checkout = await client.get("new_checkout")
            assert checkout is not None and checkout.rule_id == "r_1a2b3c4d"
            assert await client.get("no_such_flag") is None
            assert len(await client.get_all()) == 4
            assert await client.is_enabled("search_v2") and not await client.is_enabled("dark_mode", True)
            assert await client.get_string("new_checkout", "button_color", "blue") == "green"
            assert await client.get_int("new_checkout", "max_items", 1) == 5
            assert await client.get_float("new_checkout", "button_color", 1.5) == 1.5
            assert await client.get_bool("new_checkout", "max_items", True) is True
            assert await client.get_json("new_checkout", "layout") == {"columns": 2}
            assert (await client.refresh()).from_network is False
            assert await client.log_impression("dark_mode") == "logged"
            assert (await client.set_user_id("bob"))["userId"] == "bob"
            assert isinstance(await client.set_app_state("foreground"), bool)
            assert (await client.explain("search_v2"))["rule"] == "default"
            assert (await client.status())["userId"] == "bob"
            with pytest.raises(pwflags.RemoteError) as refused:
                await client.call("explain", {})
            assert refused.value.code == -32602
            assert await client.wait_for_snapshot(DEADLINE)
            assert await client.get_int("new_checkout", "max_items", 1) == 5

    run(main())


def test_updates_and_listeners_across_a_restart(daemon: Daemon) -> None:
    async def main() -> None:
        async with pwflags.AsyncClient(daemon.socket) as client:
            heard: list[pwflags.FlagsUpdate] = []
            client.add_listener(heard.append)
            updates = client.updates()
            first = await anext(updates)
            assert first.changed == ("dark_mode", "holiday_banner", "new_checkout", "search_v2")
            await asyncio.to_thread(daemon.stop)
            await asyncio.to_thread(daemon.write_flags, [*DEMO[1:], flag("fresh")])
            await asyncio.to_thread(daemon.start)
            second = await anext(updates)
            assert second == pwflags.FlagsUpdate(changed=("fresh",), removed=("new_checkout",))
            # A restart with no change: the next update is the next change.
            await asyncio.to_thread(daemon.restart)
            await asyncio.to_thread(daemon.write_flags, DEMO[1:])
            third = await anext(updates)
            assert third == pwflags.FlagsUpdate(removed=("fresh",))
            assert heard == [first, second, third]

    run(main())


def test_updates_end_when_the_client_closes(daemon: Daemon) -> None:
    async def main() -> None:
        client = pwflags.AsyncClient(daemon.socket)
        seen: list[pwflags.FlagsUpdate] = []

        async def consume() -> None:
            async for update in client.updates():
                seen.append(update)

        consumer = asyncio.create_task(consume())
        assert await client.wait_for_snapshot(DEADLINE)
        await client.close()
        await consumer
        assert len(seen) == 1

    run(main())


def slow_answers(first_answered: threading.Event) -> Callable[[socket.socket, int], None]:
    """A fake daemon whose first connection answers only once `first_answered` is set, and late; later
    connections answer at once. Answers echo the method, so a mixed-up answer shows."""

    def serve(conn: socket.socket, number: int) -> None:
        while line := read_line(conn):
            request = json.loads(line)
            if number == 1:
                first_answered.wait(DEADLINE)
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"method": request["method"]}}
            try:
                conn.sendall(json.dumps(answer).encode() + b"\n")
            except OSError:
                return

    return serve


def test_a_cancelled_call_leaves_the_client_usable(fake: Callable[..., FakeDaemon]) -> None:
    release = threading.Event()
    server = fake(slow_answers(release))

    async def main() -> None:
        async with pwflags.AsyncClient(server.path) as client:
            stuck = asyncio.create_task(client.call("first"))
            await asyncio.to_thread(server.connected.wait, DEADLINE)
            await asyncio.sleep(0)  # the request is on its way
            stuck.cancel()
            with pytest.raises(asyncio.CancelledError):
                await stuck
            release.set()  # the first answer now arrives, on the connection the cancel dropped
            assert await client.call("second") == {"method": "second"}
            assert server.connections == 2

    run(main())


def test_a_timed_out_call_raises_timeout_and_the_next_call_works(fake: Callable[..., FakeDaemon]) -> None:
    release = threading.Event()
    server = fake(slow_answers(release))

    async def main() -> None:
        async with pwflags.AsyncClient(server.path, timeout=0.2) as client:
            with pytest.raises(pwflags.Timeout):
                await client.call("first")
            release.set()
            assert await client.call("second") == {"method": "second"}

    run(main())


def test_cancelling_a_task_waiting_for_updates_and_closing_a_client_mid_subscription(daemon: Daemon) -> None:
    async def main() -> None:
        client = pwflags.AsyncClient(daemon.socket)
        assert await client.wait_for_snapshot(DEADLINE)

        async def wait_forever() -> None:
            async for _ in client.updates():
                pass

        waiting = asyncio.create_task(wait_forever())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert not client._iterators
        await client.close()
        assert client._task is None

    run(main())
