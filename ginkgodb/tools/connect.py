"""Where the tools read and write: a server (`--uri`, pymongo) or a data directory (`--dbpath`).

Both give a pymongo-shaped client, so the tools use one code path: `pymongo.MongoClient` for a
server, `ginkgodb.client.MongoClient(path)` for a stopped data directory (one process may hold a
data directory at a time, so a directory a server is using is refused by the storage layer).
Credentials and TLS come from the URI or from mongodump's flags, which are passed to pymongo
as keyword options (an option given both ways is refused rather than guessed).
"""
from __future__ import annotations

import argparse
import getpass
import os
import sys
from dataclasses import dataclass
from typing import Any

from .log import Log, ToolError

DEFAULT_URI = "mongodb://localhost:27017"

# flag (argparse dest) -> pymongo keyword
_URI_FLAGS = {
    "username": "username",
    "password": "password",
    "authenticationDatabase": "authSource",
    "authenticationMechanism": "authMechanism",
    "tls": "tls",
    "tlsCAFile": "tlsCAFile",
    "tlsCertificateKeyFile": "tlsCertificateKeyFile",
    "tlsCertificateKeyFilePassword": "tlsCertificateKeyFilePassword",
    "tlsAllowInvalidCertificates": "tlsAllowInvalidCertificates",
    "tlsAllowInvalidHostnames": "tlsAllowInvalidHostnames",
}


def add_connection_options(parser: argparse.ArgumentParser, *, dbpath: bool = True) -> None:
    group = parser.add_argument_group("connection options")
    group.add_argument("--uri", metavar="URI",
                       help="mongodb:// connection string of the server (default "
                            f"{DEFAULT_URI} when neither --uri, --host nor --dbpath is given)")
    group.add_argument("--host", metavar="HOST[:PORT]", help="server to connect to")
    group.add_argument("--port", type=int, help="server port")
    if dbpath:
        group.add_argument("--dbpath", metavar="DIR",
                           help="work directly on a ginkgodb data directory that no server is "
                                "using, through the embedded client")
    auth = parser.add_argument_group("authentication and TLS options (server only)")
    auth.add_argument("-u", "--username", help="user name for authentication")
    auth.add_argument("-p", "--password",
                      help="password (asked for on the terminal when --username is given alone)")
    auth.add_argument("--authenticationDatabase", metavar="DB",
                      help="database that holds the user's credentials")
    auth.add_argument("--authenticationMechanism", metavar="MECH",
                      help="SCRAM-SHA-1, SCRAM-SHA-256, MONGODB-X509, PLAIN, GSSAPI, MONGODB-AWS")
    auth.add_argument("--tls", action="store_true", default=None, help="connect with TLS")
    auth.add_argument("--tlsCAFile", metavar="FILE", help="certificate authorities to trust")
    auth.add_argument("--tlsCertificateKeyFile", metavar="FILE",
                      help="client certificate and key (PEM)")
    auth.add_argument("--tlsCertificateKeyFilePassword", metavar="PASSWORD",
                      help="password of the client key")
    auth.add_argument("--tlsAllowInvalidCertificates", action="store_true", default=None,
                      help="do not check the server's certificate")
    auth.add_argument("--tlsAllowInvalidHostnames", action="store_true", default=None,
                      help="do not check the server certificate's host name")


@dataclass
class Connection:
    client: Any
    target: str            # what log lines call it: the URI's hosts or the data directory
    embedded: bool

    def server_version(self) -> str:
        try:
            return str(self.client.admin.command("buildInfo").get("version", ""))
        except Exception:       # a server that refuses buildInfo still gets dumped
            return ""

    def close(self) -> None:
        self.client.close()


def uri_options(args: argparse.Namespace) -> dict[str, Any]:
    """pymongo keyword options given as flags."""
    options = {}
    for flag, keyword in _URI_FLAGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            options[keyword] = value
    if "username" in options and "password" not in options and sys.stdin.isatty():
        options["password"] = getpass.getpass("Enter password: ")
    return options


def server_uri(args: argparse.Namespace) -> str:
    uri = getattr(args, "uri", None)
    host, port = getattr(args, "host", None), getattr(args, "port", None)
    if uri:
        if host or port:
            raise ToolError("illegal argument combination: cannot specify --host or --port "
                            "with --uri")
        return uri
    host = host or "localhost"
    if port:
        host = f"{host.rsplit(':', 1)[0] if host.count(':') == 1 else host}:{port}"
    return f"mongodb://{host}"


def connect(args: argparse.Namespace, log: Log, *, create: bool = False) -> Connection:
    """Open what the arguments name; `create` allows a new data directory (restore, import)."""
    dbpath = getattr(args, "dbpath", None)
    if dbpath:
        if getattr(args, "uri", None) or getattr(args, "host", None) or getattr(args, "port", None):
            raise ToolError("illegal argument combination: --dbpath cannot be used with "
                            "--uri, --host or --port")
        given = [f for f in _URI_FLAGS if getattr(args, f, None) is not None]
        if given:
            raise ToolError(f"--{given[0]} cannot be used with --dbpath (a data directory has "
                            "no authentication or TLS)")
        if not os.path.isdir(dbpath) and not create:
            raise ToolError(f"--dbpath {dbpath!r} is not a directory")
        from ..client import MongoClient
        try:
            client = MongoClient(dbpath)
            client.admin.command("ping")
        except Exception as exc:
            raise ToolError(f"cannot open data directory {dbpath!r}: {exc}") from None
        log.info(f"opened data directory {dbpath}")
        return Connection(client, dbpath, True)
    import pymongo
    from pymongo.errors import ConfigurationError, InvalidURI, PyMongoError
    uri = server_uri(args)
    try:
        options = uri_options(args)
        if "serverselectiontimeoutms" not in uri.lower():
            options["serverSelectionTimeoutMS"] = 30_000
        client = pymongo.MongoClient(uri, **options)
    except (ConfigurationError, InvalidURI, TypeError, ValueError) as exc:
        raise ToolError(f"error parsing connection options: {exc}") from None
    try:
        client.admin.command("ping")
    except PyMongoError as exc:
        client.close()
        raise ToolError(f"error connecting to host: {exc}") from None
    target = ",".join(f"{h}:{p}" for h, p in client.topology_description.server_descriptions())
    log.info(f"connected to: {_redact(uri)}")
    return Connection(client, target or _redact(uri), False)


def _redact(uri: str) -> str:
    """The URI without a password, for log lines."""
    scheme, sep, rest = uri.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return uri
    creds, _, hosts = rest.partition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:[**REDACTED**]@{hosts}"

