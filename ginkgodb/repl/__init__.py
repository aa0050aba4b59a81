"""Replication between members: etcd (consensus), heartbeats, the oplog puller, positions.

It sits between the engine and the commands: it uses the engine's face (the applier writes
through `engine.apply_oplog`, one write batch per batch of entries) and pymongo to talk to other
members; the replica-set member in commands/ drives it. Design: docs/design/replication.md.
"""
from __future__ import annotations

from .coordinator import LEASE_TTL, Coordinator, key_prefix
from .etcd import EtcdClient, EtcdError
from .noop_writer import NoopWriter
from .peers import Peers, PeerStatus
from .positions import Positions, commit_point, majority_of
from .sync import OplogSync

__all__ = ["LEASE_TTL", "Coordinator", "EtcdClient", "EtcdError", "NoopWriter", "OplogSync", "PeerStatus", "Peers",
           "Positions", "commit_point", "key_prefix", "majority_of"]
