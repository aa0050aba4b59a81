"""`ginkgodb serve --config FILE`: mongod's YAML configuration layout, for what ginkgodb serves.

Each supported key maps to the `serve` option of the same meaning; options given on the command
line win over the file, as with mongod. A key ginkgodb does not know, or knows and does not do,
is an error naming it (never ignored): a mongod configuration mostly works, and what does not
says so at start-up.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import yaml


class ConfigFileError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigFileError(f"{key} must be true or false, not {value!r}")
    return value


def _int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigFileError(f"{key} must be an integer, not {value!r}")
    return value


def _str(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigFileError(f"{key} must be a non-empty string, not {value!r}")
    return value


def _authorization(key: str, value: Any) -> bool:
    if value not in ("enabled", "disabled"):
        raise ConfigFileError(f"{key} must be 'enabled' or 'disabled', not {value!r}")
    return value == "enabled"


def _engine(key: str, value: Any) -> bool:
    if value not in ("inMemory", "wiredTiger", "lmdb"):
        raise ConfigFileError(f"{key} must be inMemory, or wiredTiger/lmdb (a data directory), not {value!r}")
    return value == "inMemory"


def _destination(key: str, value: Any) -> str:
    if value not in ("file", "stdout"):
        raise ConfigFileError(f"{key} must be 'file' or 'stdout' (syslog is not supported), not {value!r}")
    return str(value)


def _verbosity(key: str, value: Any) -> str:
    return "debug" if _int(key, value) > 0 else "info"


def _profiling_mode(key: str, value: Any) -> str:
    if value != "off":
        raise ConfigFileError(f"{key}: only 'off' is supported at start-up; set a profiling level per "
                              "database with the profile command")
    return value


def _set_parameters(key: str, value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        raise ConfigFileError(f"{key} must be a mapping of parameter names to values")
    return [f"{name}={str(v).lower() if isinstance(v, bool) else v}" for name, v in value.items()]


def _compressor(key: str, value: Any) -> str:
    if value not in ("none", "snappy", "zlib", "zstd"):
        raise ConfigFileError(f"{key} must be none, snappy, zlib or zstd, not {value!r}")
    return str(value)


#: dotted key -> (serve option's destination, reader)
KEYS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "net.port": ("port", _int),
    "net.bindIp": ("bind", _str),
    "net.bindIpAll": ("bind_ip_all", _bool),
    "net.maxIncomingConnections": ("max_connections", _int),
    "net.tls.mode": ("tls_mode", _str),
    "net.tls.certificateKeyFile": ("tls_certificate_key_file", _str),
    "net.tls.CAFile": ("tls_ca_file", _str),
    "net.tls.CRLFile": ("tls_crl_file", _str),
    "net.tls.certificateKeyFilePassword": ("tls_certificate_key_file_password", _str),
    "net.tls.allowConnectionsWithoutCertificates": ("tls_allow_connections_without_certificates", _bool),
    "net.tls.disabledProtocols": ("tls_disabled_protocols", _str),
    "storage.dbPath": ("dbpath", _str),
    "storage.wiredTiger.collectionConfig.blockCompressor": ("storage_compression", _compressor),
    "storage.ginkgodb.compression": ("storage_compression", _compressor),
    "storage.engine": ("in_memory", _engine),
    "security.authorization": ("auth", _authorization),
    "security.javascriptEnabled": ("javascript_enabled", _bool),
    "systemLog.verbosity": ("log_level", _verbosity),
    "systemLog.quiet": ("quiet", _bool),
    "systemLog.destination": ("log_destination", _destination),
    "systemLog.path": ("logpath", _str),
    "systemLog.logAppend": ("logappend", _bool),
    "operationProfiling.slowOpThresholdMs": ("slow_ms", _int),
    "operationProfiling.mode": ("profiling_mode", _profiling_mode),
    "replication.replSetName": ("repl_set", _str),
    "replication.oplogSizeMB": ("oplog_size_mb", _int),
    "setParameter": ("set_parameters", _set_parameters),
}


def load(path: str) -> dict[str, Any]:
    """The serve options a configuration file sets (argparse destinations -> values)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = yaml.safe_load(f)
    except OSError as exc:
        raise ConfigFileError(f"cannot read the configuration file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"Error parsing YAML config file {path}: {exc}") from None
    if tree is None:
        return {}
    if not isinstance(tree, Mapping):
        raise ConfigFileError(f"Error parsing YAML config file {path}: the top level must be a mapping")
    out: dict[str, Any] = {}
    for key, value in _flatten(tree):
        known = KEYS.get(key)
        if known is None:
            raise ConfigFileError(f"Error parsing YAML config file {path}: Unrecognized option: {key}")
        dest, read = known
        try:
            out[dest] = read(key, value)
        except ConfigFileError as exc:
            raise ConfigFileError(f"Error parsing YAML config file {path}: {exc}") from None
    if out.pop("log_destination", "stdout") == "file" and "logpath" not in out:
        raise ConfigFileError(f"Error parsing YAML config file {path}: systemLog.path is required when "
                              "systemLog.destination is file")
    if "javascript_enabled" in out:
        out["noscripting"] = not out.pop("javascript_enabled")
    out.pop("profiling_mode", None)
    return out


def _flatten(tree: Mapping, prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and key != "setParameter":
            items.extend(_flatten(value, key + "."))
        else:
            items.append((key, value))
    return items
