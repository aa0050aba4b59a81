"""Test certificates made with `cryptography`: a CA, a server certificate for 127.0.0.1 and
localhost, a client certificate signed by the CA, and one signed by another CA."""
from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, key, issuer_name, issuer_key, *, ca: bool = False, server: bool = False):
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert, key=None) -> bytes:
    out = cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        out += key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return out


def _encrypted_pem(cert, key, password: bytes) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(password))


def _crl(revoked_cert, issuer, issuer_key) -> bytes:
    now = datetime.datetime.now(datetime.UTC)
    entry = (x509.RevokedCertificateBuilder().serial_number(revoked_cert.serial_number)
             .revocation_date(now - datetime.timedelta(hours=1)).build())
    crl = (x509.CertificateRevocationListBuilder().issuer_name(issuer.subject)
           .last_update(now - datetime.timedelta(hours=1)).next_update(now + datetime.timedelta(days=2))
           .add_revoked_certificate(entry).sign(issuer_key, hashes.SHA256()))
    return crl.public_bytes(serialization.Encoding.PEM)


def make_pki(out: Path) -> dict[str, str]:
    """ca.pem; server.pem (cert+key); client.pem (signed by the CA); stranger.pem (a client
    signed by another CA); server-encrypted.pem (its key encrypted with the password "pem-pw");
    revoked.pem (a client signed by the CA) and crl.pem (the CA's list revoking it). Returns
    their paths by name."""
    ca_key, other_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("ginkgodb test CA", ca_key, _name("ginkgodb test CA"), ca_key, ca=True)
    other = _cert("another CA", other_key, _name("another CA"), other_key, ca=True)
    files = {"ca": _pem(ca)}
    for name, issuer, issuer_key, server in (("server", ca, ca_key, True), ("client", ca, ca_key, False),
                                             ("stranger", other, other_key, False)):
        key = ec.generate_private_key(ec.SECP256R1())
        files[name] = _pem(_cert(name, key, issuer.subject, issuer_key, server=server), key)
    key = ec.generate_private_key(ec.SECP256R1())
    files["server-encrypted"] = _encrypted_pem(_cert("server", key, ca.subject, ca_key, server=True), key, b"pem-pw")
    key = ec.generate_private_key(ec.SECP256R1())
    revoked = _cert("revoked", key, ca.subject, ca_key)
    files["revoked"] = _pem(revoked, key)
    files["crl"] = _crl(revoked, ca, ca_key)
    paths = {}
    for name, data in files.items():
        (out / f"{name}.pem").write_bytes(data)
        paths[name] = str(out / f"{name}.pem")
    return paths
