"""Costs of the Python client against a bare-socket floor, measured in one run.

    PWFLAGSD_BIN=.build/debug/pwflagsd .build/python-venv/bin/python Tests/python/bench.py [N]

Prints, per operation, the time of a mirrored `Client.get` (no round trip), of a round-trip `Client.get`,
and of the floor: the same request line sent over a bare Unix socket to a Python echo process and its line
read back, the least any Python round trip can cost. The ratios are against the floor.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import Daemon, daemon_binary  # noqa: E402

import pwflags  # noqa: E402

ECHO = """
import socket, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen(1)
print("ready", flush=True)
conn, _ = server.accept()
while data := conn.recv(65536):
    conn.sendall(data)
"""

REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"get","params":{"key":"new_checkout"}}\n'


def per_op(count: int, operation: object) -> float:
    """Seconds per call of `operation`, the best of three runs."""
    assert callable(operation)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(count):
            operation()
        best = min(best, (time.perf_counter() - started) / count)
    return best


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory(prefix="pwb") as directory:
        path = str(Path(directory) / "echo.sock")
        echo = subprocess.Popen([sys.executable, "-c", ECHO, path], stdout=subprocess.PIPE)
        assert echo.stdout is not None and echo.stdout.readline().strip() == b"ready"
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)

        def floor_trip() -> None:
            sock.sendall(REQUEST)
            data = sock.recv(65536)
            while not data.endswith(b"\n"):
                data += sock.recv(65536)

        daemon = Daemon(daemon_binary(), Path(directory))
        daemon.start()
        try:
            with pwflags.Client(daemon.socket) as round_trip, pwflags.Client(daemon.socket) as mirrored:
                assert mirrored.wait_for_snapshot(10) and round_trip.get("new_checkout") is not None
                floor = per_op(count, floor_trip)
                trip = per_op(count, lambda: round_trip.get("new_checkout"))
                read = per_op(count * 10, lambda: mirrored.get("new_checkout"))
        finally:
            daemon.stop()
            sock.close()
            echo.wait(10)
    print(f"floor (bare socket echo)   {floor * 1e6:9.2f} us")
    print(f"round-trip get             {trip * 1e6:9.2f} us   {trip / floor:7.2f} x floor")
    print(f"mirrored get               {read * 1e6:9.3f} us   {read / floor:7.4f} x floor")


if __name__ == "__main__":
    main()
