"""`create`'s `storageEngine` option: which codec a collection's records use.

`{ginkgodb: {compression: "zstd" | "snappy" | "zlib" | "none"}}` is ginkgodb's own form; mongod's
`{wiredTiger: {configString: "block_compressor=zstd"}}` means the same choice. Everything else a
WiredTiger config string can say (page sizes, prefix compression, LSM trees) has no counterpart
here and is refused rather than ignored (docs/compatibility.md).
"""
from __future__ import annotations

from typing import Any, Optional

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from .record_format import NONE, check_codec

OWN = "ginkgodb"
WIRED_TIGER = "wiredTiger"
_WT_COMPRESSORS = {"none": NONE, "": NONE, "snappy": "snappy", "zlib": "zlib", "zstd": "zstd"}


def requested_codec(options: dict) -> Optional[str]:
    """The codec `options["storageEngine"]` asks for (None: the server's default), or raise."""
    spec = options.get("storageEngine")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'create.storageEngine' is the wrong type "
                                                   f"'{type_name(spec)}', expected type 'object'")
    chosen: dict[str, str] = {}
    for engine, settings in spec.items():
        if not isinstance(settings, dict):
            raise CommandError(ErrorCode.BadValue, f"'storageEngine.{engine}' has to be an embedded document.")
        if engine == OWN:
            codec = _own_codec(settings)
        elif engine == WIRED_TIGER:
            codec = _wired_tiger_codec(settings)
        else:
            raise CommandError(ErrorCode.InvalidOptions,
                               f"{engine} is not a registered storage engine for this server")
        if codec is not None:
            chosen[engine] = codec
    if len(set(chosen.values())) > 1:
        raise CommandError(ErrorCode.InvalidOptions,
                           "storageEngine.ginkgodb.compression and the wiredTiger block_compressor disagree: "
                           f"{chosen[OWN]!r} and {chosen[WIRED_TIGER]!r}")
    return next(iter(chosen.values()), None)


def _own_codec(settings: dict) -> Optional[str]:
    for key in settings:
        if key != "compression":
            raise CommandError(ErrorCode.InvalidOptions,
                               f"'storageEngine.{OWN}.{key}' is not a ginkgodb storage option "
                               "(the one there is: compression)")
    if "compression" not in settings:
        return None
    return check_codec(settings["compression"], f"storageEngine.{OWN}.compression")


def _wired_tiger_codec(settings: dict) -> Optional[str]:
    for key in settings:
        if key != "configString":
            raise CommandError(ErrorCode.InvalidOptions,
                               f"'storageEngine.{WIRED_TIGER}.{key}' is not a WiredTiger collection option")
    config: Any = settings.get("configString", "")
    if not isinstance(config, str):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field 'storageEngine.{WIRED_TIGER}.configString' is "
                                                   f"the wrong type '{type_name(config)}', expected type 'string'")
    codec = None
    for item in filter(None, (part.strip() for part in config.split(","))):
        key, _, value = (s.strip() for s in item.partition("="))
        if key != "block_compressor":
            raise CommandError(ErrorCode.NotImplemented,
                               f"WiredTiger configuration '{key}' has no ginkgodb counterpart "
                               "(only block_compressor is understood)")
        if value not in _WT_COMPRESSORS:
            raise CommandError(ErrorCode.BadValue, f"unknown compressor '{value}' in "
                                                   f"storageEngine.{WIRED_TIGER}.configString")
        codec = _WT_COMPRESSORS[value]
    return codec
