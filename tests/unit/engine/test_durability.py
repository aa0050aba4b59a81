"""j: true waits for the data file to reach stable storage before acknowledging."""
from __future__ import annotations

from support.runner import Runner

from ginkgodb.engine import Engine


def test_journaled_writes_fsync_before_the_reply(tmp_path, monkeypatch):
    engine = Engine.open(str(tmp_path / "d"), sync_interval=0)
    calls = []
    monkeypatch.setattr(engine.kv, "_env", _Spy(engine.kv._env, calls))
    run = Runner(engine)
    run.insert("c", {"_id": 1})
    assert calls == []
    run.insert("c", {"_id": 2}, writeConcern={"w": 1, "j": True})
    assert calls == [True]
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}], "writeConcern": {"j": True}})
    run({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}], "writeConcern": {"j": True}})
    run({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"a": 1}}, "writeConcern": {"j": True}})
    assert calls == [True] * 4
    engine.close()


def test_the_flusher_syncs_committed_writes_in_the_background(tmp_path, monkeypatch):
    import time
    engine = Engine.open(str(tmp_path / "d"), sync_interval=0.05)
    calls = []
    monkeypatch.setattr(engine.kv, "_env", _Spy(engine.kv._env, calls))
    Runner(engine).insert("c", {"_id": 1})
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls, "no background fsync within 5 s"
    engine.close()


class _Spy:
    """Wraps the LMDB environment, recording sync(force) calls."""

    def __init__(self, env, calls: list) -> None:
        self._env, self._calls = env, calls

    def sync(self, force=False):
        self._calls.append(force)
        return self._env.sync(force)

    def __getattr__(self, name):
        return getattr(self._env, name)
