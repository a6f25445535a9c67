"""The asyncio client: the blocking client's API as coroutines, and updates as an async iterator."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ._client import AppState, Listener, Refreshed, expect, log, refreshed_from
from ._core import (
    BACKOFF_MAX,
    BACKOFF_MIN,
    MAX_LINE_BYTES,
    STATUS_INTERVAL,
    Calls,
    ConnectionLost,
    DaemonUnavailable,
    Error,
    Flag,
    FlagsUpdate,
    JSONObject,
    LineBuffer,
    Mirror,
    RemoteError,
    Subscription,
    Timeout,
    parse_flags,
    socket_path,
)


class _Stale(Exception):
    """A reused connection was found closed before any of the answer came."""


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


class AsyncClient:
    """The asyncio twin of `pwflags.Client`: the same calls, mirror, restarts and listeners, on the running
    loop. Reads are coroutines that return at once from the mirror once it holds the flags (`start`), and ask
    the daemon before. A cancelled call drops its connection (its answer would arrive out of turn); the next
    call opens another. Use it from one event loop.
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        timeout: float = 5.0,
        refresh_timeout: float = 60.0,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        """As `pwflags.Client`."""
        self.path = socket_path(path)
        self.timeout = timeout
        self.refresh_timeout = refresh_timeout
        self.max_line_bytes = max_line_bytes
        self._call_lock: asyncio.Lock | None = None
        self._stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._buffer = LineBuffer(max_line_bytes)
        self._calls = Calls()
        self._mirror = Mirror()
        self._listeners: dict[int, Listener] = {}
        self._next_handle = 0
        self._iterators: set[_Updates] = set()
        self._task: asyncio.Task[None] | None = None
        self._snapshot: asyncio.Event | None = None
        self._closed = False

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
                data = await reader.read(65536)
                if not data:
                    if reused and not heard:
                        raise _Stale
                    raise ConnectionLost(f"{self.path} closed the connection before the answer")
                heard = True
                for received in self._buffer.feed(data):
                    result = Calls.answer(received, request_id)
                    if result is not None:
                        return result
        except (BrokenPipeError, ConnectionResetError) as error:
            if reused and not heard:
                raise _Stale from None
            raise ConnectionLost(f"{self.path}: {error.strerror}") from None

    async def call(self, method: str, params: JSONObject | None = None, timeout: float | None = None) -> JSONObject:
        """Calls `method` and returns its result, with the errors of `pwflags.Client.call`."""
        if self._closed:
            raise Error("the client is closed")
        if self._call_lock is None:
            self._call_lock = asyncio.Lock()
        try:
            async with asyncio.timeout(self.timeout if timeout is None else timeout):
                async with self._call_lock:
                    for attempt in range(2):
                        reused = self._stream is not None
                        if self._stream is None:
                            self._stream = await _open(self.path, self.timeout)
                        request_id, line = self._calls.request(method, params)
                        try:
                            return await self._exchange(line, request_id, reused and attempt == 0)
                        except RemoteError:
                            raise
                        except _Stale:
                            self._drop()
                        except BaseException:
                            self._drop()
                            raise
                    raise ConnectionLost(f"{self.path} closed the connection before the answer")  # pragma: no cover
        except TimeoutError as error:
            if isinstance(error, Timeout):
                raise
            raise Timeout(f"no answer from {self.path} in time") from None

    def _mirrored(self) -> Mapping[str, Flag] | None:
        return self._mirror.flags if self._mirror.has_snapshot else None

    async def get(self, key: str) -> Flag | None:
        """The flag `key`, or None when the daemon serves no such flag."""
        flags = self._mirrored()
        if flags is not None:
            return flags.get(key)
        value = (await self.call("get", {"key": key})).get("flag")
        return None if value is None else Flag.from_json(value)

    async def get_all(self) -> Mapping[str, Flag]:
        """Every flag, by key."""
        flags = self._mirrored()
        if flags is not None:
            return flags
        return parse_flags((await self.call("getAll")).get("flags"))

    async def is_enabled(self, key: str, default: bool = False) -> bool:
        """Whether flag `key` is on; `default` when there is no such flag."""
        flags = self._mirrored()
        if flags is not None:
            flag = flags.get(key)
            return default if flag is None else flag.enabled
        return bool(expect(await self.call("isEnabled", {"key": key, "default": default}), "enabled", bool))

    async def get_string(self, key: str, name: str, default: str) -> str:
        """Property `name` of flag `key` when it is a string, else `default` (R6)."""
        flag = await self.get(key)
        return default if flag is None else flag.get_string(name, default)

    async def get_int(self, key: str, name: str, default: int) -> int:
        """Property `name` of flag `key` when it is a whole number, else `default` (R6)."""
        flag = await self.get(key)
        return default if flag is None else flag.get_int(name, default)

    async def get_float(self, key: str, name: str, default: float) -> float:
        """Property `name` of flag `key` when it is a number, else `default` (R6)."""
        flag = await self.get(key)
        return default if flag is None else flag.get_float(name, default)

    async def get_bool(self, key: str, name: str, default: bool) -> bool:
        """Property `name` of flag `key` when it is a boolean, else `default` (R6)."""
        flag = await self.get(key)
        return default if flag is None else flag.get_bool(name, default)

    async def get_json(self, key: str, name: str, default: Any = None) -> Any:
        """Property `name` of flag `key` when it is a JSON object or array (a copy), else `default` (R6)."""
        flag = await self.get(key)
        return default if flag is None else flag.get_json(name, default)

    async def refresh(self) -> Refreshed:
        """As `pwflags.Client.refresh`."""
        result = await self.call("refresh", timeout=self.refresh_timeout)
        refreshed = refreshed_from(result)
        self._dispatch(self._mirror.apply_refresh(result))
        return refreshed

    async def log_impression(self, key: str) -> str:
        """As `pwflags.Client.log_impression`."""
        return str(expect(await self.call("logImpression", {"key": key}), "outcome", str))

    async def set_user_id(self, user_id: str) -> JSONObject:
        """As `pwflags.Client.set_user_id`."""
        return await self.call("setUserId", {"userId": user_id})

    async def set_app_state(self, state: AppState) -> bool:
        """As `pwflags.Client.set_app_state`."""
        return bool(expect(await self.call("setAppState", {"state": state}), "sessionStarted", bool))

    async def explain(self, key: str) -> JSONObject:
        """Why flag `key` reads as it does (docs/protocol.md, explain)."""
        return await self.call("explain", {"key": key})

    async def status(self) -> JSONObject:
        """The daemon's status (docs/protocol.md, status)."""
        return await self.call("status")

    # The mirror and listeners.

    @property
    def has_snapshot(self) -> bool:
        """True once the mirror holds the daemon's flags."""
        return self._mirror.has_snapshot

    @property
    def is_connected(self) -> bool:
        """True while the mirror's subscription is open."""
        return self._mirror.connected

    @property
    def revision(self) -> int:
        """The daemon's revision of the flags the mirror holds (0 before a snapshot)."""
        return self._mirror.revision

    @property
    def epoch(self) -> str | None:
        """The daemon run of the flags the mirror holds; None before a snapshot or once they expired."""
        return self._mirror.epoch

    def start(self) -> None:
        """Starts the task that keeps the mirror, on the running loop (once)."""
        if self._closed:
            raise Error("the client is closed")
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

    def add_listener(self, listener: Listener) -> int:
        """Calls `listener` on the loop after each change of what the reads return; returns a handle for
        `remove_listener`. Starts the mirror."""
        self._next_handle += 1
        self._listeners[self._next_handle] = listener
        self.start()
        return self._next_handle

    def remove_listener(self, handle: int) -> bool:
        """Removes a listener; it is not called again."""
        return self._listeners.pop(handle, None) is not None

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
        if not update:
            return
        for iterator in self._iterators:
            iterator.put(update)
        for handle, listener in list(self._listeners.items()):
            if handle not in self._listeners:
                continue
            try:
                listener(update)
            except Exception:
                log.exception("a pwflags listener raised")

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
            if self._mirror.connected:
                backoff = BACKOFF_MIN
            self._mirror.disconnected()
            deadline = loop.time() + backoff
            backoff = min(backoff * 2, BACKOFF_MAX)
            while (left := deadline - loop.time()) > 0:
                until = self._mirror.seconds_until_expiry(time.time())
                await asyncio.sleep(left if until is None else min(left, until))
                self._dispatch(self._mirror.expire_if_due(time.time()))

    async def _subscribe(self) -> None:
        loop = asyncio.get_running_loop()
        reader, writer = await _open(self.path, self.timeout)
        try:
            subscription = Subscription(self._mirror)
            buffer = LineBuffer(self.max_line_bytes)
            writer.write(subscription.open())
            status_at = loop.time() + STATUS_INTERVAL
            listen_by = loop.time() + self.timeout  # a daemon that never answers `listen` is left
            while True:
                due = status_at if self._mirror.connected else listen_by
                try:
                    async with asyncio.timeout_at(due):
                        data = await reader.read(65536)
                except TimeoutError:
                    data = None
                if not self._mirror.connected and loop.time() >= listen_by:
                    raise Timeout("no answer to listen in time")
                if data == b"":
                    raise ConnectionLost("the daemon closed the subscription")
                for line in buffer.feed(data or b""):
                    update = subscription.receive(line)
                    if self._mirror.has_snapshot and self._snapshot is not None:
                        self._snapshot.set()
                    self._dispatch(update)
                if self._mirror.connected and loop.time() >= status_at:
                    status_at = loop.time() + STATUS_INTERVAL
                    writer.write(subscription.status_request())
                    async with asyncio.timeout(self.timeout):
                        await writer.drain()
        finally:
            writer.close()
