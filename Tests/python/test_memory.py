"""Mirrored reads allocate nothing that stays: memory is flat over 100,000 of them."""

from __future__ import annotations

import tracemalloc

from conftest import DEADLINE, Daemon

import pwflags


def test_memory_stays_flat_over_100000_mirrored_reads(daemon: Daemon) -> None:
    with pwflags.Client(daemon.socket) as client:
        assert client.wait_for_snapshot(DEADLINE)

        def reads(count: int) -> None:
            for _ in range(count):
                client.get("new_checkout")
                client.is_enabled("search_v2")
                client.get_string("new_checkout", "button_color", "blue")
                client.get_int("no_such_flag", "max_items", 1)

        reads(1_000)  # warm up caches and interned objects
        tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            reads(100_000)
            after, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert after - before < 16 * 1024, f"grew by {after - before} bytes"
    assert peak - before < 64 * 1024, f"peaked {peak - before} bytes above the start"
