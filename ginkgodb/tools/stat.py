"""`ginkgodb stat`: mongostat's rows from a server's serverStatus.

Every `interval` seconds (default 1) one row: operations per second since the previous sample
(insert, query, update, delete, getmore, command), bytes in and out per second, open
connections, virtual and resident memory, and the time. The header repeats every 10 rows
(`--noheaders` drops it); `--rowcount N` stops after N rows; `--json` prints one JSON object
per row, keyed by host as mongostat's `--json` does. A data directory has no live counters, so
stat needs a server (`--uri`/`--host`).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from typing import Any

from .connect import connect
from .log import Log, ToolError

DBPATH = False
_OPS = ("insert", "query", "update", "delete", "getmore", "command")
_COLUMNS = _OPS + ("vsize", "res", "net_in", "net_out", "conn", "time")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("interval", nargs="?", type=float, default=1.0,
                        help="seconds between rows (default %(default)s)")
    parser.add_argument("-n", "--rowcount", type=int, default=0, metavar="N",
                        help="stop after N rows (default: run until interrupted)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--noheaders", action="store_true", help="no header lines")


def _size(n: float) -> str:
    for unit in ("b", "k", "m", "g"):
        if abs(n) < 1024 or unit == "g":
            return f"{n:.0f}{unit}" if unit == "b" else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}g"


def _mem(mb: Any) -> str:
    return f"{float(mb):.0f}M" if mb is not None else ""


def sample(client: Any) -> tuple[float, dict]:
    status = client.admin.command("serverStatus")
    return time.monotonic(), status


def row(prev: tuple[float, dict], cur: tuple[float, dict]) -> dict[str, str]:
    """One mongostat row from two serverStatus samples."""
    (t0, a), (t1, b) = prev, cur
    elapsed = max(t1 - t0, 1e-9)
    ops_a, ops_b = a.get("opcounters", {}), b.get("opcounters", {})
    out: dict[str, str] = {}
    for op in _OPS:
        rate = (ops_b.get(op, 0) - ops_a.get(op, 0)) / elapsed
        out[op] = f"{rate:.0f}" if rate else "*0"
    mem = b.get("mem", {})
    out["vsize"] = _mem(mem.get("virtual"))
    out["res"] = _mem(mem.get("resident"))
    net_a, net_b = a.get("network", {}), b.get("network", {})
    out["net_in"] = _size((net_b.get("bytesIn", 0) - net_a.get("bytesIn", 0)) / elapsed)
    out["net_out"] = _size((net_b.get("bytesOut", 0) - net_a.get("bytesOut", 0)) / elapsed)
    out["conn"] = str(b.get("connections", {}).get("current", ""))
    local = b.get("localTime")
    stamp = local if isinstance(local, dt.datetime) else dt.datetime.now()
    out["time"] = stamp.strftime("%b %d %H:%M:%S.") + f"{stamp.microsecond // 1000:03d}"
    return out


def run(args: argparse.Namespace, log: Log) -> int:
    if getattr(args, "dbpath", None):
        raise ToolError("stat needs a running server (--uri or --host): a data directory has no "
                        "live counters")
    if args.interval <= 0:
        raise ToolError("interval must be positive")
    if args.rowcount < 0:
        raise ToolError("--rowcount must not be negative")
    conn = connect(args, log)
    host = conn.target
    widths = {c: max(len(c), 7) for c in _COLUMNS}
    widths["time"] = 19
    out = sys.stdout
    try:
        prev = sample(conn.client)
        rows = 0
        while not args.rowcount or rows < args.rowcount:
            time.sleep(args.interval)
            cur = sample(conn.client)
            values = row(prev, cur)
            prev = cur
            if args.json:
                out.write(json.dumps({host: values}) + "\n")
            else:
                if not args.noheaders and rows % 10 == 0:
                    out.write(" ".join(c.rjust(widths[c]) for c in _COLUMNS) + "\n")
                out.write(" ".join(values[c].rjust(widths[c]) for c in _COLUMNS) + "\n")
            out.flush()
            rows += 1
    except KeyboardInterrupt:
        pass
    finally:
        conn.close()
    return 0
