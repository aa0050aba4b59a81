"""The peers: other MongoDB-compatible Python engines, each configured as its docs recommend."""
from __future__ import annotations

from typing import Any

from .base import Target, storage_dir
from .server_process import ServerProcess, python_argv

MONTYDB_MAP_SIZE = 16 << 30  # lightning's default map is 10 MiB; LMDB maps are sparse


class Mongomock(Target):
    name = "mongomock"

    def _connect(self) -> Any:
        import mongomock
        return mongomock.MongoClient()


class MontydbLightning(Target):
    """montydb on its LMDB ("lightning") storage, selected with set_storage before connecting."""

    name = "montydb-lmdb"
    durable = True

    def _connect(self) -> Any:
        from montydb import MontyClient, set_storage
        path = self.data_dir()
        set_storage(path, storage="lightning", use_bson=True, map_size=MONTYDB_MAP_SIZE)
        return MontyClient(path)

    def data_dir(self) -> str:
        return storage_dir(self.workdir, "montydb")

    def reopen(self) -> Any:
        from montydb import MontyClient
        self.close()
        self.client = MontyClient(self.data_dir())
        return self.client


class MongitaMemory(Target):
    name = "mongita-memory"

    def _connect(self) -> Any:
        from mongita import MongitaClientMemory
        return MongitaClientMemory()


class MongitaDisk(Target):
    name = "mongita-disk"
    durable = True

    def _connect(self) -> Any:
        from mongita import MongitaClientDisk
        return MongitaClientDisk(self.data_dir())

    def data_dir(self) -> str:
        return storage_dir(self.workdir, "mongita")


class SecantusWire(Target):
    """SecantusDB's Python server (WiredTiger storage), standalone, on loopback."""

    name = "secantus-wire"
    durable = True

    def __init__(self, workdir: str) -> None:
        super().__init__(workdir)
        self.server = ServerProcess(self._argv, f"{workdir}/secantus.log", workdir)

    def _argv(self, port: int) -> list[str]:
        return python_argv("-m", "secantus", "--host", "127.0.0.1", "--port", str(port),
                           "--storage-path", self.data_dir(), "--standalone", "--log-level", "WARNING")

    def _connect(self) -> Any:
        return self.server.start()

    def _disconnect(self, client: Any) -> None:
        client.close()
        self.server.stop()

    def data_dir(self) -> str:
        return storage_dir(self.workdir, "secantus")

    def server_peak_rss(self) -> int:
        return self.server.current_peak_rss()
