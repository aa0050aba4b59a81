"""TLS for the wire server, on the standard library's `ssl` (mongod's net.tls options).

`--tlsMode`: disabled (plain only), allowTLS and preferTLS (both, on the same port: the first
byte of a connection tells a TLS ClientHello, 0x16, from a MongoDB message header), requireTLS
(TLS only: a plain connection is closed). allowTLS and preferTLS differ on mongod only for
connections it opens itself (replication), which ginkgodb does not open. `--tlsCAFile` makes
the server ask for client certificates and validate them against that CA (required, unless
`--tlsAllowConnectionsWithoutCertificates`); `--tlsDisabledProtocols` takes mongod's names
(TLS1_0, TLS1_1, TLS1_2, TLS1_3, or none).

The first byte is peeked, never read, so a plain connection starts on an untouched stream and
a TLS one is upgraded in place (`loop.start_tls`).
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
from collections.abc import Callable
from typing import Any, Optional

from .logs import event

MODES = ("disabled", "allowTLS", "preferTLS", "requireTLS")
PROTOCOLS = {"TLS1_0": ssl.TLSVersion.TLSv1, "TLS1_1": ssl.TLSVersion.TLSv1_1,
             "TLS1_2": ssl.TLSVersion.TLSv1_2, "TLS1_3": ssl.TLSVersion.TLSv1_3}
#: a TLS record of type handshake: what every ClientHello starts with
_HANDSHAKE_RECORD = 0x16
HANDSHAKE_TIMEOUT = 60.0


class TLSSetupError(ValueError):
    """A TLS option that cannot work (the server does not start; exit code 2, as mongod)."""


def server_context(mode: str, certificate_key_file: Optional[str], ca_file: Optional[str] = None, *,
                   allow_without_certificates: bool = False,
                   disabled_protocols: tuple[str, ...] = (),
                   certificate_key_file_password: Optional[str] = None,
                   crl_file: Optional[str] = None) -> Optional[ssl.SSLContext]:
    """The server's SSLContext, or None when TLS is disabled. `certificate_key_file_password`
    decrypts an encrypted key; `crl_file` (with `ca_file`) refuses the client certificates it
    revokes."""
    if mode not in MODES:
        raise TLSSetupError(f"Unsupported value for tlsMode {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "disabled":
        return None
    if not certificate_key_file:
        raise TLSSetupError("need tlsCertificateKeyFile or certificateSelector when TLS is enabled")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # a password that is never asked for (an encrypted key without one fails, not prompts)
        context.load_cert_chain(certificate_key_file, password=certificate_key_file_password or "")
    except (OSError, ssl.SSLError) as exc:
        raise TLSSetupError(f"cannot read PEM key file {certificate_key_file}: {exc}") from None
    if ca_file:
        try:
            context.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise TLSSetupError(f"cannot read certificate authority file {ca_file}: {exc}") from None
        context.verify_mode = ssl.CERT_OPTIONAL if allow_without_certificates else ssl.CERT_REQUIRED
        if crl_file:
            try:
                context.load_verify_locations(cafile=crl_file)
            except (OSError, ssl.SSLError) as exc:
                raise TLSSetupError(f"cannot read certificate revocation list file {crl_file}: {exc}") from None
            context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    elif crl_file:
        raise TLSSetupError("tlsCRLFile requires tlsCAFile: revocation is checked on client certificates")
    _limit_protocols(context, disabled_protocols)
    return context


def _limit_protocols(context: ssl.SSLContext, disabled: tuple[str, ...]) -> None:
    names = [d for d in disabled if d.lower() != "none"]
    unknown = [d for d in names if d not in PROTOCOLS]
    if unknown:
        raise TLSSetupError(f"Unrecognized tlsProtocol: {unknown[0]}")
    if not disabled:
        return
    enabled = [v for name, v in PROTOCOLS.items() if name not in names]
    if not enabled:
        raise TLSSetupError("tlsDisabledProtocols disables every TLS version")
    order = list(PROTOCOLS.values())
    low, high = order.index(enabled[0]), order.index(enabled[-1])
    if len(enabled) != high - low + 1:
        raise TLSSetupError("tlsDisabledProtocols must leave a contiguous range of TLS versions enabled")
    context.minimum_version, context.maximum_version = enabled[0], enabled[-1]


def _peek(sock: socket.socket) -> Optional[bytes]:
    """The connection's first byte, left in the socket; None: nothing arrived yet."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return None


class TLSSniffer(asyncio.Protocol):
    """A connection's first protocol when TLS is on: waits for its first byte (without reading
    it), then hands the connection to the real protocol, in plain or upgraded to TLS."""

    def __init__(self, make_protocol: Callable[[], asyncio.Protocol], context: ssl.SSLContext,
                 require: bool, pending: Optional[set] = None) -> None:
        self.make_protocol = make_protocol
        self.context = context
        self.require = require
        #: the server's set of connections not yet handed over (closed when it stops)
        self.pending = pending if pending is not None else set()
        self.transport: Any = None
        #: a duplicate of the connection's descriptor: the loop refuses to watch the one its
        #: transport owns, and peeking through the duplicate reads the same socket
        self._dup: Optional[socket.socket] = None
        self._loop = asyncio.get_event_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.pending.add(self)
        transport.pause_reading()  # type: ignore[attr-defined]
        sock = transport.get_extra_info("socket")
        fd = sock.fileno() if sock is not None else -1
        if fd < 0:
            transport.close()
            return
        self._dup = socket.socket(fileno=os.dup(fd))
        self._loop.add_reader(self._dup.fileno(), self._readable)

    def abort(self) -> None:
        """The server stops: drop the connection before it was handed over."""
        self._stop_watching()
        self.pending.discard(self)
        if self.transport is not None:
            self.transport.abort()

    def _stop_watching(self) -> None:
        if self._dup is not None:
            self._loop.remove_reader(self._dup.fileno())
            self._dup.close()  # the duplicate only: the connection's own descriptor stays open
            self._dup = None

    def _readable(self) -> None:
        if self._dup is None:
            return
        try:
            first = _peek(self._dup)
        except OSError:
            first = b""
        if first is None:
            return  # spurious wake-up: keep watching
        self._stop_watching()
        if not first:
            self.pending.discard(self)
            self.transport.close()
            return
        peer = self.transport.get_extra_info("peername")
        if first[0] != _HANDSHAKE_RECORD:
            self.pending.discard(self)
            if self.require:
                event(logging.INFO, "NETWORK", 23007, "listener",
                      "Error receiving request from client. Ending connection from remote",
                      error="SSLHandshakeFailed: The server is configured to only allow SSL connections",
                      remote=_address(peer))
                self.transport.close()
                return
            protocol = self.make_protocol()
            self.transport.set_protocol(protocol)
            protocol.connection_made(self.transport)
            self.transport.resume_reading()
            return
        asyncio.ensure_future(self._upgrade(peer))

    async def _upgrade(self, peer: Any) -> None:
        pending = _Pending()
        try:
            tls = await self._loop.start_tls(self.transport, pending, self.context, server_side=True,
                                             ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
        except (TimeoutError, OSError, ssl.SSLError, ConnectionError) as exc:
            event(logging.INFO, "NETWORK", 22988, "listener",
                  "Error receiving request from client. Ending connection from remote",
                  error=f"SSLHandshakeFailed: {exc}", remote=_address(peer))
            self.pending.discard(self)
            self.transport.abort()
            return
        self.pending.discard(self)
        if tls is None or pending.lost:
            self.transport.abort()
            return
        protocol = self.make_protocol()
        tls.set_protocol(protocol)
        protocol.connection_made(tls)
        for data in pending.received:
            protocol.data_received(data)

    def data_received(self, data: bytes) -> None:  # reading is paused until the protocol is chosen
        pass

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._stop_watching()
        self.pending.discard(self)


class _Pending(asyncio.Protocol):
    """The protocol while the handshake completes: what arrives right after it (a client's
    first request often travels with its last handshake message) waits here for the real one."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.lost = False

    def data_received(self, data: bytes) -> None:
        self.received.append(data)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.lost = True


#: short names of subject attributes, as RFC 4514 (and mongod's user names) write them
_SHORT_NAMES = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O",
                "localityName": "L", "stateOrProvinceName": "ST", "countryName": "C",
                "streetAddress": "STREET", "domainComponent": "DC", "userId": "UID",
                "emailAddress": "emailAddress", "serialNumber": "serialNumber", "title": "title",
                "givenName": "GN", "surname": "SN", "initials": "initials", "pseudonym": "pseudonym"}
_ESCAPED = {",", "+", "\"", "\\", "<", ">", ";"}


def _escape_value(value: str) -> str:
    out = "".join("\\" + ch if ch in _ESCAPED else ch for ch in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def peer_subject(transport: Any) -> Optional[str]:
    """The validated client certificate's subject as an RFC 4514 string ("CN=app,OU=x,O=y",
    last RDN first), the user name MONGODB-X509 authenticates as; None without one."""
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is None:
        return None
    cert = ssl_object.getpeercert()
    subject = cert.get("subject") if cert else None
    if not subject:
        return None
    rdns = ["+".join(f"{_SHORT_NAMES.get(k, k)}={_escape_value(v)}" for k, v in rdn) for rdn in subject]
    return ",".join(reversed(rdns))


def _address(peer: Any) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)


__all__ = ["MODES", "PROTOCOLS", "TLSSetupError", "TLSSniffer", "peer_subject", "server_context"]
