"""MongoClient arguments -> where the data lives and which codec/read/write settings apply.

The embedded client takes pymongo's keyword options so code written for pymongo keeps working:
the ones that shape results (codec options, write/read concern, read preference) are honoured,
the ones about networks, pools, TLS and authentication are accepted and have no effect (there is
no network), and anything else raises ConfigurationError as pymongo does.
"""
from __future__ import annotations

import datetime
from collections import abc
from dataclasses import dataclass
from typing import Any, Optional

from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions, DatetimeConversion, TypeRegistry
from bson.raw_bson import RawBSONDocument
from pymongo.errors import ConfigurationError
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import _ServerMode, make_read_preference, read_pref_mode_from_name
from pymongo.write_concern import WriteConcern

MEMORY = ":memory:"
SCHEME = "ginkgodb://"

UUID_REPRESENTATIONS = {
    "unspecified": UuidRepresentation.UNSPECIFIED,
    "standard": UuidRepresentation.STANDARD,
    "pythonLegacy": UuidRepresentation.PYTHON_LEGACY,
    "javaLegacy": UuidRepresentation.JAVA_LEGACY,
    "csharpLegacy": UuidRepresentation.CSHARP_LEGACY,
}

# Options that only concern connections to a server: accepted (pymongo code passes them) and
# without effect here. Lower-case, as pymongo matches option names case-insensitively.
NETWORK_ONLY = frozenset({
    "appname", "authmechanism", "authmechanismproperties", "authoidcallowedhosts", "authsource",
    "auto_encryption_opts", "compressors", "connect", "connecttimeoutms", "directconnection",
    "driver", "enable_overload_retargeting", "enableoverloadretargeting", "event_listeners",
    "heartbeatfrequencyms", "loadbalanced", "localthresholdms", "max_adaptive_retries",
    "maxadaptiveretries", "maxconnecting", "maxidletimems", "maxpoolsize", "minpoolsize",
    "password", "replicaset", "retryreads", "retrywrites", "server_api", "server_selector",
    "servermonitoringmode", "serverselectiontimeoutms", "sockettimeoutms", "srv_host_validator",
    "srvallowedhostssuffix", "srvmaxhosts", "srvservicename", "ssl", "timeoutms", "tls",
    "tlsallowinvalidcertificates", "tlsallowinvalidhostnames", "tlscafile",
    "tlscertificatekeyfile", "tlscertificatekeyfilepassword", "tlscrlfile",
    "tlsdisableocspendpointcheck", "tlsinsecure", "username", "waitqueuemultiple",
    "waitqueuetimeoutms", "zlibcompressionlevel",
})
RESULT_SHAPING = frozenset({
    "document_class", "tz_aware", "tzinfo", "uuidrepresentation", "type_registry",
    "unicode_decode_error_handler", "datetime_conversion", "w", "wtimeoutms", "journal", "fsync",
    "readconcernlevel", "readpreference", "readpreferencetags", "maxstalenessseconds",
    "read_preference",
})


@dataclass(frozen=True)
class ClientSettings:
    """Everything a MongoClient needs once its arguments are checked."""

    path: Optional[str]            # data directory; None for an in-memory database
    codec_options: CodecOptions
    read_preference: _ServerMode
    write_concern: WriteConcern
    read_concern: ReadConcern
    options: dict                  # the validated keyword options, lower-cased keys


def parse_target(host: Any) -> Optional[str]:
    """`host` -> data directory, or None for memory. Server URIs are refused with a pointer."""
    if isinstance(host, (list, tuple)) and len(host) == 1:
        host = host[0]  # pymongo takes a list of hosts; an embedded client, one directory
    if host is None or host == MEMORY:
        return None
    if not isinstance(host, (str, bytes)) and hasattr(host, "__fspath__"):
        host = host.__fspath__()
    if not isinstance(host, str):
        raise TypeError(f"host must be a path (str or os.PathLike), not {type(host)}")
    if host.startswith(("mongodb://", "mongodb+srv://")):
        raise ConfigurationError(
            f"ginkgodb.MongoClient opens a data directory, not a server: {host!r}. "
            "To talk to a server (including `ginkgodb serve`), use pymongo.MongoClient(uri).")
    if host.startswith(SCHEME):
        host = host[len(SCHEME):]
        if host in ("", MEMORY):
            return None
    if not host:
        raise ConfigurationError("the data directory path is empty; use MongoClient() for memory")
    return host


def parse_settings(host: Any, document_class: Any, tz_aware: Any, type_registry: Any,
                   kwargs: dict[str, Any]) -> ClientSettings:
    """Validate MongoClient's arguments as pymongo does and build the settings."""
    opts: dict[str, Any] = {}
    for key, value in kwargs.items():
        lower = key.lower()
        if lower not in NETWORK_ONLY and lower not in RESULT_SHAPING:
            raise ConfigurationError(f"Unknown option: {key}.")
        opts[lower] = value
    if document_class is not None:
        opts["document_class"] = document_class
    if tz_aware is not None:
        opts["tz_aware"] = tz_aware
    if type_registry is not None:
        opts["type_registry"] = type_registry
    return ClientSettings(parse_target(host), codec_options_from(opts), read_preference_from(opts),
                          write_concern_from(opts), ReadConcern(opts.get("readconcernlevel")), opts)


def codec_options_from(opts: dict[str, Any]) -> CodecOptions:
    document_class = opts.get("document_class", dict)
    check_document_class(document_class)
    tz_aware = opts.get("tz_aware", False)
    if isinstance(tz_aware, str):
        if tz_aware not in ("true", "false"):
            raise ValueError("The value of tz_aware must be 'true' or 'false'")
        tz_aware = tz_aware == "true"
    if not isinstance(tz_aware, bool):
        raise TypeError(f"tz_aware must be True or False, was: tz_aware={tz_aware}")
    tzinfo = opts.get("tzinfo")
    if tzinfo is not None and not isinstance(tzinfo, datetime.tzinfo):
        raise TypeError(f"{tzinfo} must be an instance of datetime.tzinfo")
    registry = opts.get("type_registry")
    if registry is not None and not isinstance(registry, TypeRegistry):
        raise TypeError(f"type_registry must be an instance of {TypeRegistry}")
    return CodecOptions(
        document_class=document_class, tz_aware=tz_aware,
        uuid_representation=uuid_representation_from(opts.get("uuidrepresentation", "unspecified")),
        unicode_decode_error_handler=decode_error_handler_from(opts),
        tzinfo=tzinfo, type_registry=registry,
        datetime_conversion=datetime_conversion_from(opts.get("datetime_conversion")))


def check_document_class(value: Any) -> None:
    check = getattr(value, "__origin__", value)
    try:
        ok = issubclass(check, (abc.MutableMapping, RawBSONDocument))
    except TypeError:
        ok = False
    if not ok:
        raise TypeError("document_class must be dict, bson.son.SON, bson.raw_bson.RawBSONDocument, "
                        "or a subclass of collections.MutableMapping")


def uuid_representation_from(value: Any) -> int:
    if value in UUID_REPRESENTATIONS.values() and not isinstance(value, str):
        return value
    try:
        return UUID_REPRESENTATIONS[value]
    except (KeyError, TypeError):
        raise ValueError(f"{value} is an invalid UUID representation. Must be one of "
                         f"{tuple(UUID_REPRESENTATIONS)}") from None


def decode_error_handler_from(opts: dict[str, Any]) -> str:
    value = opts.get("unicode_decode_error_handler", "strict")
    if value not in ("strict", "replace", "ignore"):
        raise ValueError("Invalid Unicode decode error handler. Must be one of "
                         "('strict', 'replace', 'ignore')")
    return value


def datetime_conversion_from(value: Any) -> DatetimeConversion:
    if value is None:
        return DatetimeConversion.DATETIME
    if isinstance(value, DatetimeConversion):
        return value
    if isinstance(value, int):
        return DatetimeConversion(value)
    if isinstance(value, str):
        if value.isdigit():
            return DatetimeConversion(int(value))
        try:
            return DatetimeConversion[value]
        except KeyError:
            raise ValueError(f"{value} is an invalid DatetimeConversion value") from None
    raise TypeError(f"datetime_conversion must be a str or int, not {type(value)}")


def read_preference_from(opts: dict[str, Any]) -> _ServerMode:
    if "read_preference" in opts:
        pref = opts["read_preference"]
        if not isinstance(pref, _ServerMode):
            raise TypeError(f"{pref!r} is not a valid read preference.")
        return pref
    mode = read_pref_mode_from_name(opts.get("readpreference", "primary"))
    return make_read_preference(mode, opts.get("readpreferencetags"),
                                opts.get("maxstalenessseconds", -1))


def write_concern_from(opts: dict[str, Any]) -> WriteConcern:
    return WriteConcern(opts.get("w"), opts.get("wtimeoutms"), opts.get("journal"),
                        opts.get("fsync"))
