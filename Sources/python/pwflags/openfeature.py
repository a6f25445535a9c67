"""An OpenFeature provider over `pwflags.Client`, in-process: no HTTP (`pip install pwflags[openfeature]`).

Flags read as the daemon's OFREP listener reads them (docs/openfeature.md): flag `KEY` is a boolean, its
`enabled`; property `PROP` of it is flag `KEY.PROP`, of the property's JSON type (a real flag key wins over a
property path that spells the same). Reads come from the client's mirror, with no round trip.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from openfeature.evaluation_context import EvaluationContext
from openfeature.event import ProviderEventDetails
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import FlagResolutionDetails, FlagValueType, Reason
from openfeature.provider import AbstractProvider, Metadata

from ._client import Client
from ._core import Error, Flag, FlagsUpdate

T = TypeVar("T")

__all__ = ["PwflagsProvider"]


def _reason(flag: Flag) -> Reason:
    """The reason OFREP gives the same flag (docs/openfeature.md)."""
    if flag.overridden or flag.rule_id == "override":
        return Reason.STATIC
    if flag.source == "seed":
        return Reason.CACHED
    if flag.rule_id == "":
        return Reason.DISABLED
    if flag.rule_id == "default":
        return Reason.DEFAULT
    return Reason.TARGETING_MATCH


def _variant(flag: Flag) -> str:
    return "killed" if flag.rule_id == "" else flag.rule_id


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and (
        isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    )


class PwflagsProvider(AbstractProvider):
    """Resolves OpenFeature flags from pwflagsd's mirror.

    Events: PROVIDER_READY once the first snapshot is there; PROVIDER_CONFIGURATION_CHANGED with the keys that
    changed or went (and the property paths of the changed flags) in `flags_changed`; PROVIDER_STALE while the
    daemon says its flags are stale (refreshes fail: `status.stale`, or the local file cannot be read:
    `status.problem`); PROVIDER_ERROR while the daemon cannot be reached (reads keep answering from the
    mirror); PROVIDER_READY again when both clear. The daemon's status is read every `status_interval` seconds
    and after every change.

    The evaluation context does not change the answer: the daemon serves this device's flags for its current
    user (switch users with `Client.set_user_id`).
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        path: str | None = None,
        ready_timeout: float = 5.0,
        status_interval: float = 30.0,
    ) -> None:
        """`client` is used as it is (and not closed); without one the provider makes one on `path`."""
        super().__init__()
        self._owned = client is None
        self.client = client if client is not None else Client(path)
        self.ready_timeout = ready_timeout
        self.status_interval = status_interval
        self._state = "NOT_READY"
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        self._check = threading.Event()
        self._watcher: threading.Thread | None = None
        self._handle: int | None = None

    def get_metadata(self) -> Metadata:
        return Metadata(name="pwflagsd")

    def initialize(self, evaluation_context: EvaluationContext) -> None:
        """Starts the mirror and waits up to `ready_timeout` for the flags; raises when they do not come (the SDK
        then reports PROVIDER_ERROR, and PROVIDER_READY follows when they do)."""
        self._handle = self.client.add_listener(self._changed)
        self._watcher = threading.Thread(target=self._watch, name="pwflags-openfeature", daemon=True)
        self._watcher.start()
        if not self.client.wait_for_snapshot(self.ready_timeout):
            raise Error(f"no flags from {self.client.path} within {self.ready_timeout} s")
        self._set_state(self._status_state(), quiet_ready=True)

    def shutdown(self) -> None:
        self._stop.set()
        self._check.set()
        if self._handle is not None:
            self.client.remove_listener(self._handle)
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join()
        if self._owned:
            self.client.close()

    # Events.

    def _changed(self, update: FlagsUpdate) -> None:
        flags = self.client.get_all() if self.client.has_snapshot else {}
        keys = list(update.changed) + list(update.removed)
        for key in update.changed:
            flag = flags.get(key)
            keys += [f"{key}.{name}" for name in flag.properties] if flag is not None else []
        if self._state != "NOT_READY":
            self.emit_provider_configuration_changed(ProviderEventDetails(flags_changed=sorted(set(keys))))
        self._check.set()

    def _status_state(self) -> str:
        if not self.client.is_connected:
            return "ERROR"
        try:
            status = self.client.status()
        except Error:
            return "ERROR"
        return "STALE" if status.get("stale") is True or status.get("problem") is not None else "READY"

    def _set_state(self, state: str, quiet_ready: bool = False) -> None:
        with self._state_lock:
            before, self._state = self._state, state
        if state == before:
            return
        if state == "STALE":
            self.emit_provider_stale(ProviderEventDetails(message="the daemon's flags are stale"))
        elif state == "ERROR":
            self.emit_provider_error(
                ProviderEventDetails(message=f"pwflagsd is unavailable on {self.client.path}", error_code=ErrorCode.GENERAL)
            )
        elif not quiet_ready:
            self.emit_provider_ready(ProviderEventDetails())

    def _watch(self) -> None:
        # Woken by a change; otherwise every 50 ms, to see the subscription drop or come back at once.
        connected = self.client.is_connected
        next_status = time.monotonic() + self.status_interval
        while not self._stop.is_set():
            changed = self._check.wait(0.05)
            self._check.clear()
            if self._stop.is_set():
                return
            flipped, connected = connected != self.client.is_connected, self.client.is_connected
            if (changed or flipped or time.monotonic() >= next_status) and self._state != "NOT_READY":
                next_status = time.monotonic() + self.status_interval
                self._set_state(self._status_state())

    # Resolution.

    def _find(self, key: str) -> tuple[Flag, str | None] | None:
        flags = self.client.get_all() if self.client.has_snapshot else {}
        flag = flags.get(key)
        if flag is not None:
            return flag, None
        at = key.find(".")
        while at >= 0:
            owner = flags.get(key[:at])
            if owner is not None and key[at + 1 :] in owner.properties:
                return owner, key[at + 1 :]
            at = key.find(".", at + 1)
        return None

    def _resolve(
        self, key: str, default: T, accept: Callable[[Any], bool], convert: Callable[[Any], Any] | None = None
    ) -> FlagResolutionDetails[T]:
        found = self._find(key)
        if found is None:
            return FlagResolutionDetails(
                default, error_code=ErrorCode.FLAG_NOT_FOUND, error_message=f"no flag {key}", reason=Reason.ERROR
            )
        flag, name = found
        metadata: dict[str, bool | int | float | str] = {
            "ruleId": flag.rule_id,
            "source": flag.source or "",
            "revision": self.client.revision,
        }
        value: Any = flag.enabled if name is None else flag.properties[name]
        if name is not None:
            metadata.update(flagKey=flag.key, property=name)
        details: FlagResolutionDetails[T] = FlagResolutionDetails(
            default, reason=_reason(flag), variant=_variant(flag), flag_metadata=metadata
        )
        if value is None:
            return details
        if not accept(value):
            details.error_code = ErrorCode.TYPE_MISMATCH
            details.error_message = f"{key} is a {type(value).__name__}"
            details.reason = Reason.ERROR
            return details
        details.value = convert(value) if convert is not None else value
        return details

    def resolve_boolean_details(
        self, flag_key: str, default_value: bool, evaluation_context: EvaluationContext | None = None
    ) -> FlagResolutionDetails[bool]:
        return self._resolve(flag_key, default_value, lambda v: isinstance(v, bool))

    def resolve_string_details(
        self, flag_key: str, default_value: str, evaluation_context: EvaluationContext | None = None
    ) -> FlagResolutionDetails[str]:
        return self._resolve(flag_key, default_value, lambda v: isinstance(v, str))

    def resolve_integer_details(
        self, flag_key: str, default_value: int, evaluation_context: EvaluationContext | None = None
    ) -> FlagResolutionDetails[int]:
        return self._resolve(flag_key, default_value, _is_int, int)

    def resolve_float_details(
        self, flag_key: str, default_value: float, evaluation_context: EvaluationContext | None = None
    ) -> FlagResolutionDetails[float]:
        return self._resolve(
            flag_key, default_value, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), float
        )

    def resolve_object_details(
        self,
        flag_key: str,
        default_value: Sequence[FlagValueType] | Mapping[str, FlagValueType],
        evaluation_context: EvaluationContext | None = None,
    ) -> FlagResolutionDetails[Sequence[FlagValueType] | Mapping[str, FlagValueType]]:
        return self._resolve(flag_key, default_value, lambda v: isinstance(v, (dict, list)), copy.deepcopy)
