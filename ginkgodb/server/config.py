"""Server settings: one frozen value built by the CLI (or by tests) and read everywhere else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..limits import DISK_RESERVE_MB

DEFAULT_PORT = 27017
DEFAULT_BIND = "127.0.0.1"
DEFAULT_DBPATH = "./ginkgo-data"
DEFAULT_SLOW_MS = 100
#: mongod's default --maxConns; the effective limit is also capped at 80% of the open-file limit
DEFAULT_MAX_CONNECTIONS = 1_000_000
#: received, unanswered request bytes one connection may have buffered before the server stops
#: reading from it (a single larger message may still complete: it is capped by the codec at
#: maxMessageSizeBytes)
DEFAULT_MAX_PIPELINED_BYTES = 16 * 1024 * 1024
#: space kept preallocated past the data so that deletes and drops run on a full disk
DEFAULT_DISK_RESERVE_MB = DISK_RESERVE_MB


@dataclass(frozen=True)
class ServerConfig:
    port: int = DEFAULT_PORT
    bind: tuple[str, ...] = (DEFAULT_BIND,)
    dbpath: Optional[str] = DEFAULT_DBPATH   # None: in-memory (nothing survives a restart)
    log_level: str = "info"
    slow_ms: int = DEFAULT_SLOW_MS
    quiet: bool = False
    log_path: Optional[str] = None            # --logpath: the log goes to this file, not stdout
    log_append: bool = False                  # --logappend
    command_threads: int = 16                # --commandThreads: threads running commands off the event loop
    workers: int = 1                         # --workers: server processes on one port (docs/design/workers.md)
    event_loop: str = "asyncio"              # --eventLoop asyncio|uvloop|auto (event_loop.py)
    max_connections: int = DEFAULT_MAX_CONNECTIONS   # --maxConns
    max_pipelined_bytes: int = DEFAULT_MAX_PIPELINED_BYTES
    disk_reserve_mb: int = DEFAULT_DISK_RESERVE_MB   # --diskReserveMB (LMDB only)
    shutdown_grace: float = 15.0             # seconds in-flight commands get on shutdown
    javascript_enabled: bool = True          # security.javascriptEnabled (--noscripting: False)
    repl_set: Optional[str] = None           # --replSet: the replica set this server is a member of
    etcd: Optional[str] = None               # --etcd: the etcd of a replica set of several members
    set_parameters: tuple[tuple[str, str], ...] = ()   # --setParameter name=value, as given
    oplog_size_mb: Optional[int] = None      # --oplogSize: a new oplog's size (None: mongod's default)
    storage_compression: str = "none"        # --storageCompression: the codec of new collections
    auth: bool = False                       # --auth: clients authenticate, commands are authorized
    tls_mode: str = "disabled"               # --tlsMode disabled|allowTLS|preferTLS|requireTLS (tls.py)
    tls_certificate_key_file: Optional[str] = None   # --tlsCertificateKeyFile: the server's PEM (cert + key)
    tls_ca_file: Optional[str] = None        # --tlsCAFile: validates client certificates
    tls_allow_connections_without_certificates: bool = False
    tls_disabled_protocols: tuple[str, ...] = ()     # --tlsDisabledProtocols TLS1_0,TLS1_1,...
    tls_certificate_key_file_password: Optional[str] = None  # --tlsCertificateKeyFilePassword
    tls_crl_file: Optional[str] = None       # --tlsCRLFile: revoked client certificates
    argv: tuple[str, ...] = field(default=())

    @property
    def in_memory(self) -> bool:
        return self.dbpath is None

    def tls_context(self) -> Any:
        """The server's ssl.SSLContext (None: TLS disabled); raises tls.TLSSetupError."""
        from .tls import server_context
        return server_context(self.tls_mode, self.tls_certificate_key_file, self.tls_ca_file,
                              allow_without_certificates=self.tls_allow_connections_without_certificates,
                              disabled_protocols=self.tls_disabled_protocols,
                              certificate_key_file_password=self.tls_certificate_key_file_password,
                              crl_file=self.tls_crl_file)

    def storage_options(self) -> dict[str, Any]:
        """Keyword arguments for Engine.open."""
        if self.in_memory:
            return {"compression": self.storage_compression}
        return {"reserve_bytes": self.disk_reserve_mb * 1024 * 1024, "compression": self.storage_compression}

    def parsed_options(self) -> dict[str, Any]:
        """getCmdLineOpts' `parsed`, in mongod's option tree."""
        storage: dict[str, Any] = {"engine": "memory"} if self.in_memory else {"dbPath": self.dbpath}
        storage["ginkgodb"] = {"compression": self.storage_compression}
        net: dict[str, Any] = {"bindIp": ",".join(self.bind), "port": self.port,
                               "maxIncomingConnections": self.max_connections}
        if self.tls_mode != "disabled":
            net["tls"] = {"mode": self.tls_mode, "certificateKeyFile": self.tls_certificate_key_file,
                          **({"CAFile": self.tls_ca_file} if self.tls_ca_file else {}),
                          **({"CRLFile": self.tls_crl_file} if self.tls_crl_file else {}),
                          # mongod shows that a password was given, never the password
                          **({"certificateKeyFilePassword": "<password>"}
                             if self.tls_certificate_key_file_password else {}),
                          **({"allowConnectionsWithoutCertificates": True}
                             if self.tls_allow_connections_without_certificates else {}),
                          **({"disabledProtocols": ",".join(self.tls_disabled_protocols)}
                             if self.tls_disabled_protocols else {})}
        parsed: dict[str, Any] = {
            "net": net,
            "operationProfiling": {"slowOpThresholdMs": self.slow_ms},
            "security": {"javascriptEnabled": self.javascript_enabled,
                         **({"authorization": "enabled"} if self.auth else {})},
            **({"replication": {"oplogSizeMB": self.oplog_size_mb}} if self.oplog_size_mb else {}),
        }
        if self.repl_set:
            parsed.setdefault("replication", {})["replSet"] = self.repl_set
        if self.set_parameters:
            parsed["setParameter"] = dict(self.set_parameters)
        parsed["storage"] = storage
        parsed["systemLog"] = {"quiet": self.quiet, "verbosity": 1 if self.log_level == "debug" else 0,
                               **({"destination": "file", "path": self.log_path, "logAppend": self.log_append}
                                  if self.log_path else {})}
        return parsed
