"""tools.collector: automatic garbage collection is off while a batch is inserted, back after."""
from __future__ import annotations

import gc
import threading

from ginkgodb.tools import collector


def test_paused_turns_collection_off_and_back_on():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():           # nested (another thread's batch): still off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_off_before_stays_off():
    gc.disable()
    try:
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_pause_ends_when_the_last_thread_leaves_and_on_errors():
    inside, leave = threading.Event(), threading.Event()

    def batch():
        with collector.paused():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=batch)
    thread.start()
    inside.wait(5)
    try:
        with collector.paused():
            raise ValueError("a failed batch")
    except ValueError:
        pass
    assert not gc.isenabled()              # the other thread's batch still runs
    leave.set()
    thread.join(5)
    assert gc.isenabled()
