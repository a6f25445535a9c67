"""The Python client of pwflagsd, the Pushwoosh feature flags daemon (docs/python.md).

`Client` blocks, `AsyncClient` runs on asyncio; both keep a mirror of the daemon's flags that reads answer from
without a round trip, and tell listeners what changed, across daemon restarts too. `pwflags.openfeature` is an
OpenFeature provider over `Client` (extra `openfeature`).
"""

from ._async import AsyncClient
from ._base import AppState, Listener, Refreshed
from ._client import Client
from ._core import (
    DEFAULT_SOCKET,
    ConnectionLost,
    DaemonUnavailable,
    Error,
    Flag,
    FlagsUpdate,
    ProtocolError,
    RemoteError,
    Timeout,
    socket_path,
)

__all__ = [
    "DEFAULT_SOCKET",
    "AppState",
    "AsyncClient",
    "Client",
    "ConnectionLost",
    "DaemonUnavailable",
    "Error",
    "Flag",
    "FlagsUpdate",
    "Listener",
    "ProtocolError",
    "Refreshed",
    "RemoteError",
    "Timeout",
    "socket_path",
]
