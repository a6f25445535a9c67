"""The blocking client: calls on one connection, and the mirror kept by a thread on another."""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from ._base import AppState, Ask, ClientBase, Listening, Refreshed, Stale, log
from ._core import BACKOFF_MIN, ConnectionLost, DaemonUnavailable, Error, Flag, JSONObject, LineBuffer, Timeout

T = TypeVar("T")


class Client(ClientBase):
    """A client of pwflagsd over its Unix socket.

    Calls (`refresh`, `log_impression`, `status`...) share one connection, opened on first use and reopened
    after an error. Reads (`get`, `is_enabled`, the typed reads) come from the client's mirror once it holds
    the daemon's flags, with no round trip; before that (or without `start`), each read asks the daemon.

    The mirror is kept by a thread that `start` (or the first `add_listener`) starts: it listens on a second
    connection, reconnects with backoff (50 ms doubling to 2 s) when the daemon goes away, and tells listeners
    exactly what differs when it comes back. `close` stops it; the client is also a context manager.
    """

    def _init_io(self) -> None:
        self._call_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._mirror_lock = threading.Lock()
        self._dispatch_lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._snapshot = threading.Event()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
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
                result = self._answer_in(sock.recv(65536), request_id, reused and not heard)
                if result is not None:
                    return result
                heard = True
        except TimeoutError:
            raise Timeout(f"no answer from {self.path} in time") from None
        except (BrokenPipeError, ConnectionResetError) as error:
            raise self._broken(error, reused and not heard) from None

    def call(self, method: str, params: JSONObject | None = None, timeout: float | None = None) -> JSONObject:
        """Calls `method` and returns its result; the methods below are built on it.

        Raises DaemonUnavailable (ConnectionLost when the connection ended before the answer), Timeout,
        ProtocolError, or RemoteError for an error answer. A connection the daemon closed while it was idle
        (`IdleConnectionTimeout`) is reopened and the call sent again: the daemon never read it.
        """
        self._check_open()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._call_lock:
            for attempt in range(2):
                reused = self._sock is not None and attempt == 0
                sock = self._sock = self._sock or self._connect(deadline)
                request_id, line = self._calls.request(method, params)
                try:
                    with self._attempt():
                        return self._exchange(sock, line, request_id, deadline, reused)
                except Stale:
                    pass
            raise ConnectionLost(f"{self.path} closed the connection before the answer")  # pragma: no cover

    def _make(self, ask: Ask[T]) -> T:
        """Makes the call `ask` describes; what its result means."""
        return ask.meaning(self.call(ask.method, ask.params, ask.timeout))

    def _answer(self, read: T | Ask[T]) -> T:
        """What `read` answers: at once from the mirror, or by making its call."""
        return self._make(read) if isinstance(read, Ask) else read

    def get(self, key: str) -> Flag | None:
        """The flag `key`, or None when the daemon serves no such flag."""
        return self._answer(self._read_get(key))

    def get_all(self) -> Mapping[str, Flag]:
        """Every flag, by key."""
        return self._answer(self._read_all())

    def is_enabled(self, key: str, default: bool = False) -> bool:
        """Whether flag `key` is on; `default` when there is no such flag."""
        return self._answer(self._read_enabled(key, default))

    def get_string(self, key: str, name: str, default: str) -> str:
        """Property `name` of flag `key` when it is a string, else `default` (R6)."""
        return self._answer(self._read_property(key, Flag.get_string, name, default))

    def get_int(self, key: str, name: str, default: int) -> int:
        """Property `name` of flag `key` when it is a whole number, else `default` (R6)."""
        return self._answer(self._read_property(key, Flag.get_int, name, default))

    def get_float(self, key: str, name: str, default: float) -> float:
        """Property `name` of flag `key` when it is a number, else `default` (R6)."""
        return self._answer(self._read_property(key, Flag.get_float, name, default))

    def get_bool(self, key: str, name: str, default: bool) -> bool:
        """Property `name` of flag `key` when it is a boolean, else `default` (R6)."""
        return self._answer(self._read_property(key, Flag.get_bool, name, default))

    def get_json(self, key: str, name: str, default: Any = None) -> Any:
        """Property `name` of flag `key` when it is a JSON object or array (a copy), else `default` (R6)."""
        return self._answer(self._read_property(key, Flag.get_json, name, default))

    def refresh(self) -> Refreshed:
        """Asks the daemon to fetch the flags now and waits for them (`refresh_timeout`). A failed fetch is
        RemoteError -32000, whose `status` is the R11 status. The mirror shows the answer at once."""
        return self._make(self._ask_refresh())

    def log_impression(self, key: str) -> str:
        """Reports that the user reached the code flag `key` controls, in either branch (R17). The outcome:
        `sent`, `duplicate`, `noFlag`, `failed`, `logged` or `overridden`."""
        return self._make(self._ask_log_impression(key))

    def set_user_id(self, user_id: str) -> JSONObject:
        """Switches the daemon's user (`""`: back to the default); the result holds `userId`, and `heldUntil`
        when Pushwoosh holds the new user's request back."""
        return self._make(self._ask_set_user_id(user_id))

    def set_app_state(self, state: AppState) -> bool:
        """Tells the daemon the app went to the foreground or background; True when a session started."""
        return self._make(self._ask_set_app_state(state))

    def explain(self, key: str) -> JSONObject:
        """Why flag `key` reads as it does (docs/protocol.md, explain)."""
        return self._make(self._ask_explain(key))

    def status(self) -> JSONObject:
        """The daemon's status (docs/protocol.md, status)."""
        return self._make(self._ask_status())

    # The mirror and listeners.

    def start(self) -> None:
        """Starts the thread that keeps the mirror (once; later calls do nothing)."""
        self._check_open()
        with self._mirror_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pwflags", daemon=True)
                self._thread.start()

    def wait_for_snapshot(self, timeout: float) -> bool:
        """Starts the mirror and waits for its first snapshot; False when `timeout` passed without one."""
        self.start()
        return self._snapshot.wait(timeout)

    def _snapshot_taken(self) -> None:
        self._snapshot.set()

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
            wait, backoff = self._ended(backoff)
            deadline = time.monotonic() + wait
            while not self._stopping.is_set() and (left := deadline - time.monotonic()) > 0:
                self._stopping.wait(self._pause(left))
                self._expire()

    def _subscribe(self) -> None:
        sock = self._connect(time.monotonic() + self.timeout)
        try:
            listening = Listening(self, time.monotonic())
            sock.settimeout(self.timeout)
            sock.sendall(listening.open())
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            poller.register(self._wake_r, select.POLLIN)
            while not self._stopping.is_set():
                ready = poller.poll(max(0.0, listening.due() - time.monotonic()) * 1000 + 1)
                if self._stopping.is_set():
                    return
                listening.check(time.monotonic())
                if any(fd == sock.fileno() for fd, _ in ready):
                    listening.receive(sock.recv(65536))
                if (status := listening.status_line(time.monotonic())) is not None:
                    sock.sendall(status)
        finally:
            sock.close()
