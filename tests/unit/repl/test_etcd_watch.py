"""The etcd watch that wakes a member's coordinator when the primary key changes
(repl/etcd.py `watch`, `watch_range`): an event per change, a stop that ends it."""
from __future__ import annotations

import base64
import contextlib
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from support.etcd import EtcdProcess

from ginkgodb.repl import EtcdClient

pytestmark = pytest.mark.timeout(60)


def _wait_for(events: list, n: int) -> None:
    deadline = time.monotonic() + 5
    while len(events) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def _stop(watcher: threading.Thread, stop: threading.Event) -> None:
    """Setting `stop` ends the watch (at its next idle reopen at the latest)."""
    stop.set()
    watcher.join(5)
    assert not watcher.is_alive()


@contextlib.contextmanager
def _watching_k(tmp_path) -> Iterator[tuple]:
    """An etcd, a client, and a thread watching `/k` that records when each change came, open
    for half a second (idle once at least); stopped and closed afterwards."""
    proc = EtcdProcess(tmp_path / "etcd")
    client = EtcdClient(proc.url)
    try:
        seen: list[float] = []
        stop = threading.Event()
        watcher = threading.Thread(target=client.watch, args=("/k", lambda: seen.append(time.monotonic()), stop),
                                   kwargs={"idle": 0.5})
        watcher.start()
        time.sleep(0.5)
        yield client, seen, watcher
        _stop(watcher, stop)
    finally:
        client.close()
        proc.stop()


def test_a_watch_reports_each_change_of_its_key_at_once(tmp_path):
    with _watching_k(tmp_path) as (client, seen, _):
        changed = time.monotonic()
        client.put("/k", {"host": "a"})
        client.put("/other", 1)    # another key: no event
        client.delete("/k")
        _wait_for(seen, 2)
        assert len(seen) == 2 and seen[0] - changed < 0.5


def test_a_prefix_watch_starts_once_and_reports_the_keys_of_each_change(tmp_path):
    proc = EtcdProcess(tmp_path / "etcd")
    client = EtcdClient(proc.url)
    try:
        started = threading.Event()
        keys: list[list[str]] = []
        stop = threading.Event()
        watcher = threading.Thread(target=client.watch_range, args=("/p/", keys.append, stop),
                                   kwargs={"prefix": True, "on_start": started.set, "idle": 0.5})
        watcher.start()
        assert started.wait(5)
        client.put("/p/a", 1)
        client.put("/q", 1)        # outside the prefix: no event
        client.put("/p/b/c", 2)
        _wait_for(keys, 2)
        time.sleep(0.7)            # past one idle reopen: nothing is reported twice
        assert keys == [["/p/a"], ["/p/b/c"]]
        _stop(watcher, stop)
    finally:
        client.close()
        proc.stop()


def test_a_watch_the_gateway_ends_with_408_is_opened_again(tmp_path, monkeypatch):
    """The gateway answers a watch 408 when its own request timeout passes: the watch opens
    again from the revision after the last one seen, instead of ending (a member's coordinator
    would stop hearing of its primary's key)."""
    real = httpx.Client.stream
    ended = []

    class Ended:
        status_code = 408

        def iter_lines(self) -> Iterator[str]:
            return iter(())

    @contextlib.contextmanager
    def stream(self, method, url, **kwargs):
        if url == "/v3/watch" and not ended:
            ended.append(True)
            yield Ended()
            return
        with real(self, method, url, **kwargs) as response:
            yield response

    monkeypatch.setattr(httpx.Client, "stream", stream)
    with _watching_k(tmp_path) as (client, seen, watcher):
        client.put("/k", {"host": "a"})
        client.delete("/k")
        _wait_for(seen, 2)
        assert ended and len(seen) == 2 and watcher.is_alive()


def test_a_change_before_the_gateway_opens_the_stream_is_reported(tmp_path, monkeypatch):
    """A change made after the watch was asked for but before the gateway has the stream open
    (a loaded machine, or a 408 before the first event) is reported: the watch starts from the
    store's revision when the call began, not from whenever the stream opens."""
    real = httpx.Client.stream
    raced = []

    @contextlib.contextmanager
    def stream(self, method, url, **kwargs):
        if url == "/v3/watch" and not raced:
            raced.append(True)
            key, value = (base64.b64encode(text).decode() for text in (b"/k", b'{"host": "a"}'))
            assert self.post("/v3/kv/put", json={"key": key, "value": value}).status_code == 200
        with real(self, method, url, **kwargs) as response:
            yield response

    monkeypatch.setattr(httpx.Client, "stream", stream)
    with _watching_k(tmp_path) as (_, seen, watcher):
        _wait_for(seen, 1)
        assert raced and len(seen) == 1 and watcher.is_alive()
