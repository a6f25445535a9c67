"""The asyncio client: the blocking client's API as coroutines, and updates as an async iterator."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

from ._base import AppState, Ask, ClientBase, Listening, Refreshed, Stale, log
from ._core import (
    BACKOFF_MIN,
    ConnectionLost,
    DaemonUnavailable,
    Error,
    Flag,
    FlagsUpdate,
    JSONObject,
    LineBuffer,
    Timeout,
)

T = TypeVar("T")


class _Updates:
    """One `updates()` iterator's pending update: later ones merge into it, so a slow reader holds at most one
    update of every key, never a growing queue."""

    def __init__(self) -> None:
        self.pending = FlagsUpdate()
        self.ready = asyncio.Event()
        self.closed = False

    def put(self, update: FlagsUpdate) -> None:
        self.pending = self.pending.merged(update) if self.pending else update
        self.ready.set()

    def close(self) -> None:
        self.closed = True
        self.ready.set()


async def _open(path: str, timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.open_unix_connection(path)
    except TimeoutError:
        raise Timeout(f"connecting to {path} timed out") from None
    except OSError as error:
        raise DaemonUnavailable(f"cannot connect to {path}: {error.strerror or error}") from None


class AsyncClient(ClientBase):
    """The asyncio twin of `pwflags.Client`: the same calls, mirror, restarts and listeners, on the running
    loop. Reads are coroutines that return at once from the mirror once it holds the flags (`start`), and ask
    the daemon before. A cancelled call drops its connection (its answer would arrive out of turn); the next
    call opens another. Use it from one event loop.
    """

    def _init_io(self) -> None:
        self._call_lock: asyncio.Lock | None = None
        self._stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._iterators: set[_Updates] = set()
        self._task: asyncio.Task[None] | None = None
        self._snapshot: asyncio.Event | None = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # Calls.

    def _drop(self) -> None:
        if self._stream is not None:
            self._stream[1].close()
            self._stream = None
        self._buffer = LineBuffer(self.max_line_bytes)

    async def _exchange(self, line: bytes, request_id: int, reused: bool) -> JSONObject:
        assert self._stream is not None
        reader, writer = self._stream
        heard = False
        try:
            writer.write(line)
            await writer.drain()
            while True:
                result = self._answer_in(await reader.read(65536), request_id, reused and not heard)
                if result is not None:
                    return result
                heard = True
        except (BrokenPipeError, ConnectionResetError) as error:
            raise self._broken(error, reused and not heard) from None

    async def call(self, method: str, params: JSONObject | None = None, timeout: float | None = None) -> JSONObject:
        """Calls `method` and returns its result, with the errors of `pwflags.Client.call`."""
        self._check_open()
        if self._call_lock is None:
            self._call_lock = asyncio.Lock()
        try:
            async with asyncio.timeout(self.timeout if timeout is None else timeout):
                async with self._call_lock:
                    for attempt in range(2):
                        reused = self._stream is not None and attempt == 0
                        if self._stream is None:
                            self._stream = await _open(self.path, self.timeout)
                        request_id, line = self._calls.request(method, params)
                        try:
                            with self._attempt():
                                return await self._exchange(line, request_id, reused)
                        except Stale:
                            pass
                    raise ConnectionLost(f"{self.path} closed the connection before the answer")  # pragma: no cover
        except TimeoutError as error:
            if isinstance(error, Timeout):
                raise
            raise Timeout(f"no answer from {self.path} in time") from None

    async def _make(self, ask: Ask[T]) -> T:
        """Makes the call `ask` describes; what its result means."""
        return ask.meaning(await self.call(ask.method, ask.params, ask.timeout))

    async def _answer(self, read: T | Ask[T]) -> T:
        """What `read` answers: at once from the mirror, or by making its call."""
        return await self._make(read) if isinstance(read, Ask) else read

    async def get(self, key: str) -> Flag | None:
        """The flag `key`, or None when the daemon serves no such flag."""
        return await self._answer(self._read_get(key))

    async def get_all(self) -> Mapping[str, Flag]:
        """Every flag, by key."""
        return await self._answer(self._read_all())

    async def is_enabled(self, key: str, default: bool = False) -> bool:
        """Whether flag `key` is on; `default` when there is no such flag."""
        return await self._answer(self._read_enabled(key, default))

    async def get_string(self, key: str, name: str, default: str) -> str:
        """Property `name` of flag `key` when it is a string, else `default` (R6)."""
        return await self._answer(self._read_property(key, Flag.get_string, name, default))

    async def get_int(self, key: str, name: str, default: int) -> int:
        """Property `name` of flag `key` when it is a whole number, else `default` (R6)."""
        return await self._answer(self._read_property(key, Flag.get_int, name, default))

    async def get_float(self, key: str, name: str, default: float) -> float:
        """Property `name` of flag `key` when it is a number, else `default` (R6)."""
        return await self._answer(self._read_property(key, Flag.get_float, name, default))

    async def get_bool(self, key: str, name: str, default: bool) -> bool:
        """Property `name` of flag `key` when it is a boolean, else `default` (R6)."""
        return await self._answer(self._read_property(key, Flag.get_bool, name, default))

    async def get_json(self, key: str, name: str, default: Any = None) -> Any:
        """Property `name` of flag `key` when it is a JSON object or array (a copy), else `default` (R6)."""
        return await self._answer(self._read_property(key, Flag.get_json, name, default))

    async def refresh(self) -> Refreshed:
        """As `pwflags.Client.refresh`."""
        return await self._make(self._ask_refresh())

    async def log_impression(self, key: str) -> str:
        """As `pwflags.Client.log_impression`."""
        return await self._make(self._ask_log_impression(key))

    async def set_user_id(self, user_id: str) -> JSONObject:
        """As `pwflags.Client.set_user_id`."""
        return await self._make(self._ask_set_user_id(user_id))

    async def set_app_state(self, state: AppState) -> bool:
        """As `pwflags.Client.set_app_state`."""
        return await self._make(self._ask_set_app_state(state))

    async def explain(self, key: str) -> JSONObject:
        """Why flag `key` reads as it does (docs/protocol.md, explain)."""
        return await self._make(self._ask_explain(key))

    async def status(self) -> JSONObject:
        """The daemon's status (docs/protocol.md, status)."""
        return await self._make(self._ask_status())

    # The mirror and listeners.

    def start(self) -> None:
        """Starts the task that keeps the mirror, on the running loop (once)."""
        self._check_open()
        if self._task is None:
            self._snapshot = self._snapshot or asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="pwflags")

    async def wait_for_snapshot(self, timeout: float) -> bool:
        """Starts the mirror and waits for its first snapshot; False when `timeout` passed without one."""
        self.start()
        assert self._snapshot is not None
        try:
            async with asyncio.timeout(timeout):
                await self._snapshot.wait()
        except TimeoutError:
            return False
        return True

    def _snapshot_taken(self) -> None:
        if self._snapshot is not None:
            self._snapshot.set()

    async def updates(self) -> AsyncIterator[FlagsUpdate]:
        """The updates from now on, as an async iterator that ends when the client closes. Updates that arrive
        while the reader is busy are merged into one (a key's last fate wins). Starts the mirror."""
        self.start()
        pending = _Updates()
        self._iterators.add(pending)
        try:
            while True:
                await pending.ready.wait()
                pending.ready.clear()
                if pending.pending:
                    update, pending.pending = pending.pending, FlagsUpdate()
                    yield update
                elif pending.closed:
                    return
        finally:
            self._iterators.discard(pending)

    def _dispatch(self, update: FlagsUpdate) -> None:
        if update:
            for iterator in self._iterators:
                iterator.put(update)
        super()._dispatch(update)

    async def close(self) -> None:
        """Stops the mirror, ends the `updates()` iterators and closes the connections."""
        if self._closed:
            return
        self._closed = True
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._drop()
        for iterator in self._iterators:
            iterator.close()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = BACKOFF_MIN
        while True:
            try:
                await self._subscribe()
            except (Error, OSError) as error:
                log.debug("pwflags subscription ended: %s", error)
            wait, backoff = self._ended(backoff)
            deadline = loop.time() + wait
            while (left := deadline - loop.time()) > 0:
                await asyncio.sleep(self._pause(left))
                self._expire()

    async def _subscribe(self) -> None:
        loop = asyncio.get_running_loop()
        reader, writer = await _open(self.path, self.timeout)
        try:
            listening = Listening(self, loop.time())
            writer.write(listening.open())
            while True:
                try:
                    async with asyncio.timeout_at(listening.due()):
                        data = await reader.read(65536)
                except TimeoutError:
                    data = None
                listening.check(loop.time())
                if data is not None:
                    listening.receive(data)
                if (status := listening.status_line(loop.time())) is not None:
                    writer.write(status)
                    async with asyncio.timeout(self.timeout):
                        await writer.drain()
        finally:
            writer.close()
