"""MongoDB's everyday tools as `ginkgodb` subcommands: dump, restore, export, import, stat, and
the advisor (advise).

They are front ends: they talk to a server through pymongo (`--uri`) or to a stopped data
directory through the embedded client (`--dbpath`), with pymongo's API in both cases, and never
reach into the engine. `register(subparsers)` adds them to the `ginkgodb` command line; each
subcommand's module has `configure(parser)` and `run(args, log) -> exit code`.
"""
from __future__ import annotations

import argparse
import importlib
from typing import Any

# subcommand -> (module, one-line help, description)
TOOLS = {
    "dump": ("dump", "write databases to a mongodump directory or archive (mongodump)",
             "Dump databases and collections to BSON files with metadata, laid out as mongodump "
             "writes them, or to one mongodump archive."),
    "restore": ("restore", "load a mongodump directory or archive (mongorestore)",
                "Restore a dump written by `ginkgodb dump` or by mongodump 100.x: data first, "
                "then each collection's indexes in one createIndexes."),
    "export": ("export", "write a collection as Extended JSON or CSV/TSV (mongoexport)",
               "Export one collection as Extended JSON v2 (one document per line, or an array) "
               "or as CSV/TSV."),
    "import": ("import_", "load Extended JSON or CSV/TSV into a collection (mongoimport)",
               "Import Extended JSON (one document per line, or an array) or CSV/TSV into one "
               "collection."),
    "advise": ("advise", "check schema-design rules against the data and workload (docs/advisor.md)",
               "Sample every collection, read the workload statistics ($indexStats, $queryStats, top, "
               "the profiler) and report findings by severity with capacity estimates; "
               "--shard-key analyses a candidate shard key."),
    "stat": ("stat", "live operation counters of a server (mongostat)",
             "Print a row of serverStatus counters every interval: operations per second, "
             "connections, resident memory."),
}


def register(subparsers: Any) -> None:
    """Add every tool as a subcommand; `args.tool_main(args)` runs the chosen one."""
    for command, (module, help_text, description) in TOOLS.items():
        parser = subparsers.add_parser(command, help=help_text, description=description,
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.set_defaults(tool_main=_runner(module))
        _configure(module, parser)


def _configure(module: str, parser: argparse.ArgumentParser) -> None:
    from .common import add_verbosity_options
    mod = importlib.import_module(f"{__name__}.{module}")
    mod.configure(parser)
    if getattr(mod, "CONNECTS", True):
        from .connect import add_connection_options
        add_connection_options(parser, dbpath=getattr(mod, "DBPATH", True))
    add_verbosity_options(parser)


def _runner(module: str):
    def main(args: argparse.Namespace) -> int:
        from .common import run_tool
        mod = importlib.import_module(f"{__name__}.{module}")
        return run_tool(mod.run, args)
    return main
