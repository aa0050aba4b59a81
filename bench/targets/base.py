"""What a benchmark target is: something that opens a pymongo-shaped client on fresh storage.

A target owns its storage (a directory under the worker's scratch directory, or memory) and, for
wire targets, its server process. Workloads only see `client`, so one workload code path serves
embedded engines, in-process fakes and servers alike.
"""
from __future__ import annotations

import os
from typing import Any


class Target:
    """Base class; subclasses implement `_connect` (and `_disconnect` when closing needs more)."""

    name = "?"
    durable = False  # data survives close + reopen (W13 applies)

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.client: Any = None

    def open(self) -> Any:
        self.client = self._connect()
        return self.client

    def close(self) -> None:
        if self.client is not None:
            client, self.client = self.client, None
            self._disconnect(client)

    def reopen(self) -> Any:
        """Close and open again on the same storage (only meaningful when `durable`)."""
        self.close()
        return self.open()

    def data_dir(self) -> str | None:
        """Directory holding the data (for its on-disk size), if any."""
        return None

    def server_peak_rss(self) -> int | None:
        """Peak resident memory in bytes of a separate server process, if there is one."""
        return None

    def _connect(self) -> Any:
        raise NotImplementedError

    def _disconnect(self, client: Any) -> None:
        close = getattr(client, "close", None)
        if close is not None:
            close()


def storage_dir(workdir: str, name: str) -> str:
    path = os.path.join(workdir, name)
    os.makedirs(path, exist_ok=True)
    return path


def dir_size(path: str) -> int:
    """Bytes allocated on disk under `path` (sparse LMDB maps count only what is used)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total
