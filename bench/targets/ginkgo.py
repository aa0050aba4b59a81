"""The three ways to run ginkgodb: embedded on LMDB, embedded in memory, and over the wire."""
from __future__ import annotations

import os
import sys
from typing import Any

from .base import Target, storage_dir
from .server_process import ServerProcess, python_argv

# The console script `ginkgodb` may not be installed in a source checkout; this is the same entry point.
_CLI = "import sys; from ginkgodb.cli import main; sys.exit(main())"


class GinkgoLmdb(Target):
    name = "ginkgo-lmdb"
    durable = True

    def _connect(self) -> Any:
        from ginkgodb import MongoClient
        return MongoClient(self.data_dir())

    def data_dir(self) -> str:
        return storage_dir(self.workdir, "ginkgo")


class GinkgoMemory(Target):
    name = "ginkgo-memory"

    def _connect(self) -> Any:
        from ginkgodb import MongoClient
        return MongoClient()


class GinkgoLmdbNoOplog(GinkgoLmdb):
    """ginkgo-lmdb with the oplog turned off: what the oplog costs (the worker is this target's
    own process, so the switch affects nothing else)."""

    name = "ginkgo-lmdb-nooplog"

    def _connect(self) -> Any:
        os.environ["GINKGODB_OPLOG"] = "off"
        return super()._connect()


class GinkgoMemoryNoOplog(GinkgoMemory):
    name = "ginkgo-memory-nooplog"

    def _connect(self) -> Any:
        os.environ["GINKGODB_OPLOG"] = "off"
        return super()._connect()


class GinkgoLmdbBaseline(GinkgoLmdb):
    """ginkgo-lmdb as another checkout builds it (the checkout named by GINKGODB_BENCH_BASELINE):
    code before and after a change, measured against the same peers in one run. The worker is
    this target's own process, so importing the other checkout's package affects nothing else."""

    name = "ginkgo-lmdb-baseline"

    def _connect(self) -> Any:
        root = os.environ.get("GINKGODB_BENCH_BASELINE")
        if not root or not os.path.isdir(os.path.join(root, "ginkgodb")):
            raise RuntimeError("set GINKGODB_BENCH_BASELINE to a checkout holding ginkgodb/")
        if "ginkgodb" in sys.modules:
            raise RuntimeError("ginkgodb was imported before the baseline checkout could be")
        sys.path.insert(0, os.path.abspath(root))
        return super()._connect()


class GinkgoWire(Target):
    name = "ginkgo-wire"
    durable = True

    def __init__(self, workdir: str) -> None:
        super().__init__(workdir)
        self.server = ServerProcess(self._argv, f"{workdir}/ginkgo-serve.log", workdir)

    def _argv(self, port: int) -> list[str]:
        # Logging is turned down as for every server target: the benchmark measures operations.
        return python_argv("-c", _CLI, "serve", "--port", str(port), "--dbpath", self.data_dir(),
                           "--log-level", "warning", "--quiet")

    def _connect(self) -> Any:
        return self.server.start()

    def _disconnect(self, client: Any) -> None:
        client.close()
        self.server.stop()

    def data_dir(self) -> str:
        return storage_dir(self.workdir, "ginkgo")

    def server_peak_rss(self) -> int:
        return self.server.current_peak_rss()
