"""The OpenFeature provider: every type with reason and metadata, and its events."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator

import pytest
from conftest import DEADLINE, DEMO, Daemon
from openfeature import api
from openfeature.event import EventDetails, ProviderEvent
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import Reason

from pwflags.openfeature import PwflagsProvider


class Events:
    """The provider events the SDK delivered, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[ProviderEvent, EventDetails]] = []
        self.arrived = threading.Condition()
        for event in ProviderEvent:
            api.add_handler(event, functools.partial(self._add, event))

    def _add(self, event: ProviderEvent, details: EventDetails) -> None:
        with self.arrived:
            self.seen.append((event, details))
            self.arrived.notify_all()

    def wait_for(self, event: ProviderEvent, after: int = 0) -> EventDetails:
        def found() -> EventDetails | None:
            return next((d for e, d in self.seen[after:] if e == event), None)

        with self.arrived:
            assert self.arrived.wait_for(lambda: found() is not None, DEADLINE), f"no {event}: {self.seen}"
            details = found()
            assert details is not None
            return details


@pytest.fixture
def provider(daemon: Daemon) -> Iterator[PwflagsProvider]:
    made = PwflagsProvider(path=daemon.socket, status_interval=0.1)
    yield made
    api.shutdown()
    api.clear_hooks()
    from openfeature import _event_support

    _event_support.clear()


def test_every_type_resolves_with_reason_and_metadata(provider: PwflagsProvider, daemon: Daemon) -> None:
    api.set_provider_and_wait(provider)
    client = api.get_client()
    details = client.get_boolean_details("new_checkout", False)
    assert details.value is True and details.reason == Reason.TARGETING_MATCH and details.variant == "r_1a2b3c4d"
    assert details.flag_metadata == {"ruleId": "r_1a2b3c4d", "source": "file", "revision": 1}
    string = client.get_string_details("new_checkout.button_color", "blue")
    assert string.value == "green" and string.flag_metadata["property"] == "button_color"
    assert string.flag_metadata["flagKey"] == "new_checkout"
    assert client.get_integer_details("new_checkout.max_items", 1).value == 5
    assert client.get_float_details("new_checkout.ratio", 0.0).value == 0.5
    assert client.get_object_details("new_checkout.layout", {}).value == {"columns": 2}
    assert client.get_object_details("new_checkout.steps", []).value == ["cart", "pay"]
    assert client.get_boolean_details("new_checkout.express", False).value is True
    assert client.get_boolean_details("search_v2", False).reason == Reason.DEFAULT
    killed = client.get_boolean_details("holiday_banner", True)
    assert killed.value is False and killed.reason == Reason.DISABLED and killed.variant == "killed"
    mismatch = client.get_integer_details("new_checkout.button_color", 7)
    assert mismatch.value == 7 and mismatch.error_code == ErrorCode.TYPE_MISMATCH
    missing = client.get_boolean_details("no_such_flag", True)
    assert missing.value is True and missing.error_code == ErrorCode.FLAG_NOT_FOUND
    assert client.get_string_details("new_checkout.nothing", "d").value == "d"


def test_events_follow_changes_staleness_and_the_daemon(provider: PwflagsProvider, daemon: Daemon) -> None:
    events = Events()
    api.set_provider_and_wait(provider)
    start = len(events.seen)
    daemon.write_flags(DEMO[1:])
    changed = events.wait_for(ProviderEvent.PROVIDER_CONFIGURATION_CHANGED, start)
    assert changed.flags_changed == ["new_checkout"]
    mark = len(events.seen)
    daemon.write_text("{not json")
    assert "stale" in (events.wait_for(ProviderEvent.PROVIDER_STALE, mark).message or "")
    mark = len(events.seen)
    daemon.write_flags(DEMO[1:])
    events.wait_for(ProviderEvent.PROVIDER_READY, mark)
    mark = len(events.seen)
    daemon.stop()
    error = events.wait_for(ProviderEvent.PROVIDER_ERROR, mark)
    assert error.error_code == ErrorCode.GENERAL
    # Reads still answer from the mirror while the daemon is away.
    assert api.get_client().get_boolean_details("search_v2", False).value is True
    mark = len(events.seen)
    daemon.start()
    events.wait_for(ProviderEvent.PROVIDER_READY, mark)
