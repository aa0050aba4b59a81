"""`ginkgodb advise`: the schema and workload advisor (ginkgodb/advisor, docs/advisor.md)."""
from __future__ import annotations

import argparse
import sys

from .connect import connect
from .log import Log, ToolError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", "-d", help="only this database")
    parser.add_argument("--collection", "-c", help="only this collection (with --db)")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text", help="report format")
    parser.add_argument("--out", "-o", metavar="FILE", help="write the report here (default: standard output)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="documents sampled per collection (default 1000)")
    parser.add_argument("--shard-key", action="append", default=[], metavar="NS:KEY",
                        help="analyse a candidate shard key, e.g. shop.orders:created_at, "
                             "shop.orders:customer,_id or shop.orders:_id=hashed (repeatable)")
    parser.add_argument("--shards", type=int, default=None, metavar="N",
                        help="shards assumed by the distribution estimate (default 4)")


def run(args: argparse.Namespace, log: Log) -> int:
    from ..advisor import Options, advise
    from ..advisor import thresholds as T
    from ..advisor.render_html import render as render_html
    from ..advisor.render_json import render as render_json
    from ..advisor.render_text import render as render_text
    from ..advisor.shard_key import parse
    if args.collection and not args.db:
        raise ToolError("--collection needs --db")
    sample = args.sample if args.sample is not None else T.DEFAULT_SAMPLE
    shards = args.shards if args.shards is not None else T.DEFAULT_SHARDS
    if sample <= 0 or shards <= 0:
        raise ToolError("--sample and --shards must be positive")
    try:
        keys = [parse(s) for s in args.shard_key]
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    conn = connect(args, log)
    try:
        report = advise(conn.client, Options(db=args.db, collection=args.collection, sample=sample,
                                             shard_keys=keys, shards=shards), conn.target)
    finally:
        conn.close()
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    try:
        if args.format == "json":
            out.write(render_json(report) + "\n")
        elif args.format == "html":
            out.write(render_html(report))
        else:
            render_text(report, out, colour=out is sys.stdout and sys.stdout.isatty())
    finally:
        if out is not sys.stdout:
            out.close()
    if args.out:
        log.info(f"wrote {args.format} report to {args.out} ({len(report.findings)} findings)")
    return 0
