"""Certificates for the sandbox: a CA, the API server's serving cert, and client identities.

Client certificates are real authentication: the API server trusts our CA, takes the user from
the certificate's CN and the groups from its O fields, and RBAC then decides what they may do.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import ConfigError

try:  # an extra: only a running sandbox makes certificates
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    _MISSING: ImportError | None = None
except ImportError as exc:  # pragma: no cover - depends on how the package was installed
    _MISSING = exc  # raised when a sandbox starts, not at import: --help lists every command


def require_extra() -> None:
    """Fail with the install line, before minutes of building, when the extra is missing."""
    if _MISSING is not None:
        raise ConfigError(
            "starting a sandbox needs the 'sandbox' extra (cryptography, for its certificates):"
            " pip install 'kueue-gitops[sandbox]'"
        ) from _MISSING


_VALIDITY = datetime.timedelta(days=365)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


class CertificateAuthority:
    """A throwaway CA whose files live in one folder of the sandbox."""

    def __init__(self, folder: Path) -> None:
        require_extra()
        self.folder = folder
        self.cert_path = folder / "ca.crt"
        key_path = folder / "ca.key"
        if self.cert_path.exists():
            self._key = serialization.load_pem_private_key(key_path.read_bytes(), None)
            self._cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())
            return
        folder.mkdir(parents=True, exist_ok=True)
        self._key = _key()
        now = datetime.datetime.now(datetime.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(_name("kueue-gitops-sandbox-ca"))
            .issuer_name(_name("kueue-gitops-sandbox-ca"))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        key_path.write_bytes(_key_pem(self._key))
        self.cert_path.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        stem: str,
        common_name: str,
        *,
        organizations: tuple[str, ...] = (),
        server: bool = False,
    ) -> KeyPair:
        """Sign a serving (localhost, 127.0.0.1) or client certificate; reuse it if present."""
        pair = KeyPair(self.folder / f"{stem}.crt", self.folder / f"{stem}.key")
        if pair.cert.exists():
            return pair
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organizations))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        cert = builder.sign(self._key, hashes.SHA256())  # type: ignore[arg-type]
        pair.key.write_bytes(_key_pem(key))
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return pair


def service_account_keys(folder: Path) -> KeyPair:
    """The key the API server signs service-account tokens with, and its public half.

    The `cert` of the returned pair is the PEM public key (the API server verifies with it).
    """
    require_extra()
    pair = KeyPair(folder / "service-account.pub", folder / "service-account.key")
    if not pair.key.exists():
        key = _key()
        pair.key.write_bytes(_key_pem(key))
        pair.cert.write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    return pair
