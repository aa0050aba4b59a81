"""Registry of benchmark targets: ginkgodb's three front ends and the peers."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Target, dir_size
from .ginkgo import GinkgoLmdb, GinkgoLmdbBaseline, GinkgoLmdbNoOplog, GinkgoMemory, GinkgoMemoryNoOplog, GinkgoWire
from .peers import MongitaDisk, MongitaMemory, Mongomock, MontydbLightning, SecantusWire


@dataclass(frozen=True)
class TargetSpec:
    name: str
    cls: type[Target]
    family: str  # "ginkgodb", "peer", or "variant" (run only when named: ginkgodb measured without a part)
    requires: tuple[tuple[str, str], ...]  # (import name, pip name)
    description: str


TARGETS: dict[str, TargetSpec] = {s.name: s for s in (
    TargetSpec("ginkgo-lmdb", GinkgoLmdb, "ginkgodb", (), "ginkgodb embedded, LMDB"),
    TargetSpec("ginkgo-memory", GinkgoMemory, "ginkgodb", (), "ginkgodb embedded, in memory"),
    TargetSpec("ginkgo-wire", GinkgoWire, "ginkgodb", (), "pymongo -> `ginkgodb serve` (LMDB)"),
    TargetSpec("ginkgo-lmdb-nooplog", GinkgoLmdbNoOplog, "variant", (), "ginkgo-lmdb without the oplog"),
    TargetSpec("ginkgo-lmdb-baseline", GinkgoLmdbBaseline, "variant", (),
               "ginkgo-lmdb built from the checkout in GINKGODB_BENCH_BASELINE"),
    TargetSpec("ginkgo-memory-nooplog", GinkgoMemoryNoOplog, "variant", (), "ginkgo-memory without the oplog"),
    TargetSpec("mongomock", Mongomock, "peer", (("mongomock", "mongomock"),), "mongomock, in memory"),
    TargetSpec("montydb-lmdb", MontydbLightning, "peer", (("montydb", "montydb"), ("lmdb", "lmdb")),
               "montydb, LMDB (lightning) storage"),
    TargetSpec("mongita-memory", MongitaMemory, "peer", (("mongita", "mongita"),), "mongita, in memory"),
    TargetSpec("mongita-disk", MongitaDisk, "peer", (("mongita", "mongita"),), "mongita, disk"),
    TargetSpec("secantus-wire", SecantusWire, "peer", (("secantus", "secantusdb"),),
               "pymongo -> SecantusDB server (WiredTiger)"),
)}

GINKGO_TARGETS = tuple(n for n, s in TARGETS.items() if s.family == "ginkgodb")
PEER_TARGETS = tuple(n for n, s in TARGETS.items() if s.family == "peer")
DEFAULT_TARGETS = tuple(n for n, s in TARGETS.items() if s.family != "variant")


def make_target(name: str, workdir: str) -> Target:
    return TARGETS[name].cls(workdir)


__all__ = ["TARGETS", "DEFAULT_TARGETS", "GINKGO_TARGETS", "PEER_TARGETS", "Target", "TargetSpec", "make_target", "dir_size"]
