"""The `ginkgodb` command: `serve` (the wire-protocol server), `demo`, the tools (`dump`,
`restore`, `export`, `import`, `stat`: see ginkgodb/tools), `--version`."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Optional

from .version import MONGODB_VERSION, __version__

_DESCRIPTION = "ginkgodb: a MongoDB-compatible document database (embedded, or as a server)."


def _parser(serve_defaults: Optional[dict] = None) -> argparse.ArgumentParser:
    """The command line; `serve_defaults` (from --config) replace serve's own defaults."""
    from .server import config as C
    parser = argparse.ArgumentParser(prog="ginkgodb", description=_DESCRIPTION)
    parser.add_argument("--version", action="version",
                        version=f"ginkgodb {__version__} (MongoDB {MONGODB_VERSION} wire protocol)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the MongoDB wire-protocol server",
                           description="Serve the MongoDB wire protocol: pymongo, the Node.js driver "
                                       "and mongosh connect as to a MongoDB 7.0 standalone. Logs are "
                                       "JSON lines on stdout; SIGINT/SIGTERM stop it cleanly.")
    serve.add_argument("--config", "-f", metavar="FILE",
                       help="a mongod-style YAML configuration file (net, storage, security, systemLog, "
                            "operationProfiling, replication, setParameter); command-line options win")
    serve.add_argument("--logpath", metavar="FILE", help="write the log to FILE instead of stdout")
    serve.add_argument("--logappend", action="store_true",
                       help="with --logpath: append to the file instead of starting it anew")
    serve.add_argument("--port", type=int, default=C.DEFAULT_PORT,
                       help="TCP port to listen on; 0 picks a free one (default %(default)s)")
    bind = serve.add_mutually_exclusive_group()
    bind.add_argument("--bind", "--bind_ip", dest="bind", default=C.DEFAULT_BIND, metavar="ADDRS",
                      help="comma-separated addresses to listen on (default %(default)s, local only; "
                           "bind wider only with --auth: a warning is logged otherwise)")
    bind.add_argument("--bind_ip_all", action="store_true",
                      help="listen on every IPv4 address (0.0.0.0), as mongod's --bind_ip_all")
    serve.add_argument("--auth", action="store_true",
                       help="require clients to authenticate (SCRAM-SHA-256, SCRAM-SHA-1) and authorize every "
                            "command by the user's roles; with no user yet, a client on this host may create "
                            "the first one (the localhost exception)")
    serve.add_argument("--dbpath", default=C.DEFAULT_DBPATH,
                       help="data directory, created if missing; one server per directory "
                            "(default %(default)s)")
    serve.add_argument("--in-memory", action="store_true",
                       help="keep all data in memory instead of --dbpath (lost on exit)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                       help="least severe log lines to write; debug also logs every operation "
                            "(default %(default)s)")
    serve.add_argument("--slowms", type=int, default=C.DEFAULT_SLOW_MS, dest="slow_ms",
                       help="log operations slower than this many milliseconds (default %(default)s)")
    serve.add_argument("--quiet", action="store_true",
                       help="do not log connection opens, closes and client metadata")
    serve.add_argument("--noscripting", action="store_true",
                       help="disable server-side JavaScript ($where, $function, $accumulator, mapReduce)")
    serve.add_argument("--workers", type=int, default=1,
                       help="server processes sharing the data directory and the port (SO_REUSEPORT, Linux): "
                            "reads scale with the cores, writes take turns on the storage's write lock; "
                            "cursors and transactions are routed to the process that holds them "
                            "(default %(default)s)")
    serve.add_argument("--commandThreads", type=int, default=16, dest="command_threads", metavar="N",
                       help="threads per server process that run commands off the network loop "
                            "(default %(default)s)")
    serve.add_argument("--maxConns", type=int, default=C.DEFAULT_MAX_CONNECTIONS, dest="max_connections",
                       metavar="N", help="most simultaneous client connections; more are closed at once "
                                         "(default %(default)s, and at most 80%% of the open-file limit)")
    serve.add_argument("--diskReserveMB", type=int, default=C.DEFAULT_DISK_RESERVE_MB, dest="disk_reserve_mb",
                       metavar="MB", help="space kept preallocated for the data file, so that deletes and "
                                          "drops still run when the disk is full; writes that grow the data "
                                          "are refused (14031) below it (default %(default)s)")
    serve.add_argument("--replSet", dest="repl_set", metavar="NAME",
                       help="be a member of the replica set NAME (a set of one: run rs.initiate() once; "
                            "the configuration is kept in the data directory)")
    serve.add_argument("--etcd", dest="etcd", metavar="URL",
                       help="with --replSet: the etcd (e.g. http://127.0.0.1:2379) that holds the set's "
                            "configuration and elections, for a replica set of several members")
    serve.add_argument("--setParameter", dest="set_parameters", action="append", default=[],
                       metavar="NAME=VALUE",
                       help="set a server parameter at startup, as mongod's --setParameter (repeatable), "
                            "e.g. enableTestCommands=1 or ttlMonitorSleepSecs=5")
    serve.add_argument("--oplogSize", type=int, default=None, dest="oplog_size_mb", metavar="MB",
                       help="size of a new oplog in megabytes (default: 5%% of the free disk space, "
                            "between 990 MB and 50 GB, as mongod)")
    serve.add_argument("--eventLoop", "--event-loop", dest="event_loop", default="asyncio",
                       choices=["auto", "asyncio", "uvloop"],
                       help="the event loop: the standard library's asyncio, or uvloop (`auto`: uvloop "
                            "when installed) (default %(default)s)")
    serve.add_argument("--storageCompression", "--wiredTigerCollectionBlockCompressor",
                       dest="storage_compression", default="none",
                       choices=["none", "snappy", "zlib", "zstd"],
                       help="how new collections store their documents unless `create` says "
                            "(storageEngine: {ginkgodb: {compression}}); also spelled as mongod's "
                            "--wiredTigerCollectionBlockCompressor (default %(default)s)")
    tls = serve.add_argument_group("TLS (mongod's net.tls options)")
    tls.add_argument("--tlsMode", dest="tls_mode", default="disabled",
                     choices=["disabled", "allowTLS", "preferTLS", "requireTLS"],
                     help="disabled: plain connections only; allowTLS/preferTLS: TLS and plain on the same port; "
                          "requireTLS: TLS only (default %(default)s)")
    tls.add_argument("--tlsCertificateKeyFile", dest="tls_certificate_key_file", metavar="PEM",
                     help="the server's certificate and private key (one PEM file)")
    tls.add_argument("--tlsCertificateKeyFilePassword", dest="tls_certificate_key_file_password", metavar="PASSWORD",
                     help="the password of an encrypted key in --tlsCertificateKeyFile")
    tls.add_argument("--tlsCRLFile", dest="tls_crl_file", metavar="PEM",
                     help="with --tlsCAFile: certificate revocation lists; a revoked client certificate is refused")
    tls.add_argument("--tlsCAFile", dest="tls_ca_file", metavar="PEM",
                     help="certificate authority that client certificates must be signed by (then clients must "
                          "present one)")
    tls.add_argument("--tlsAllowConnectionsWithoutCertificates", dest="tls_allow_connections_without_certificates",
                     action="store_true", help="with --tlsCAFile: clients may connect without a certificate (one "
                                               "they present is still validated)")
    tls.add_argument("--tlsDisabledProtocols", dest="tls_disabled_protocols", default="", metavar="LIST",
                     help="comma-separated TLS versions to refuse: TLS1_0, TLS1_1, TLS1_2, TLS1_3 (or none)")
    if serve_defaults:
        serve.set_defaults(**serve_defaults)
    sub.add_parser("demo", help="a short tour of the embedded API (in memory)")
    from .tools import register as register_tools
    register_tools(sub)
    from .sharded_cluster import register as register_cluster
    register_cluster(sub)
    router = sub.add_parser("router", help="run a sharding router (as mongos) over shards registered in etcd",
                            description="A mongos-compatible router: drivers connect to it as to a sharded "
                                        "cluster; the shards, chunks and settings live in etcd "
                                        "(docs/design/sharding.md).")
    router.add_argument("--etcd", required=True, metavar="URL", help="the etcd holding the cluster's metadata")
    router.add_argument("--port", type=int, default=C.DEFAULT_PORT, help="TCP port (default %(default)s)")
    router.add_argument("--bind", default=C.DEFAULT_BIND, metavar="ADDR",
                        help="address to listen on (default %(default)s)")
    router.add_argument("--balancerIntervalSecs", type=float, default=10.0, dest="balancer_interval",
                        help="seconds between balancer rounds (default %(default)s)")
    router.add_argument("--orphanCleanupDelaySecs", type=float, default=2.0, dest="orphan_cleanup_delay",
                        help="seconds a migration's donor keeps the moved range for queries still reading it "
                             "(default %(default)s)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve" and args.config:
        from .server.config_file import ConfigFileError, load
        try:
            from_file = load(args.config)
        except ConfigFileError as exc:
            print(f"ginkgodb: {exc}", file=sys.stderr)
            return 2
        args = _parser(from_file).parse_args(argv)  # the file's values as defaults: the command line wins
    if args.command == "serve":
        return _serve(args, list(sys.argv if argv is None else ["ginkgodb", *argv]))
    if args.command == "demo":
        return _demo()
    if args.command == "router":
        from .router import run as run_router
        return run_router(args.etcd, args.port, args.bind.split(",")[0].strip(), args.balancer_interval,
                          args.orphan_cleanup_delay)
    if hasattr(args, "tool_main"):
        return args.tool_main(args)
    _parser().print_help()
    return 2


def _serve(args: argparse.Namespace, argv: list[str]) -> int:
    from .server import ServerConfig, run
    bind = ("0.0.0.0",) if args.bind_ip_all else tuple(a.strip() for a in args.bind.split(",") if a.strip())
    config = ServerConfig(port=args.port, bind=bind, dbpath=None if args.in_memory else args.dbpath,
                          log_level=args.log_level, slow_ms=args.slow_ms, quiet=args.quiet,
                          workers=args.workers, command_threads=max(1, args.command_threads),
                          max_connections=max(1, args.max_connections),
                          disk_reserve_mb=max(0, args.disk_reserve_mb), javascript_enabled=not args.noscripting,
                          argv=tuple(argv), repl_set=args.repl_set or None, etcd=args.etcd or None,
                          oplog_size_mb=args.oplog_size_mb,
                          storage_compression=args.storage_compression, event_loop=args.event_loop,
                          auth=args.auth, tls_mode=args.tls_mode,
                          tls_certificate_key_file=args.tls_certificate_key_file, tls_ca_file=args.tls_ca_file,
                          tls_certificate_key_file_password=args.tls_certificate_key_file_password,
                          tls_crl_file=args.tls_crl_file,
                          tls_allow_connections_without_certificates=args.tls_allow_connections_without_certificates,
                          tls_disabled_protocols=tuple(p.strip() for p in args.tls_disabled_protocols.split(",")
                                                       if p.strip()),
                          set_parameters=tuple(_name_value(p) for p in args.set_parameters),
                          log_path=args.logpath, log_append=args.logappend)
    return run(config)


def _name_value(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"ginkgodb: --setParameter takes NAME=VALUE, got {text!r}")
    return name, value


def _demo() -> int:
    """Insert, index, query and explain with the embedded client, in memory."""
    from . import MongoClient
    fruit = MongoClient().demo.fruit
    fruit.insert_many([{"_id": i, "name": n, "price": p}
                       for i, (n, p) in enumerate([("apple", 3), ("kiwi", 1), ("mango", 5), ("pear", 2)])])
    fruit.create_index("price")
    print("fruit under 3:", [d["name"] for d in fruit.find({"price": {"$lt": 3}}).sort("price")])
    print("plan:", fruit.find({"price": {"$lt": 3}}).explain()["queryPlanner"]["winningPlan"])
    fruit.update_one({"name": "kiwi"}, {"$inc": {"price": 1}})
    print("kiwi now:", fruit.find_one({"name": "kiwi"}, {"_id": 0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
