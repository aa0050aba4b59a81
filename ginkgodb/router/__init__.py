"""The sharding router (`ginkgodb router`): a mongos over ginkgodb shards, its metadata in etcd.

docs/design/sharding.md. The face: `run` (the process), `Router` (its state), `dispatch`.
"""
from __future__ import annotations

from .dispatch import dispatch
from .server import run, serve
from .state import Router

__all__ = ["Router", "dispatch", "run", "serve"]
