"""A stand-in for the wire server's shared state (commands.ServerView)."""
from __future__ import annotations

import time

from ginkgodb.commands.server_view import OpInfo


class FakeServer:
    def __init__(self, ops: list[OpInfo] | None = None) -> None:
        self.started = time.time() - 5
        self.host = "testhost:27017"
        self.compressors = ("snappy", "zlib")
        self.argv = ["ginkgodb", "serve", "--port", "27017"]
        self.parsed_options = {"net": {"port": 27017}}
        self.ops = ops or []
        self.killed: list[int] = []

    def connection_stats(self):
        return {"current": 3, "available": 997, "totalCreated": 9, "rejected": 0, "active": 1}

    def opcounters(self):
        return {"insert": 4, "query": 2, "update": 0, "delete": 0, "getmore": 1, "command": 10}

    def network_stats(self):
        return {"bytesIn": 100, "bytesOut": 200, "physicalBytesIn": 100, "physicalBytesOut": 200,
                "numRequests": 12}

    def in_progress(self):
        return list(self.ops)

    def kill_op(self, opid: int) -> bool:
        self.killed.append(opid)
        for op in self.ops:
            if op.opid == opid:
                op.ctx.killed = True
                return True
        return False

    def log_lines(self, name: str):
        return ['{"msg":"Waiting for connections"}'] if name == "global" else []

    def request_shutdown(self, timeout_secs: float) -> None:
        self.shutdown_requests = [*getattr(self, "shutdown_requests", []), timeout_secs]
