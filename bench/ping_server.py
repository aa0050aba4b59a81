"""The smallest server pymongo will talk to: it answers the handshake and `ping`, and `find`
and `insert` with canned replies (no storage), nothing else.

F3 (the wire floor) is pymongo's round-trip rate against this server: no Python server that
decodes a command and encodes a reply per message can beat it on the same machine. The canned
`find` (one document, the filter's `_id`) and `insert` (`n: 1`) replies measure what pymongo's
own find_one and insert_one cost beyond a ping (bench/wire_floor.py). Framing per docs: OP_MSG
(2013), its kind-0 section read (an insert's documents ride in a kind-1 section, unread);
OP_QUERY (2004) only for old clients' handshake.

Run: python -m bench.ping_server --port P
"""
from __future__ import annotations

import argparse
import asyncio
import struct

import bson
from bson.int64 import Int64

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
HEADER = struct.Struct("<iiii")
HANDSHAKE = {"ok": 1.0, "minWireVersion": 0, "maxWireVersion": 21, "maxBsonObjectSize": 16_777_216,
             "maxMessageSizeBytes": 48_000_000, "maxWriteBatchSize": 100_000}
HANDSHAKE_COMMANDS = {"hello", "ismaster", "isMaster"}


def reply_for(command: dict) -> dict:
    name = next(iter(command), "")
    if name in HANDSHAKE_COMMANDS:
        return {**HANDSHAKE, "isWritablePrimary" if name == "hello" else "ismaster": True,
                **({"helloOk": True} if command.get("helloOk") else {})}
    if name in {"ping", "endSessions"}:
        return {"ok": 1.0}
    if name == "find":
        filt = command.get("filter") or {}
        doc = {"_id": filt.get("_id"), "name": "doc", "n": 0}
        return {"cursor": {"firstBatch": [doc], "id": Int64(0), "ns": f"{command.get('$db')}.{command[name]}"},
                "ok": 1.0}
    if name == "insert":
        return {"n": 1, "ok": 1.0}
    return {"ok": 0.0, "errmsg": f"no such command: '{name}'", "code": 59, "codeName": "CommandNotFound"}


class PingProtocol(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= 16:
            length, request_id, _to, opcode = HEADER.unpack_from(self.buffer)
            if len(self.buffer) < length:
                return
            body = bytes(self.buffer[16:length])
            del self.buffer[:length]
            self._answer(request_id, opcode, body)

    def _answer(self, request_id: int, opcode: int, body: bytes) -> None:
        if opcode == OP_MSG:
            flags = struct.unpack_from("<I", body)[0]
            command = bson.decode(body[5:5 + struct.unpack_from("<i", body, 5)[0]])
            if flags & 2:  # moreToCome: the client expects no reply
                return
            payload = b"\x00\x00\x00\x00\x00" + bson.encode(reply_for(command))
            self.transport.write(HEADER.pack(16 + len(payload), 0, request_id, OP_MSG) + payload)
        elif opcode == OP_QUERY:
            name_end = body.index(b"\x00", 4)
            doc_start = name_end + 9
            command = bson.decode(body[doc_start:doc_start + struct.unpack_from("<i", body, doc_start)[0]])
            payload = struct.pack("<iqii", 8, 0, 0, 1) + bson.encode(reply_for(command.get("$query", command)))
            self.transport.write(HEADER.pack(16 + len(payload), 0, request_id, OP_REPLY) + payload)
        else:
            self.transport.close()


async def serve(port: int, host: str = "127.0.0.1") -> None:
    server = await asyncio.get_running_loop().create_server(PingProtocol, host, port)
    async with server:
        await server.serve_forever()


def main() -> None:
    p = argparse.ArgumentParser(description="Minimal ping-only MongoDB wire server (bench floor F3).")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    args = p.parse_args()
    try:
        asyncio.run(serve(args.port, args.host))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
