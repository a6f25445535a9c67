"""Fixtures: the real daemon on a temporary local flags file, and a fake daemon socket for hostile peers.

The daemon is `$PWFLAGSD_BIN`, else the checkout's `.build/debug/pwflagsd`; a missing binary fails the tests.
Every wait has a deadline, and waits on something (the daemon's READY=1, a socket, an event) rather than a
sleep.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Sources" / "python"))

DEADLINE = 10.0
"""The longest any single wait in the tests may take."""


def flag(key: str, enabled: bool = True, rule_id: str = "default", **properties: Any) -> dict[str, Any]:
    """A flag as the local flags file writes it."""
    return {"key": key, "enabled": enabled, "rule_id": rule_id, "properties": properties}


DEMO = [
    flag("new_checkout", True, "r_1a2b3c4d", button_color="green", max_items=5, express=True,
         layout={"columns": 2}, steps=["cart", "pay"], ratio=0.5, nothing=None),
    flag("search_v2", True, "default", results_per_page=20),
    flag("dark_mode", False, "r_5e6f7a8b", theme="light"),
    flag("holiday_banner", False, "", text="Happy holidays", dismissible=True),
]


def wait_until(condition: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    """Polls `condition` every 5 ms until it holds or `timeout` passes: for state with no event to wait on
    (a flag of the client's mirror)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


class Daemon:
    """pwflagsd on a temporary local flags file, its socket and state directory in `directory`."""

    def __init__(self, binary: str, directory: Path) -> None:
        self.binary = binary
        self.directory = directory
        self.socket = str(directory / "s.sock")
        self.flags_file = directory / "flags.json"
        self.config = directory / "pwflagsd.conf"
        self.log = directory / "pwflagsd.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.config.write_text(
            f"[FeatureFlags]\nLocalFlagsFile={self.flags_file}\n"
            f"[Daemon]\nSocketPath={self.socket}\nStateDirectory={directory / 'state'}\nLogLevel=debug\n"
            "[DBus]\nBus=no\n"
        )
        self.write_flags(DEMO)

    def write_flags(self, flags: list[dict[str, Any]]) -> None:
        """Replaces the flags file (a rename, as editors do); the daemon sees it through inotify."""
        self.write_text(json.dumps({"flags": flags, "partial": False}))

    def write_text(self, text: str) -> None:
        temporary = self.directory / "flags.json.new"
        temporary.write_text(text)
        os.replace(temporary, self.flags_file)

    def start(self) -> None:
        """Starts the daemon and returns once it sent READY=1."""
        notify_path = str(self.directory / "notify.sock")
        if os.path.exists(notify_path):
            os.unlink(notify_path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
            notify.bind(notify_path)
            notify.settimeout(DEADLINE)
            environment = dict(os.environ, NOTIFY_SOCKET=notify_path)
            with open(self.log, "ab") as log:
                self.process = subprocess.Popen(
                    [self.binary, "--config", str(self.config)], env=environment, stdout=log, stderr=log,
                    stdin=subprocess.DEVNULL,
                )
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                try:
                    message = notify.recv(4096)
                except TimeoutError:
                    break
                if b"READY=1" in message.split(b"\n"):
                    return
        self.stop()
        pytest.fail(f"pwflagsd did not become ready:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        """Stops the daemon (SIGTERM, then SIGKILL after the deadline)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(DEADLINE)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def status(self) -> dict[str, Any]:
        """`status` over a connection of its own (no client involved)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(DEADLINE)
            sock.connect(self.socket)
            sock.sendall(b'{"id":1,"method":"status"}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                assert chunk, "the daemon closed the connection"
                data += chunk
        result: dict[str, Any] = json.loads(data)["result"]
        return result


def daemon_binary() -> str:
    binary = os.environ.get("PWFLAGSD_BIN") or str(REPO / ".build" / "debug" / "pwflagsd")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no pwflagsd at {binary}: build it, or set PWFLAGSD_BIN")
    return binary


@pytest.fixture
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    # A short directory: a socket path must fit in 107 bytes.
    directory = Path(tmp_path_factory.mktemp("d", numbered=True))
    running = Daemon(daemon_binary(), directory)
    running.start()
    try:
        yield running
    finally:
        running.stop()


class FakeDaemon:
    """A socket that plays a daemon: `serve(conn, number)` runs on a thread for each connection."""

    def __init__(self, directory: Path, serve: Callable[[socket.socket, int], None]) -> None:
        self.path = str(directory / "fake.sock")
        self.serve = serve
        self.connections = 0
        self.connected = threading.Event()
        self.stopping = threading.Event()
        self._listener = socket.socket(socket.AF_UNIX)
        self._listener.bind(self.path)
        self._listener.listen(16)
        self._threads: list[threading.Thread] = []
        self._open: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            self.connected.set()
            thread = threading.Thread(target=self._run, args=(conn, self.connections), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _run(self, conn: socket.socket, number: int) -> None:
        try:
            self.serve(conn, number)
        except OSError:
            pass

    def close(self) -> None:
        self.stopping.set()
        self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for conn in self._open:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in [self._accepting, *self._threads]:
            thread.join(DEADLINE)
            assert not thread.is_alive(), "a fake daemon connection did not end"
        for conn in self._open:
            conn.close()


def read_line(conn: socket.socket) -> bytes:
    """One request line from the client, or b"" when it went away."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            return b""
        data += chunk
    return data


@pytest.fixture
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Callable[[socket.socket, int], None]], FakeDaemon]]:
    made: list[FakeDaemon] = []

    def make(serve: Callable[[socket.socket, int], None]) -> FakeDaemon:
        server = FakeDaemon(Path(tmp_path_factory.mktemp("f")), serve)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()
