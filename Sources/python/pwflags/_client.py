"""The blocking client: calls on one connection, and the mirror kept by a thread on another."""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

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


class _Stale(Exception):
    """A reused connection was found closed before any of the answer came: the daemon never read the call."""


class Client:
    """A client of pwflagsd over its Unix socket.

    Calls (`refresh`, `log_impression`, `status`...) share one connection, opened on first use and reopened
    after an error. Reads (`get`, `is_enabled`, the typed reads) come from the client's mirror once it holds
    the daemon's flags, with no round trip; before that (or without `start`), each read asks the daemon.

    The mirror is kept by a thread that `start` (or the first `add_listener`) starts: it listens on a second
    connection, reconnects with backoff (50 ms doubling to 2 s) when the daemon goes away, and tells listeners
    exactly what differs when it comes back. `close` stops it; the client is also a context manager.
    """

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
        self._call_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._buffer = LineBuffer(max_line_bytes)
        self._calls = Calls()
        self._mirror = Mirror()
        self._mirror_lock = threading.Lock()
        self._dispatch_lock = threading.RLock()
        self._listeners: dict[int, Listener] = {}
        self._next_handle = 0
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._snapshot = threading.Event()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._closed = False
        self._closed_from_listener = False

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # Calls.

    def _connect(self, deadline: float) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.connect(self.path)
        except TimeoutError:
            sock.close()
            raise Timeout(f"connecting to {self.path} timed out") from None
        except OSError as error:
            sock.close()
            raise DaemonUnavailable(f"cannot connect to {self.path}: {error.strerror or error}") from None
        return sock

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._buffer = LineBuffer(self.max_line_bytes)

    def _exchange(self, sock: socket.socket, line: bytes, request_id: int, deadline: float, reused: bool) -> JSONObject:
        def remaining() -> float:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"no answer from {self.path} in time")
            return left

        heard = False
        try:
            sock.settimeout(remaining())
            sock.sendall(line)
            while True:
                sock.settimeout(remaining())
                data = sock.recv(65536)
                if not data:
                    if reused and not heard:
                        raise _Stale
                    raise ConnectionLost(f"{self.path} closed the connection before the answer")
                heard = True
                for received in self._buffer.feed(data):
                    result = Calls.answer(received, request_id)
                    if result is not None:
                        return result
        except TimeoutError:
            raise Timeout(f"no answer from {self.path} in time") from None
        except (BrokenPipeError, ConnectionResetError) as error:
            if reused and not heard:
                raise _Stale from None
            raise ConnectionLost(f"{self.path}: {error.strerror}") from None

    def call(self, method: str, params: JSONObject | None = None, timeout: float | None = None) -> JSONObject:
        """Calls `method` and returns its result; the methods below are built on it.

        Raises DaemonUnavailable (ConnectionLost when the connection ended before the answer), Timeout,
        ProtocolError, or RemoteError for an error answer. A connection the daemon closed while it was idle
        (`IdleConnectionTimeout`) is reopened and the call sent again: the daemon never read it.
        """
        if self._closed:
            raise Error("the client is closed")
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._call_lock:
            for attempt in range(2):
                reused = self._sock is not None
                sock = self._sock = self._sock or self._connect(deadline)
                request_id, line = self._calls.request(method, params)
                try:
                    return self._exchange(sock, line, request_id, deadline, reused and attempt == 0)
                except RemoteError:
                    raise
                except _Stale:
                    self._drop()
                except BaseException:
                    self._drop()
                    raise
            raise ConnectionLost(f"{self.path} closed the connection before the answer")  # pragma: no cover

    def _mirrored(self) -> Mapping[str, Flag] | None:
        return self._mirror.flags if self._mirror.has_snapshot else None

    def get(self, key: str) -> Flag | None:
        """The flag `key`, or None when the daemon serves no such flag."""
        flags = self._mirrored()
        if flags is not None:
            return flags.get(key)
        value = self.call("get", {"key": key}).get("flag")
        return None if value is None else Flag.from_json(value)

    def get_all(self) -> Mapping[str, Flag]:
        """Every flag, by key."""
        flags = self._mirrored()
        if flags is not None:
            return flags
        return parse_flags(self.call("getAll").get("flags"))

    def is_enabled(self, key: str, default: bool = False) -> bool:
        """Whether flag `key` is on; `default` when there is no such flag."""
        flags = self._mirrored()
        if flags is not None:
            flag = flags.get(key)
            return default if flag is None else flag.enabled
        return bool(expect(self.call("isEnabled", {"key": key, "default": default}), "enabled", bool))

    def get_string(self, key: str, name: str, default: str) -> str:
        """Property `name` of flag `key` when it is a string, else `default` (R6)."""
        flag = self.get(key)
        return default if flag is None else flag.get_string(name, default)

    def get_int(self, key: str, name: str, default: int) -> int:
        """Property `name` of flag `key` when it is a whole number, else `default` (R6)."""
        flag = self.get(key)
        return default if flag is None else flag.get_int(name, default)

    def get_float(self, key: str, name: str, default: float) -> float:
        """Property `name` of flag `key` when it is a number, else `default` (R6)."""
        flag = self.get(key)
        return default if flag is None else flag.get_float(name, default)

    def get_bool(self, key: str, name: str, default: bool) -> bool:
        """Property `name` of flag `key` when it is a boolean, else `default` (R6)."""
        flag = self.get(key)
        return default if flag is None else flag.get_bool(name, default)

    def get_json(self, key: str, name: str, default: Any = None) -> Any:
        """Property `name` of flag `key` when it is a JSON object or array (a copy), else `default` (R6)."""
        flag = self.get(key)
        return default if flag is None else flag.get_json(name, default)

    def refresh(self) -> Refreshed:
        """Asks the daemon to fetch the flags now and waits for them (`refresh_timeout`). A failed fetch is
        RemoteError -32000, whose `status` is the R11 status. The mirror shows the answer at once."""
        result = self.call("refresh", timeout=self.refresh_timeout)
        refreshed = refreshed_from(result)
        with self._mirror_lock:
            update = self._mirror.apply_refresh(result)
        self._dispatch(update)
        return refreshed

    def log_impression(self, key: str) -> str:
        """Reports that the user reached the code flag `key` controls, in either branch (R17). The outcome:
        `sent`, `duplicate`, `noFlag`, `failed`, `logged` or `overridden`."""
        return str(expect(self.call("logImpression", {"key": key}), "outcome", str))

    def set_user_id(self, user_id: str) -> JSONObject:
        """Switches the daemon's user (`""`: back to the default); the result holds `userId`, and `heldUntil`
        when Pushwoosh holds the new user's request back."""
        return self.call("setUserId", {"userId": user_id})

    def set_app_state(self, state: AppState) -> bool:
        """Tells the daemon the app went to the foreground or background; True when a session started."""
        return bool(expect(self.call("setAppState", {"state": state}), "sessionStarted", bool))

    def explain(self, key: str) -> JSONObject:
        """Why flag `key` reads as it does (docs/protocol.md, explain)."""
        return self.call("explain", {"key": key})

    def status(self) -> JSONObject:
        """The daemon's status (docs/protocol.md, status)."""
        return self.call("status")

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

    def start(self) -> None:
        """Starts the thread that keeps the mirror (once; later calls do nothing)."""
        if self._closed:
            raise Error("the client is closed")
        with self._mirror_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pwflags", daemon=True)
                self._thread.start()

    def wait_for_snapshot(self, timeout: float) -> bool:
        """Starts the mirror and waits for its first snapshot; False when `timeout` passed without one."""
        self.start()
        return self._snapshot.wait(timeout)

    def add_listener(self, listener: Listener) -> int:
        """Calls `listener` on the mirror's thread after each change of what the reads return (the first
        snapshot included); returns a handle for `remove_listener`. Starts the mirror."""
        with self._dispatch_lock:
            self._next_handle += 1
            self._listeners[self._next_handle] = listener
            handle = self._next_handle
        self.start()
        return handle

    def remove_listener(self, handle: int) -> bool:
        """Removes a listener; once this returns it is not called again (a running call is waited for)."""
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

    def close(self) -> None:
        """Stops the mirror's thread and closes the connections. Not from inside a listener."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        thread = self._thread
        with self._call_lock:
            self._drop()
        if thread is threading.current_thread():
            self._closed_from_listener = True  # the thread closes its pipe as it ends
            return
        if thread is not None:
            thread.join()
        self._close_pipe()

    def _close_pipe(self) -> None:
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _run(self) -> None:
        self._keep_mirror()
        if self._closed_from_listener:
            self._close_pipe()

    def _keep_mirror(self) -> None:
        backoff = BACKOFF_MIN
        while not self._stopping.is_set():
            try:
                self._subscribe()
            except (Error, OSError) as error:
                log.debug("pwflags subscription ended: %s", error)
            with self._mirror_lock:
                subscribed = self._mirror.connected
                self._mirror.disconnected()
            if subscribed:
                backoff = BACKOFF_MIN
            deadline = time.monotonic() + backoff
            backoff = min(backoff * 2, BACKOFF_MAX)
            while not self._stopping.is_set() and (left := deadline - time.monotonic()) > 0:
                until = self._mirror.seconds_until_expiry(time.time())
                self._stopping.wait(left if until is None else min(left, until))
                with self._mirror_lock:
                    update = self._mirror.expire_if_due(time.time())
                self._dispatch(update)

    def _subscribe(self) -> None:
        sock = self._connect(time.monotonic() + self.timeout)
        try:
            subscription = Subscription(self._mirror)
            buffer = LineBuffer(self.max_line_bytes)
            sock.settimeout(self.timeout)
            sock.sendall(subscription.open())
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            poller.register(self._wake_r, select.POLLIN)
            status_at = time.monotonic() + STATUS_INTERVAL
            listen_by = time.monotonic() + self.timeout  # a daemon that never answers `listen` is left
            while not self._stopping.is_set():
                due = status_at if self._mirror.connected else listen_by
                ready = poller.poll(max(0.0, due - time.monotonic()) * 1000 + 1)
                if self._stopping.is_set():
                    return
                if not self._mirror.connected and time.monotonic() >= listen_by:
                    raise Timeout("no answer to listen in time")
                if any(fd == sock.fileno() for fd, _ in ready):
                    data = sock.recv(65536)
                    if not data:
                        raise ConnectionLost("the daemon closed the subscription")
                    for line in buffer.feed(data):
                        with self._mirror_lock:
                            update = subscription.receive(line)
                        if self._mirror.has_snapshot:
                            self._snapshot.set()
                        self._dispatch(update)
                if self._mirror.connected and time.monotonic() >= status_at:
                    status_at = time.monotonic() + STATUS_INTERVAL
                    sock.sendall(subscription.status_request())
        finally:
            sock.close()
