"""Sans-IO MongoDB wire protocol: bytes in, requests out; replies in, bytes out. No sockets.

Depends on nothing of ginkgodb but `errors` and `limits`. Any input either parses or raises ProtocolError.
"""
from __future__ import annotations

from ..limits import MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE, MAX_WRITE_BATCH_SIZE
from .compression import SUPPORTED as SUPPORTED_COMPRESSORS
from .compression import negotiate
from .connection import Request, WireConnection, decode_reply, parse_frame, raw_message, reply_more_to_come
from .errors import ProtocolError

__all__ = ["WireConnection", "Request", "ProtocolError", "parse_frame", "raw_message", "reply_more_to_come",
           "decode_reply", "negotiate",
           "SUPPORTED_COMPRESSORS", "MAX_BSON_OBJECT_SIZE", "MAX_MESSAGE_SIZE",
           "MAX_WRITE_BATCH_SIZE"]
