"""A replica-set member for unit tests: no coordinator runs (its etcd is unreachable), so the
tests set its state, its primary and its heartbeats by hand."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ginkgodb.commands import ReplicatedMember, TopologyWatch
from ginkgodb.engine import Engine
from ginkgodb.storage import open_engine


@contextlib.contextmanager
def offline_member(config: dict, me: str) -> Iterator[ReplicatedMember]:
    """Member `me` of `config` on an in-memory engine, with one oplog entry of history (so it is
    SECONDARY at once) and `config` adopted; closed at the end."""
    engine = Engine(open_engine(None))
    member = ReplicatedMember(engine, config["_id"], me, TopologyWatch(), etcd_url="http://127.0.0.1:9")
    engine.oplog.append_noop({"msg": "new primary"})
    member.adopt_config(dict(config))
    try:
        yield member
    finally:
        member.sync.close()
        member.peers.close()
        engine.close()
