"""A catastrophic regular expression (issue 8, point 1) must neither outlive maxTimeMS nor stall
the other connections. The regex engine that makes this true is another branch's work: until
it is merged this test fails as expected (strict, so it reports itself once it passes)."""
from __future__ import annotations

import threading
import time

import pymongo
from pymongo.errors import ExecutionTimeout
from support.timing import bound

from ginkgodb.server.testing import running_server


def test_a_catastrophic_regex_is_stopped_by_max_time_ms_and_other_connections_stay_fast():
    with running_server(quiet=True) as address:
        slow = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        fast = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            # catastrophic for backtracking engines, the regex package's included: seconds per
            # match without a limit ("(a+)+$" no longer is: the package short-cuts it)
            slow.t.r.insert_one({"s": "a" * 40 + "b"})
            fast.admin.command("ping")
            outcome: dict = {}

            def run() -> None:
                start = time.monotonic()
                try:
                    slow.t.r.find_one({"s": {"$regex": "(a|aa)+$"}}, max_time_ms=100)
                    outcome["error"] = None
                except ExecutionTimeout as exc:
                    outcome["error"] = exc.code
                outcome["seconds"] = time.monotonic() - start

            query = threading.Thread(target=run)
            query.start()
            latencies = []
            while query.is_alive():
                start = time.perf_counter()
                fast.admin.command("ping")
                latencies.append(time.perf_counter() - start)
                time.sleep(0.005)
            query.join()
            assert outcome["error"] == 50  # MaxTimeMSExpired
            assert outcome["seconds"] < bound(0.5), outcome
            latencies.sort()
            assert latencies[int(len(latencies) * 0.99)] < bound(0.050), latencies[-5:]
        finally:
            slow.close()
            fast.close()
