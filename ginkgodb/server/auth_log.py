"""Authentication events in the log, as mongod writes them: "Successfully authenticated"
(5286306) and "Authentication failed" (5286307) with the mechanism, user, database and the
client's address. Failures are rate-limited: a client guessing passwords cannot flood the log
(past `burst` lines in a second, the rest of that second is counted and reported once).
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

from .logs import event


class AuthLog:
    def __init__(self, burst: int = 20) -> None:
        self.burst = burst
        self._lock = threading.Lock()
        self._second = 0
        self._logged = 0
        self._suppressed = 0

    def __call__(self, succeeded: bool, attr: dict[str, Any]) -> None:
        attr = {"mechanism": attr.get("mechanism"), "speculative": bool(attr.get("speculative")),
                "principalName": attr.get("principalName"),
                "authenticationDatabase": attr.get("authenticationDatabase"),
                "remote": attr.get("remote"), **({"error": attr["error"]} if "error" in attr else {})}
        if succeeded:
            event(logging.INFO, "ACCESS", 5286306, "conn", "Successfully authenticated", **attr)
            return
        with self._lock:
            now = int(time.monotonic())
            if now != self._second:
                suppressed, self._suppressed = self._suppressed, 0
                self._second, self._logged = now, 0
                if suppressed:
                    event(logging.WARNING, "ACCESS", 5286308, "conn",
                          "Authentication failures not logged (rate limit)", count=suppressed)
            if self._logged >= self.burst:
                self._suppressed += 1
                return
            self._logged += 1
        event(logging.INFO, "ACCESS", 5286307, "conn", "Authentication failed", **attr)
