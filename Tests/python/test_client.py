"""The blocking client: every method against the real daemon, typed reads, the mirror, listeners, restarts."""

from __future__ import annotations

import threading

import pytest
from conftest import DEADLINE, DEMO, Daemon, flag, wait_until

import pwflags


def test_socket_path_is_resolved_as_the_other_clients_do() -> None:
    assert pwflags.socket_path("/x.sock", {"PWFLAGS_SOCKET": "/env.sock"}) == "/x.sock"
    assert pwflags.socket_path(None, {"PWFLAGS_SOCKET": "/env.sock"}) == "/env.sock"
    assert pwflags.socket_path("", {"PWFLAGS_SOCKET": ""}) == "/run/pwflagsd/pwflagsd.sock"
    assert pwflags.socket_path(None, {}) == pwflags.DEFAULT_SOCKET


def test_every_call_against_the_daemon(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        checkout = client.get("new_checkout")
        assert checkout is not None and checkout.enabled and checkout.rule_id == "r_1a2b3c4d"
        assert checkout.source == "file" and not checkout.overridden
        assert client.get("no_such_flag") is None
        assert set(client.get_all()) == {"new_checkout", "search_v2", "dark_mode", "holiday_banner"}
        assert client.is_enabled("search_v2") is True
        assert client.is_enabled("dark_mode", True) is False
        assert client.is_enabled("no_such_flag", True) is True
        assert client.get_string("new_checkout", "button_color", "blue") == "green"
        assert client.get_int("new_checkout", "max_items", 1) == 5
        assert client.get_float("new_checkout", "ratio", 0.0) == 0.5
        assert client.get_bool("new_checkout", "express", False) is True
        assert client.get_json("new_checkout", "layout") == {"columns": 2}
        assert client.get_json("new_checkout", "steps") == ["cart", "pay"]
        refreshed = client.refresh()
        assert refreshed.from_network is False and "dark_mode" in refreshed.flags and refreshed.revision >= 1
        assert client.log_impression("new_checkout") == "logged"
        assert client.log_impression("new_checkout") == "duplicate"
        assert client.log_impression("no_such_flag") == "noFlag"
        assert client.set_user_id("alice")["userId"] == "alice"
        assert client.status()["userId"] == "alice"
        assert isinstance(client.set_app_state("background"), bool)
        assert client.set_app_state("foreground") in (True, False)
        explained = client.explain("dark_mode")
        assert explained["rule"] == "matched" and explained["flag"]["key"] == "dark_mode"
        assert client.explain("New_checkout")["absence"] == "caseDiffers"
        status = client.status()
        assert status["source"] == "file" and status["flags"] == 4


def test_remote_errors_carry_the_code(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        with pytest.raises(pwflags.RemoteError) as refused:
            client.set_app_state("asleep")  # type: ignore[arg-type]
        assert refused.value.code == -32602 and refused.value.data == {"param": "state"}
        with pytest.raises(pwflags.RemoteError) as unknown:
            client.call("noSuchMethod")
        assert unknown.value.code == -32601
        assert client.is_enabled("search_v2")  # the connection stays usable


def test_typed_reads_give_the_default_for_a_wrong_type_or_a_missing_property(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        for mirrored in (False, True):
            if mirrored:
                assert client.wait_for_snapshot(DEADLINE)
            # A string is not a number, a number is never a bool, a bool is never a number (R6).
            assert client.get_int("new_checkout", "button_color", 7) == 7
            assert client.get_float("new_checkout", "button_color", 1.5) == 1.5
            assert client.get_bool("new_checkout", "max_items", False) is False
            assert client.get_int("new_checkout", "express", 3) == 3
            assert client.get_float("new_checkout", "express", 2.5) == 2.5
            assert client.get_string("new_checkout", "max_items", "x") == "x"
            assert client.get_string("new_checkout", "layout", "x") == "x"
            assert client.get_json("new_checkout", "button_color") is None
            assert client.get_json("new_checkout", "max_items", {}) == {}
            assert client.get_int("new_checkout", "ratio", 9) == 9  # 0.5 is not a whole number
            assert client.get_float("new_checkout", "max_items", 0.0) == 5.0
            # A null property, a missing property, a missing flag.
            assert client.get_string("new_checkout", "nothing", "d") == "d"
            assert client.get_string("new_checkout", "missing", "d") == "d"
            assert client.get_bool("no_such_flag", "express", True) is True
            assert client.get_json("no_such_flag", "layout", [1]) == [1]


def test_get_json_returns_a_copy(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        assert client.wait_for_snapshot(DEADLINE)
        layout = client.get_json("new_checkout", "layout")
        layout["columns"] = 99
        assert client.get_json("new_checkout", "layout") == {"columns": 2}


def test_mirrored_reads_need_no_daemon(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        assert client.wait_for_snapshot(DEADLINE) and client.has_snapshot
        daemon.stop()
        assert wait_until(lambda: not client.is_connected)
        assert client.is_enabled("new_checkout") and client.get_int("new_checkout", "max_items", 0) == 5
        with pytest.raises(pwflags.DaemonUnavailable):
            client.status()


def test_no_daemon_is_daemon_unavailable(tmp_path: object) -> None:
    with pwflags.Client("/nonexistent/pwflagsd.sock") as client:
        with pytest.raises(pwflags.DaemonUnavailable):
            client.get("new_checkout")
        assert not client.wait_for_snapshot(0.2)


class Recorder:
    """A listener that keeps what it heard and wakes the test."""

    def __init__(self) -> None:
        self.updates: list[pwflags.FlagsUpdate] = []
        self.heard = threading.Condition()

    def __call__(self, update: pwflags.FlagsUpdate) -> None:
        with self.heard:
            self.updates.append(update)
            self.heard.notify_all()

    def wait(self, count: int) -> list[pwflags.FlagsUpdate]:
        with self.heard:
            assert self.heard.wait_for(lambda: len(self.updates) >= count, DEADLINE), f"heard {self.updates}"
            return list(self.updates)


def test_listeners_hear_the_first_snapshot_and_each_change(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        recorder = Recorder()
        client.add_listener(recorder)
        first = recorder.wait(1)[0]
        assert first.changed == ("dark_mode", "holiday_banner", "new_checkout", "search_v2") and first.removed == ()
        daemon.write_flags([*DEMO[:2], flag("dark_mode", True, "r_5e6f7a8b", theme="light")])
        second = recorder.wait(2)[1]
        assert second == pwflags.FlagsUpdate(changed=("dark_mode",), removed=("holiday_banner",))
        assert client.is_enabled("dark_mode") and client.get("holiday_banner") is None
        assert client.revision == daemon.status()["revision"]


def test_a_removed_listener_is_not_called_again(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        kept, removed = Recorder(), Recorder()
        client.add_listener(kept)
        handle = client.add_listener(removed)
        kept.wait(1)
        assert client.remove_listener(handle) and not client.remove_listener(handle)
        daemon.write_flags(DEMO[:3])
        kept.wait(2)
        assert len(removed.updates) <= 1


def test_a_listener_that_raises_does_not_stop_the_mirror(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        def boom(update: pwflags.FlagsUpdate) -> None:
            raise RuntimeError("listener bug")

        client.add_listener(boom)
        recorder = Recorder()
        client.add_listener(recorder)
        recorder.wait(1)
        daemon.write_flags(DEMO[:3])
        assert recorder.wait(2)[1].removed == ("holiday_banner",)


def test_refresh_shows_in_the_mirror_at_once(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        assert client.wait_for_snapshot(DEADLINE)
        daemon.write_flags([*DEMO[:3], flag("holiday_banner", True, "", text="x")])
        # Whether inotify or the refresh gets there first, the refresh's answer is what the mirror holds after.
        refreshed = client.refresh()
        assert refreshed.flags["holiday_banner"].enabled
        assert client.is_enabled("holiday_banner")


def test_a_listener_across_a_restart_hears_exactly_what_changed_while_the_daemon_was_down(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        recorder = Recorder()
        client.add_listener(recorder)
        recorder.wait(1)
        daemon.stop()
        assert wait_until(lambda: not client.is_connected)
        # Changed: dark_mode; removed: holiday_banner; added: fresh; unchanged: new_checkout, search_v2.
        daemon.write_flags([*DEMO[:2], flag("dark_mode", True, "r_5e6f7a8b", theme="light"), flag("fresh")])
        daemon.start()
        update = recorder.wait(2)[1]
        assert update == pwflags.FlagsUpdate(changed=("dark_mode", "fresh"), removed=("holiday_banner",))
        assert client.is_enabled("fresh") and client.get("holiday_banner") is None
        assert client.epoch == daemon.status()["epoch"]


def test_a_restart_with_no_change_calls_no_listener(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        recorder = Recorder()
        client.add_listener(recorder)
        recorder.wait(1)
        old_epoch = client.epoch
        daemon.restart()
        new_epoch = daemon.status()["epoch"]
        assert new_epoch != old_epoch
        # The mirror took the new daemon's listing (its epoch) and found nothing to tell.
        assert wait_until(lambda: client.epoch == new_epoch and client.is_connected)
        # The next listener call is the next change, not the restart.
        daemon.write_flags(DEMO[:3])
        updates = recorder.wait(2)
        assert updates[1] == pwflags.FlagsUpdate(removed=("holiday_banner",)) and len(updates) == 2


def test_an_idle_connection_the_daemon_closed_is_reopened(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        assert client.is_enabled("search_v2")
        daemon.restart()  # the call connection is now closed at the far end, as after IdleConnectionTimeout
        assert client.is_enabled("search_v2")


def test_close_from_a_listener_ends_the_thread(daemon: Daemon) -> None:
    client = pwflags.Client(daemon.socket)
    closed = threading.Event()

    def close_on_first(update: pwflags.FlagsUpdate) -> None:
        client.close()
        closed.set()

    client.add_listener(close_on_first)
    assert closed.wait(DEADLINE)
    assert client._thread is not None
    client._thread.join(DEADLINE)
    assert not client._thread.is_alive()
