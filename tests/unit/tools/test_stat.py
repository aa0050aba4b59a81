"""stat rows from two serverStatus samples."""
from __future__ import annotations

import pytest

from ginkgodb.tools.stat import row


def test_rates_from_two_samples():
    a = {"opcounters": {"insert": 10, "query": 5, "update": 0, "delete": 0, "getmore": 0,
                        "command": 100}, "network": {"bytesIn": 1000, "bytesOut": 0},
         "connections": {"current": 3}, "mem": {"resident": 30, "virtual": 100}}
    b = {"opcounters": {"insert": 30, "query": 5, "update": 4, "delete": 0, "getmore": 2,
                        "command": 110}, "network": {"bytesIn": 3048, "bytesOut": 512},
         "connections": {"current": 4}, "mem": {"resident": 31, "virtual": 101}}
    r = row((0.0, a), (2.0, b))
    assert (r["insert"], r["query"], r["update"], r["getmore"], r["command"]) == (
        "10", "*0", "2", "1", "5")
    assert (r["net_in"], r["net_out"], r["conn"], r["res"], r["vsize"]) == (
        "1.0k", "256b", "4", "31M", "101M")


def test_stat_needs_a_server(tool, tmp_path):
    with pytest.raises(SystemExit):          # stat has no --dbpath option at all
        tool("stat", "--dbpath", str(tmp_path))
