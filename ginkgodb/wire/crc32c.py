"""CRC-32C (Castagnoli), the OP_MSG checksum.

No client we know sets the checksum flag, so a table-driven pure-Python CRC is fast enough and
saves a native dependency.
"""
from __future__ import annotations


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C of `data` (continuing from `crc`)."""
    table = _TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
