"""The protocol core without a socket: lines, the diff, the mirror's resume rules, expiry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pwflags import Flag, FlagsUpdate, ProtocolError
from pwflags._core import LineBuffer, Mirror, Subscription, diff, parse_time


def wire(key: str, enabled: bool = True, **props: Any) -> dict[str, Any]:
    return {"key": key, "enabled": enabled, "ruleId": "default", "properties": props, "source": "file"}


def test_line_buffer_splits_and_bounds() -> None:
    buffer = LineBuffer(8)
    assert buffer.feed(b"ab\ncd") == [b"ab"]
    assert buffer.feed(b"e\n\n") == [b"cde", b""]
    with pytest.raises(ProtocolError):
        buffer.feed(b"123456789")
    assert len(buffer) == 0
    with pytest.raises(ProtocolError):
        LineBuffer(4).feed(b"123456\n")


def test_flags_differ_by_their_json() -> None:
    one, true = Flag.from_json(wire("k", x=1)), Flag.from_json(wire("k", x=True))
    assert one != true and Flag.from_json(wire("k", x=1)) == one
    assert diff({"k": one}, {"k": true}) == FlagsUpdate(changed=("k",))
    assert not diff({"k": one}, {"k": Flag.from_json(wire("k", x=1))})


def test_updates_merge_to_the_last_fate() -> None:
    merged = FlagsUpdate(changed=("a", "b")).merged(FlagsUpdate(changed=("c",), removed=("a",)))
    assert merged == FlagsUpdate(changed=("b", "c"), removed=("a",))
    assert FlagsUpdate(removed=("a",)).merged(FlagsUpdate(changed=("a",))) == FlagsUpdate(changed=("a",))


def listen_answer(request: bytes, **result: Any) -> bytes:
    request_id = json.loads(request)["id"]
    result.setdefault("subscription", "s1")
    result.setdefault("expiresAt", None)
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def test_resume_unchanged_and_restart_diff() -> None:
    mirror = Mirror()
    first = Subscription(mirror)
    opening = first.open()
    assert "since" not in json.loads(opening)["params"]
    update = first.receive(listen_answer(opening, epoch="e1", revision=2, flags=[wire("a"), wire("b")]))
    assert update == FlagsUpdate(changed=("a", "b"))
    mirror.disconnected()
    # The same daemon: unchanged keeps the flags and tells no one.
    again = Subscription(mirror)
    opening = again.open()
    assert json.loads(opening)["params"]["since"] == {"epoch": "e1", "revision": 2}
    assert not again.receive(listen_answer(opening, epoch="e1", revision=2, unchanged=True))
    mirror.disconnected()
    # A restarted daemon: its listing, and the keys that differ.
    restarted = Subscription(mirror)
    opening = restarted.open()
    flags = [wire("a", False), wire("c")]
    assert restarted.receive(listen_answer(opening, epoch="e2", revision=1, flags=flags)) == FlagsUpdate(
        changed=("a", "c"), removed=("b",)
    )
    # unchanged for a position not asked about is a protocol error.
    mirror.disconnected()
    liar = Subscription(mirror)
    opening = liar.open()
    with pytest.raises(ProtocolError):
        liar.receive(listen_answer(opening, epoch="e2", revision=7, unchanged=True))


def test_notifications_apply_in_order_and_old_ones_are_ignored() -> None:
    mirror = Mirror()
    subscription = Subscription(mirror)
    opening = subscription.open()
    subscription.receive(listen_answer(opening, epoch="e", revision=1, flags=[wire("a"), wire("b")]))

    def changed(revision: int, changed: list[Any], removed: list[str]) -> bytes:
        params = {"subscription": "s1", "epoch": "e", "revision": revision, "expiresAt": None,
                  "changed": changed, "removed": removed}
        return json.dumps({"jsonrpc": "2.0", "method": "flagsChanged", "params": params}).encode()

    assert subscription.receive(changed(2, [wire("a", False)], ["b"])) == FlagsUpdate(("a",), ("b",))
    assert not subscription.receive(changed(2, [wire("z")], []))
    assert set(mirror.flags) == {"a"} and mirror.revision == 2


def test_expiry_drops_all_but_overrides() -> None:
    mirror = Mirror()
    subscription = Subscription(mirror)
    opening = subscription.open()
    override = dict(wire("o"), source="override", ruleId="override", sourceValue=None)
    subscription.receive(
        listen_answer(opening, epoch="e", revision=1, flags=[wire("a"), override], expiresAt="2026-01-01T00:00:00Z")
    )
    expires = parse_time("2026-01-01T00:00:00Z")
    assert expires is not None
    assert not mirror.expire_if_due(expires + 1)  # connected: the daemon decides
    mirror.disconnected()
    assert mirror.seconds_until_expiry(expires - 5) == 5
    assert mirror.expire_if_due(expires) == FlagsUpdate(removed=("a",))
    assert set(mirror.flags) == {"o"} and mirror.resume_point() is None
