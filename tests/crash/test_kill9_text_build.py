"""A background text index build killed with SIGKILL midway: the data directory reopens with
the index consistent with its stored build state, `$text` answers correctly at once, and the
build resumes to the end (engine/text_build.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import bson

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine, record_format, text_build
from ginkgodb.storage.kv import prefix_end

BUILDER = os.path.join(os.path.dirname(__file__), "text_builder.py")


def _entries(engine) -> tuple[set, set, dict]:
    """(the index's entries, the entries its documents call for, the build state or None)."""
    state = engine.catalog.collection("crash", "c")
    ix = state.index("t")
    have, want = set(), set()
    with engine.kv.writer() as txn:
        have = {k for k, _ in txn.scan(ix.prefix, prefix_end(ix.prefix))}
        for key, value in txn.scan(state.record_prefix, prefix_end(state.record_prefix)):
            rid = state.rid_of_record_key(key)
            keys, _ = ix.keys(bson.decode(record_format.document(value)))
            want |= {(ix.prefix + k + state.rids.suffix(rid), rid) for k in keys}
    return have, want, text_build.state_of(ix.meta)


def test_kill9_during_a_background_text_build(tmp_path):
    path = str(tmp_path / "data")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, BUILDER, path], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "midway"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with text_build.builds_paused():   # look at what the crash left before the builder resumes
        engine = Engine.open(path)
        try:
            have, want, state = _entries(engine)
            assert state is not None, "the build should have been interrupted midway"
            first, last = int(state["next"]), int(state["end"])
            assert first > 1, "no chunk committed before the kill"
            # every entry is one a document calls for; all are there outside the unindexed range
            assert have <= {k for k, _ in want}
            assert {k for k, rid in want if not first <= rid <= last} <= have
            ctx = CommandContext(engine=engine)
            found = dispatch(ctx, {"count": "c", "query": {"$text": {"$search": "tea"}}, "$db": "crash"})["n"]
            docs = dispatch(ctx, {"find": "c", "filter": {}, "batchSize": 100000, "$db": "crash"})
            expected = sum("tea" in d["title"].split() for d in docs["cursor"]["firstBatch"])
            assert found == expected
        finally:
            engine.close()
    engine = Engine.open(path)
    try:
        assert engine.text_builder.wait(60)
        have, want, state = _entries(engine)
        assert state is None and have == {k for k, _ in want}
    finally:
        engine.close()
