"""The line protocol without I/O: requests, lines, flags, the mirror and its diff.

Both clients feed this module bytes and the time and send what it hands back, so that the rules (which answer
belongs to which call, how a notification changes the mirror, what listeners hear after a restart) live in one
place and the tests can drive them without a socket. The rules are libpwflags' (docs/c-library.md).
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

JSONObject = dict[str, Any]

DEFAULT_SOCKET: Final = "/run/pwflagsd/pwflagsd.sock"
"""The packaged service's socket, the one every client uses when not told otherwise."""

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""The longest line the clients read from the daemon (libpwflags' bound); a longer one ends the connection."""

BACKOFF_MIN: Final = 0.05
BACKOFF_MAX: Final = 2.0
"""Reconnection waits: 50 ms doubling to 2 s, as libpwflags and the Swift library wait."""

STATUS_INTERVAL: Final = 60.0
"""How often a subscribed client reads `status.expiresAt`: a refresh that changed nothing sends no
notification, yet makes the flags younger."""


def socket_path(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The daemon's socket: `explicit` when given and not empty, else `$PWFLAGS_SOCKET` when set and not empty,
    else `/run/pwflagsd/pwflagsd.sock`, as libpwflags, the Swift library and the `pwflags` tool resolve it."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    return env.get("PWFLAGS_SOCKET") or DEFAULT_SOCKET


class Error(Exception):
    """Every error this package raises."""


class DaemonUnavailable(Error):
    """No daemon answers on the socket: it is not running, the path is wrong, or it may not be opened."""


class ConnectionLost(DaemonUnavailable):
    """The connection ended before the answer came (the daemon stopped, or closed it)."""


class Timeout(Error, TimeoutError):
    """No answer within the call's timeout. The connection is dropped; the next call opens another."""


class ProtocolError(Error):
    """The daemon sent something the protocol does not allow: not JSON, a line too long, an answer out of
    order. The connection is dropped."""


class RemoteError(Error):
    """The daemon answered with a JSON-RPC error (docs/protocol.md, Errors)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    @property
    def status(self) -> int | None:
        """The R11 status of a failed refresh (-32000): the HTTP status, or 0 with no HTTP answer."""
        status = self.data.get("status") if isinstance(self.data, dict) else None
        return status if isinstance(status, int) and not isinstance(status, bool) else None


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, eq=False, slots=True)
class Flag:
    """One flag as the daemon serves it. Immutable: a later change of the daemon's flags is a new `Flag`.

    Two flags are equal when their JSON is (a property `1` and `true` differ, as do `1` and `1.0`).
    """

    key: str
    enabled: bool
    rule_id: str
    """The deciding rule: `default` when no rule matched, `""` for a killed flag, `override` for an override."""
    properties: Mapping[str, Any]
    source: str | None
    """`pushwoosh`, `file` or `override`; None from a daemon that does not say."""
    source_value: Mapping[str, Any] | None = None
    """An overridden flag's value at its source, or None."""
    _text: str = field(default="", repr=False)

    @classmethod
    def from_json(cls, value: Any) -> Flag:
        """The flag of a protocol FLAG object; ProtocolError when it is not one."""
        if not isinstance(value, dict):
            raise ProtocolError("a flag is not an object")
        key, enabled = value.get("key"), value.get("enabled")
        rule_id, props = value.get("ruleId", ""), value.get("properties")
        source, source_value = value.get("source"), value.get("sourceValue")
        if not isinstance(key, str) or not isinstance(enabled, bool) or not isinstance(rule_id, str):
            raise ProtocolError("a flag without a string key, a boolean enabled and a string ruleId")
        if props is None:
            props = {}
        if not isinstance(props, dict):
            raise ProtocolError(f"flag {key!r}: properties is not an object")
        return cls(
            key=key,
            enabled=enabled,
            rule_id=rule_id,
            properties=types.MappingProxyType(props),
            source=source if isinstance(source, str) else None,
            source_value=types.MappingProxyType(source_value) if isinstance(source_value, dict) else None,
            _text=_canonical(value),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Flag) and self._text == other._text

    def __hash__(self) -> int:
        return hash(self._text)

    @property
    def overridden(self) -> bool:
        """True when a local override on this device decided the flag."""
        return self.source == "override"

    def to_json(self) -> JSONObject:
        """The flag as the protocol writes it (a new object each call)."""
        value: JSONObject = json.loads(self._text)
        return value

    def _prop(self, name: str) -> Any:
        return self.properties.get(name)

    def get_string(self, name: str, default: str) -> str:
        """Property `name` when it is a string, else `default` (R6)."""
        value = self._prop(name)
        return value if isinstance(value, str) else default

    def get_bool(self, name: str, default: bool) -> bool:
        """Property `name` when it is a boolean, else `default` (R6: a number is never a bool)."""
        value = self._prop(name)
        return value if isinstance(value, bool) else default

    def get_float(self, name: str, default: float) -> float:
        """Property `name` when it is a number, as a float, else `default` (R6)."""
        value = self._prop(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return default
        return float(value)

    def get_int(self, name: str, default: int) -> int:
        """Property `name` when it is a whole number (`5` or `5.0`), else `default` (R6: `5.5` is not an int)."""
        value = self._prop(name)
        if isinstance(value, bool):
            return default
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return default

    def get_json(self, name: str, default: Any = None) -> Any:
        """Property `name` when it is a JSON object or array (a copy: a dict or a list), else `default` (R6)."""
        value = self._prop(name)
        return copy.deepcopy(value) if isinstance(value, (dict, list)) else default


@dataclass(frozen=True, slots=True)
class FlagsUpdate:
    """What listeners hear: the keys that appeared or changed and the keys that went, each sorted."""

    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)

    def merged(self, later: FlagsUpdate) -> FlagsUpdate:
        """This update followed by `later`, as one: a key's last fate wins. Bounded by the number of keys."""
        changed = (set(self.changed) - set(later.removed)) | set(later.changed)
        removed = (set(self.removed) - set(later.changed)) | set(later.removed)
        return FlagsUpdate(tuple(sorted(changed)), tuple(sorted(removed)))


def diff(before: Mapping[str, Flag], after: Mapping[str, Flag]) -> FlagsUpdate:
    """The keys that appeared or changed from `before` to `after`, and those that went (R9: an identical flag is
    no change). Python orders strings by code point, which is the daemon's UTF-8 byte order."""
    changed = sorted(k for k, f in after.items() if before.get(k) != f)
    removed = sorted(k for k in before if k not in after)
    return FlagsUpdate(tuple(changed), tuple(removed))


def parse_time(value: Any) -> float | None:
    """A protocol time (`2026-11-30T23:30:44Z`, maybe with fractions) as POSIX seconds; None for null or junk."""
    if not isinstance(value, str) or not value.endswith("Z"):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value[:-1] + "+00:00")
    except ValueError:
        return None
    return parsed.timestamp()


class LineBuffer:
    """Splits what a socket reads into lines, holding at most `max_bytes` of an unfinished line."""

    def __init__(self, max_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._data = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The whole lines `data` completes (without `\\n`); ProtocolError once a line passes the bound."""
        start = len(self._data)
        self._data += data
        lines: list[bytes] = []
        begin = 0
        at = self._data.find(b"\n", start)
        while at >= 0:
            if at - begin > self.max_bytes:
                break
            lines.append(bytes(self._data[begin:at]))
            begin = at + 1
            at = self._data.find(b"\n", begin)
        del self._data[:begin]
        if len(self._data) > self.max_bytes or (at >= 0 and at - begin > self.max_bytes):
            self._data = bytearray()
            raise ProtocolError(f"a line from the daemon is longer than {self.max_bytes} bytes")
        return lines

    def __len__(self) -> int:
        return len(self._data)


def encode_request(request_id: int, method: str, params: JSONObject | None = None) -> bytes:
    """One request line."""
    message: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass(frozen=True, slots=True)
class Message:
    """One line from the daemon: an answer (`id` set) or a notification (`method` set, no `id`)."""

    id: Any
    method: str | None
    params: Any
    result: Any
    error: Any
    is_answer: bool


def parse_line(line: bytes) -> Message | None:
    """The message of one line; None for a blank line; ProtocolError for anything that is not a message."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return None
    try:
        value = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"a line from the daemon is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ProtocolError("a line from the daemon is not a JSON object")
    method = value.get("method")
    if isinstance(method, str) and "id" not in value:
        return Message(None, method, value.get("params"), None, None, False)
    if "id" not in value or ("result" not in value and "error" not in value):
        raise ProtocolError("a line from the daemon is neither an answer nor a notification")
    return Message(value["id"], None, None, value.get("result"), value.get("error"), True)


def result_of(message: Message) -> JSONObject:
    """An answer's result; RemoteError for an error answer, ProtocolError for a result that is not an object."""
    if message.error is not None:
        error = message.error
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise ProtocolError("an error answer without an integer code")
        text = error.get("message")
        raise RemoteError(error["code"], text if isinstance(text, str) else "", error.get("data"))
    if not isinstance(message.result, dict):
        raise ProtocolError("an answer's result is not an object")
    return message.result


def parse_flags(listing: Any) -> dict[str, Flag]:
    """The flags of a listing (`getAll`, `listen`, `refresh`), by key; ProtocolError when it is not one."""
    if not isinstance(listing, list):
        raise ProtocolError("flags is not an array")
    flags: dict[str, Flag] = {}
    for value in listing:
        flag = Flag.from_json(value)
        flags[flag.key] = flag
    return flags


def _revision(value: JSONObject) -> int:
    revision = value.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool):
        raise ProtocolError("no integer revision")
    return revision


class Calls:
    """Ids and answers of one connection's calls: answers come in request order."""

    def __init__(self) -> None:
        self._next_id = 0

    def request(self, method: str, params: JSONObject | None = None) -> tuple[int, bytes]:
        """A new call's id and line."""
        self._next_id += 1
        return self._next_id, encode_request(self._next_id, method, params)

    @staticmethod
    def answer(line: bytes, request_id: int) -> JSONObject | None:
        """The result when `line` answers `request_id`; None for a blank line or a notification; RemoteError
        for an error answer; ProtocolError for an answer to anything else."""
        message = parse_line(line)
        if message is None or not message.is_answer:
            return None
        if message.id != request_id or isinstance(message.id, bool):
            raise ProtocolError(f"an answer to id {message.id!r} while waiting for {request_id}")
        return result_of(message)


class Mirror:
    """What a client knows of the daemon's flags, and where they stand in its change stream.

    `flags` is replaced, never changed in place, so readers take it without a lock.
    """

    def __init__(self) -> None:
        self.flags: Mapping[str, Flag] = types.MappingProxyType({})
        self.epoch: str | None = None
        self.revision = 0
        self.has_snapshot = False
        self.connected = False
        self.expires_at: float | None = None

    def resume_point(self) -> JSONObject | None:
        """The `since` of the next `listen`: None before a first snapshot, or once the flags expired."""
        if not self.has_snapshot or self.epoch is None:
            return None
        return {"epoch": self.epoch, "revision": self.revision}

    def _replace(self, flags: dict[str, Flag]) -> FlagsUpdate:
        update = diff(self.flags, flags)
        self.flags = types.MappingProxyType(flags)
        return update

    def subscribed(self, result: JSONObject, since: JSONObject | None) -> FlagsUpdate:
        """A `listen` answer. `unchanged` keeps the flags, and is accepted only when it answers `since`; a
        listing replaces them, and the update lists exactly what differs (nothing, after a restart that serves
        the same flags)."""
        if not isinstance(result.get("subscription"), (str, int)):
            raise ProtocolError("a listen answer without a subscription")
        revision = _revision(result)
        epoch = result.get("epoch")
        epoch = epoch if isinstance(epoch, str) else None
        if result.get("unchanged") is True:
            if since is None or epoch != since.get("epoch") or revision != since.get("revision"):
                raise ProtocolError("listen answered unchanged to a position it was not given")
            update = FlagsUpdate()
        else:
            update = self._replace(parse_flags(result.get("flags")))
            self.has_snapshot = True
            self.epoch, self.revision = epoch, revision
        self.connected = True
        self.expires_at = parse_time(result.get("expiresAt"))
        return update

    def apply_changed(self, params: Any) -> FlagsUpdate:
        """A `flagsChanged` notification; one the mirror already holds changes nothing."""
        if not isinstance(params, dict):
            raise ProtocolError("flagsChanged without params")
        revision = _revision(params)
        if not self.connected or revision <= self.revision:
            return FlagsUpdate()
        changed, removed = parse_flags(params.get("changed")), params.get("removed")
        if not isinstance(removed, list) or not all(isinstance(k, str) for k in removed):
            raise ProtocolError("flagsChanged: removed is not an array of keys")
        flags = dict(self.flags)
        flags.update(changed)
        for key in removed:
            flags.pop(key, None)
        epoch = params.get("epoch")
        self.epoch = epoch if isinstance(epoch, str) else self.epoch
        self.revision = revision
        self.expires_at = parse_time(params.get("expiresAt"))
        return self._replace(flags)

    def apply_refresh(self, result: JSONObject) -> FlagsUpdate:
        """A `refresh` (or `getAll`) answer from another connection: used when it is of the daemon run the
        subscription follows and newer than the mirror, so the caller reads what it refreshed."""
        revision = _revision(result)
        if not self.connected or result.get("epoch") != self.epoch or revision <= self.revision:
            return FlagsUpdate()
        update = self._replace(parse_flags(result.get("flags")))
        self.revision = revision
        return update

    def set_expiry(self, status: JSONObject) -> None:
        """Takes `expiresAt` from a `status` answer."""
        self.expires_at = parse_time(status.get("expiresAt"))

    def disconnected(self) -> None:
        """The subscription ended: the flags stay until they reach their age."""
        self.connected = False

    def expire_if_due(self, now: float) -> FlagsUpdate:
        """Drops the flags once past their age while the daemon cannot be asked (R15); local overrides stay,
        without their source's value."""
        if self.connected or self.expires_at is None or now < self.expires_at:
            return FlagsUpdate()
        self.expires_at = None
        self.epoch = None
        kept = {}
        for key, flag in self.flags.items():
            if flag.overridden:
                value = flag.to_json()
                if "sourceValue" in value:
                    value["sourceValue"] = None
                kept[key] = Flag.from_json(value)
        return self._replace(kept)

    def seconds_until_expiry(self, now: float) -> float | None:
        """How long until `expire_if_due` drops the flags; None when it never will."""
        if self.connected or not self.flags or self.expires_at is None:
            return None
        return max(0.0, self.expires_at - now)


class Subscription:
    """The conversation on one `listen` connection: the `listen` call, `status` reads of the expiry, and
    `flagsChanged` notifications, all applied to `mirror`."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self._calls = Calls()
        self._pending: list[tuple[int, str]] = []
        self._since: JSONObject | None = None

    def open(self) -> bytes:
        """The `listen` line that starts the connection, resuming from where the mirror stands."""
        self._since = self.mirror.resume_point()
        params: JSONObject = {} if self._since is None else {"since": self._since}
        request_id, line = self._calls.request("listen", params)
        self._pending.append((request_id, "listen"))
        return line

    def status_request(self) -> bytes:
        """A `status` line, whose answer refreshes the mirror's expiry."""
        request_id, line = self._calls.request("status", {})
        self._pending.append((request_id, "status"))
        return line

    def receive(self, line: bytes) -> FlagsUpdate:
        """Applies one line; ProtocolError (or RemoteError for a refused `listen`) ends the connection."""
        message = parse_line(line)
        if message is None:
            return FlagsUpdate()
        if not message.is_answer:
            if message.method == "flagsChanged":
                return self.mirror.apply_changed(message.params)
            return FlagsUpdate()
        if not self._pending or message.id != self._pending[0][0] or isinstance(message.id, bool):
            raise ProtocolError(f"an answer to id {message.id!r} out of order")
        _, kind = self._pending.pop(0)
        if kind == "listen":
            return self.mirror.subscribed(result_of(message), self._since)
        if message.error is None and isinstance(message.result, dict):
            self.mirror.set_expiry(message.result)
        return FlagsUpdate()


def merge_all(updates: Iterable[FlagsUpdate]) -> FlagsUpdate:
    """Several updates as one."""
    total = FlagsUpdate()
    for update in updates:
        total = total.merged(update)
    return total
