"""What the blocking and the asyncio client share: everything but their I/O.

`ClientBase` holds the settings, the mirror and the reads answered from it, the listeners, what each call sends
and what its answer means, and the rules of the two connections; `Client` and `AsyncClient` add the sockets,
the thread or task that keeps the mirror, and the waiting. A read or a call that needs the daemon hands back an
`Ask` (the call to make and what its result means), which each client makes in its own way (`_answer`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ._core import (
    BACKOFF_MAX,
    BACKOFF_MIN,
    MAX_LINE_BYTES,
    STATUS_INTERVAL,
    Calls,
    ConnectionLost,
    Error,
    Flag,
    FlagsUpdate,
    JSONObject,
    LineBuffer,
    Mirror,
    ProtocolError,
    RemoteError,
    Subscription,
    Timeout,
    parse_flags,
    socket_path,
)

log = logging.getLogger("pwflags")

Listener = Callable[[FlagsUpdate], None]
"""A listener: called with the keys that changed and went, after the mirror shows them."""

AppState = Literal["foreground", "background"]

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Refreshed:
    """The answer of `refresh`: the flags now served, and whether they came from the network."""

    flags: Mapping[str, Flag]
    from_network: bool
    epoch: str | None
    revision: int


def refreshed_from(result: JSONObject) -> Refreshed:
    """The `Refreshed` of a refresh answer."""
    revision = result.get("revision")
    epoch = result.get("epoch")
    return Refreshed(
        flags=parse_flags(result.get("flags")),
        from_network=result.get("fromNetwork") is True,
        epoch=epoch if isinstance(epoch, str) else None,
        revision=revision if isinstance(revision, int) else 0,
    )


def expect(result: JSONObject, name: str, kind: type) -> Any:
    """`result[name]` when it is a `kind`; ProtocolError otherwise."""
    value = result.get(name)
    if not isinstance(value, kind):
        raise ProtocolError(f"the answer's {name} is not a {kind.__name__}")
    return value


class Stale(Exception):
    """A reused connection was found closed before any of the answer came: the daemon never read the call."""


@dataclass(frozen=True, slots=True)
class Ask(Generic[T]):
    """A call that a read or a method needs: what to send, and what its result means."""

    method: str
    params: JSONObject | None
    meaning: Callable[[JSONObject], T]
    timeout: float | None = None

    def then(self, step: Callable[[T], U]) -> Ask[U]:
        """The same call, its meaning followed by `step`."""
        meaning = self.meaning
        return Ask(self.method, self.params, lambda result: step(meaning(result)), self.timeout)


def _as_is(result: JSONObject) -> JSONObject:
    return result


def _flag_of(result: JSONObject) -> Flag | None:
    value = result.get("flag")
    return None if value is None else Flag.from_json(value)


def _flags_of(result: JSONObject) -> Mapping[str, Flag]:
    return parse_flags(result.get("flags"))


def _enabled_of(result: JSONObject) -> bool:
    return bool(expect(result, "enabled", bool))


def _outcome_of(result: JSONObject) -> str:
    return str(expect(result, "outcome", str))


def _session_started_of(result: JSONObject) -> bool:
    return bool(expect(result, "sessionStarted", bool))


class ClientBase:
    """The state and rules `Client` and `AsyncClient` share. A subclass makes the calls (`call`, `_answer`),
    closes the calls' connection (`_drop`), keeps the mirror (`start`) and wakes those waiting for a snapshot
    (`_snapshot_taken`). The locks are no-ops here; the blocking client, whose mirror a thread keeps, sets
    real ones."""

    _mirror_lock: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    _dispatch_lock: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()

    def __init__(
        self,
        path: str | None = None,
        *,
        timeout: float = 5.0,
        refresh_timeout: float = 60.0,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        """`path` is the socket (None: `$PWFLAGS_SOCKET`, else `/run/pwflagsd/pwflagsd.sock`); `timeout` bounds
        each call, `refresh_timeout` a refresh, which waits for the network."""
        self.path = socket_path(path)
        self.timeout = timeout
        self.refresh_timeout = refresh_timeout
        self.max_line_bytes = max_line_bytes
        self._buffer = LineBuffer(max_line_bytes)
        self._calls = Calls()
        self._mirror = Mirror()
        self._listeners: dict[int, Listener] = {}
        self._next_handle = 0
        self._closed = False
        self._init_io()

    def _init_io(self) -> None:
        """Sets up the subclass's own state (its connections, locks and events), at the end of `__init__`."""

    def start(self) -> None:
        """Starts keeping the mirror (once; later calls do nothing)."""
        raise NotImplementedError

    def _drop(self) -> None:
        """Closes the calls' connection; the next call opens another."""
        raise NotImplementedError

    def _snapshot_taken(self) -> None:
        """Wakes those waiting for the mirror's first snapshot."""
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._closed:
            raise Error("the client is closed")

    # Calls: what each sends and what its answer means.

    @contextlib.contextmanager
    def _attempt(self) -> Iterator[None]:
        """One attempt of a call: anything but an error answer (a timeout, a cancellation, a broken or stale
        connection, a protocol error) drops the calls' connection, whose answer would now come out of turn."""
        try:
            yield
        except RemoteError:
            raise
        except BaseException:
            self._drop()
            raise

    def _answer_in(self, data: bytes, request_id: int, stale: bool) -> JSONObject | None:
        """The result of call `request_id` once `data`, read from the calls' connection, completes its answer;
        None before. `stale`: the connection was reused and none of the answer came yet, so its end means the
        daemon never read the call (Stale, to send it again), not ConnectionLost."""
        if not data:
            if stale:
                raise Stale
            raise ConnectionLost(f"{self.path} closed the connection before the answer")
        for received in self._buffer.feed(data):
            result = Calls.answer(received, request_id)
            if result is not None:
                return result
        return None

    def _broken(self, error: OSError, stale: bool) -> Exception:
        """What a call raises when its connection broke (`stale` as in `_answer_in`)."""
        return Stale() if stale else ConnectionLost(f"{self.path}: {error.strerror}")

    def _mirrored(self) -> Mapping[str, Flag] | None:
        return self._mirror.flags if self._mirror.has_snapshot else None

    def _read_get(self, key: str) -> Flag | None | Ask[Flag | None]:
        mirror = self._mirror  # the reads' fast path: no call before the lookup
        if mirror.has_snapshot:
            return mirror.flags.get(key)
        return Ask("get", {"key": key}, _flag_of)

    def _read_all(self) -> Mapping[str, Flag] | Ask[Mapping[str, Flag]]:
        flags = self._mirrored()
        if flags is not None:
            return flags
        return Ask("getAll", None, _flags_of)

    def _read_enabled(self, key: str, default: bool) -> bool | Ask[bool]:
        flags = self._mirrored()
        if flags is not None:
            flag = flags.get(key)
            return default if flag is None else flag.enabled
        return Ask("isEnabled", {"key": key, "default": default}, _enabled_of)

    def _read_property(self, key: str, pick: Callable[[Flag, str, T], T], name: str, default: T) -> T | Ask[T]:
        """Property `name` of flag `key` as `pick` (a `Flag.get_...` read) takes it, else `default` (R6)."""
        read = self._read_get(key)
        if isinstance(read, Ask):
            return read.then(lambda flag: default if flag is None else pick(flag, name, default))
        return default if read is None else pick(read, name, default)

    def _ask_refresh(self) -> Ask[Refreshed]:
        return Ask("refresh", None, self._refreshed, self.refresh_timeout)

    def _refreshed(self, result: JSONObject) -> Refreshed:
        """A refresh's answer, which the mirror shows at once."""
        refreshed = refreshed_from(result)
        with self._mirror_lock:
            update = self._mirror.apply_refresh(result)
        self._dispatch(update)
        return refreshed

    def _ask_log_impression(self, key: str) -> Ask[str]:
        return Ask("logImpression", {"key": key}, _outcome_of)

    def _ask_set_user_id(self, user_id: str) -> Ask[JSONObject]:
        return Ask("setUserId", {"userId": user_id}, _as_is)

    def _ask_set_app_state(self, state: AppState) -> Ask[bool]:
        return Ask("setAppState", {"state": state}, _session_started_of)

    def _ask_explain(self, key: str) -> Ask[JSONObject]:
        return Ask("explain", {"key": key}, _as_is)

    def _ask_status(self) -> Ask[JSONObject]:
        return Ask("status", None, _as_is)

    # The mirror and listeners.

    @property
    def has_snapshot(self) -> bool:
        """True once the mirror holds the daemon's flags: reads then cost no round trip."""
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
        """The daemon run (`epoch`) of the flags the mirror holds; None before a snapshot or once they expired."""
        return self._mirror.epoch

    def add_listener(self, listener: Listener) -> int:
        """Calls `listener` after each change of what the reads return (the first snapshot included): on the
        mirror's thread for `Client`, on the loop for `AsyncClient`. Returns a handle for `remove_listener`.
        Starts the mirror."""
        with self._dispatch_lock:
            self._next_handle += 1
            self._listeners[self._next_handle] = listener
            handle = self._next_handle
        self.start()
        return handle

    def remove_listener(self, handle: int) -> bool:
        """Removes a listener; once this returns it is not called again (`Client` waits for a running call)."""
        with self._dispatch_lock:
            return self._listeners.pop(handle, None) is not None

    def _dispatch(self, update: FlagsUpdate) -> None:
        if not update:
            return
        with self._dispatch_lock:
            for handle, listener in list(self._listeners.items()):
                if handle not in self._listeners:
                    continue
                try:
                    listener(update)
                except Exception:
                    log.exception("a pwflags listener raised")

    def _apply(self, subscription: Subscription, line: bytes) -> None:
        """Applies a line of the subscription to the mirror, then tells the waiters and the listeners."""
        with self._mirror_lock:
            update = subscription.receive(line)
        if self._mirror.has_snapshot:
            self._snapshot_taken()
        self._dispatch(update)

    def _ended(self, backoff: float) -> tuple[float, float]:
        """The subscription ended: marks the mirror so, and returns the wait before the next one and the
        backoff after it (50 ms doubling to 2 s; 50 ms again after a subscription the daemon answered)."""
        with self._mirror_lock:
            subscribed = self._mirror.connected
            self._mirror.disconnected()
        wait = BACKOFF_MIN if subscribed else backoff
        return wait, min(wait * 2, BACKOFF_MAX)

    def _pause(self, left: float) -> float:
        """How much of the `left` seconds before reconnecting to wait now: less when the flags expire sooner."""
        until = self._mirror.seconds_until_expiry(time.time())
        return left if until is None else min(left, until)

    def _expire(self) -> None:
        """Drops the flags once past their age (R15), and tells the listeners."""
        with self._mirror_lock:
            update = self._mirror.expire_if_due(time.time())
        self._dispatch(update)


class Listening:
    """One subscription connection apart from its socket, on the clock the client passes (`now`): the `listen`
    conversation, the bytes of an unfinished line, and when the `listen` answer and the next `status` are due."""

    def __init__(self, client: ClientBase, now: float) -> None:
        self.client = client
        self.subscription = Subscription(client._mirror)
        self.buffer = LineBuffer(client.max_line_bytes)
        self.status_at = now + STATUS_INTERVAL
        self.listen_by = now + client.timeout  # a daemon that never answers `listen` is left

    def open(self) -> bytes:
        """The `listen` line to send first."""
        return self.subscription.open()

    def due(self) -> float:
        """When to stop waiting for data: the next `status` once subscribed, the `listen` deadline before."""
        return self.status_at if self.client._mirror.connected else self.listen_by

    def check(self, now: float) -> None:
        """Timeout once the `listen` answer is overdue."""
        if not self.client._mirror.connected and now >= self.listen_by:
            raise Timeout("no answer to listen in time")

    def receive(self, data: bytes) -> None:
        """Applies what was read (b"": the daemon closed the connection, ConnectionLost)."""
        if not data:
            raise ConnectionLost("the daemon closed the subscription")
        for line in self.buffer.feed(data):
            self.client._apply(self.subscription, line)

    def status_line(self, now: float) -> bytes | None:
        """The `status` line to send now (every STATUS_INTERVAL once subscribed), or None."""
        if not self.client._mirror.connected or now < self.status_at:
            return None
        self.status_at = now + STATUS_INTERVAL
        return self.subscription.status_request()
