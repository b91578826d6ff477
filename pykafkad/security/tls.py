"""A TLS listener's server context from Kafka's ssl.* settings (PEM or PKCS12 key and trust
stores, files or inline PEM), and the principal a client certificate maps to."""

from __future__ import annotations

import os
import re
import ssl
import tempfile

from pykafkad.config.types import ConfigError
from pykafkad.security.principal import ANONYMOUS, KafkaPrincipal
from pykafkad.security.settings import csv, listener_setting

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                "required": ssl.CERT_REQUIRED}


def _pkcs12(path: str, password: str | None):
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:  # pragma: no cover - cryptography is a dependency
        raise ConfigError("PKCS12 stores need the cryptography package",
                          "ssl.keystore.type") from None
    with open(path, "rb") as f:
        data = f.read()
    return pkcs12.load_key_and_certificates(data, password.encode() if password else None)


def _pem(cert) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding

    return cert.public_bytes(Encoding.PEM)


def _load_keystore(ctx: ssl.SSLContext, get) -> None:
    kind = (get("ssl.keystore.type") or "JKS").upper()
    location = get("ssl.keystore.location")
    chain, key = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
    key_password = get("ssl.key.password")
    if kind == "PEM" and chain and key:
        _load_pem_text(ctx, chain + "\n" + key, key_password)
    elif kind == "PEM" and location:
        ctx.load_cert_chain(location, password=key_password)
    elif kind == "PKCS12" and location:
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption,
            Encoding,
            PrivateFormat,
        )

        store_password = get("ssl.keystore.password")
        pkey, cert, extra = _pkcs12(location, store_password)
        enc = BestAvailableEncryption(b"k")  # the temporary file holds no clear key
        text = (pkey.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, enc)
                + _pem(cert) + b"".join(_pem(c) for c in extra or ()))
        _load_pem_text(ctx, text.decode(), "k")
    elif kind == "JKS":
        raise ConfigError("JKS key stores are not read by pykafkad (no Python library reads "
                          "them): use ssl.keystore.type PEM or PKCS12", "ssl.keystore.type")
    else:
        raise ConfigError("An SSL listener needs a key store: ssl.keystore.location, or "
                          "ssl.keystore.certificate.chain and ssl.keystore.key with type PEM",
                          "ssl.keystore.location")


def _load_pem_text(ctx: ssl.SSLContext, text: str, password: str | None) -> None:
    """ssl loads a chain only from a file: a private temporary one, removed at once."""
    fd, path = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        ctx.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def _load_truststore(ctx: ssl.SSLContext, get) -> None:
    kind = (get("ssl.truststore.type") or "JKS").upper()
    location, inline = get("ssl.truststore.location"), get("ssl.truststore.certificates")
    if kind == "PEM" and inline:
        ctx.load_verify_locations(cadata=inline)
    elif kind == "PEM" and location:
        ctx.load_verify_locations(cafile=location)
    elif kind == "PKCS12" and location:
        from cryptography.hazmat.primitives.serialization import pkcs12

        with open(location, "rb") as f:
            data = f.read()
        password = get("ssl.truststore.password")
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
        certs = [c.certificate for c in store.additional_certs]
        if store.cert is not None:
            certs.append(store.cert.certificate)
        ctx.load_verify_locations(cadata=b"".join(_pem(c) for c in certs).decode())
    elif location:
        raise ConfigError("JKS trust stores are not read by pykafkad: use PEM or PKCS12",
                          "ssl.truststore.type")


def server_context(config, listener: str) -> ssl.SSLContext:
    def get(key: str) -> str | None:
        return listener_setting(config, listener, key)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = [_PROTOCOLS[p] for p in csv(get("ssl.enabled.protocols")) if p in _PROTOCOLS]
    if not versions:
        raise ConfigError("ssl.enabled.protocols names no protocol pykafkad serves (TLSv1.2, "
                          "TLSv1.3)", "ssl.enabled.protocols")
    ctx.minimum_version, ctx.maximum_version = min(versions), max(versions)
    _load_keystore(ctx, get)
    client_auth = (get("ssl.client.auth") or "none").lower()
    if client_auth not in _CLIENT_AUTH:
        raise ConfigError(f"Invalid value {client_auth} for configuration ssl.client.auth",
                          "ssl.client.auth")
    ctx.verify_mode = _CLIENT_AUTH[client_auth]
    if client_auth != "none":
        _load_truststore(ctx, get)
    return ctx


# --- principals from certificates (Kafka's DefaultKafkaPrincipalBuilder + SslPrincipalMapper)

_ATTR_NAMES = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O",
               "localityName": "L", "stateOrProvinceName": "ST", "countryName": "C",
               "streetAddress": "STREET", "domainComponent": "DC", "userId": "UID"}
_RULE = re.compile(r"\s*RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?)\s*(?:,|$)|\s*DEFAULT\s*(?:,|$)")


def subject_dn(cert: dict) -> str:
    """The subject as Java's X500Principal.getName() writes it (RFC 2253: last RDN first)."""
    rdns = []
    for rdn in reversed(cert.get("subject", ())):
        rdns.append("+".join(f"{_ATTR_NAMES.get(k, k)}={_escape(v)}" for k, v in rdn))
    return ",".join(rdns)


def _escape(value: str) -> str:
    out = re.sub(r'([,+"\\<>;])', r"\\\1", value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def parse_mapping_rules(text: str) -> list[tuple[re.Pattern, str, str] | None]:
    """ssl.principal.mapping.rules: ``RULE:pattern/replacement/[LU]`` entries or DEFAULT."""
    rules, pos, text = [], 0, text.strip()
    while pos < len(text):
        m = _RULE.match(text, pos)
        if not m or m.end() == pos:
            raise ConfigError(f"Invalid rule: {text[pos:]}", "ssl.principal.mapping.rules")
        if m.group(1) is None:
            rules.append(None)
        else:
            rules.append((re.compile(m.group(1)), _java_replacement(m.group(2)), m.group(3)))
        pos = m.end()
    return rules


def _java_replacement(repl: str) -> str:
    return re.sub(r"\$(\d)", r"\\\1", repl)


def map_principal(dn: str, rules) -> str:
    for rule in rules:
        if rule is None:
            return dn
        pattern, repl, case = rule
        m = pattern.fullmatch(dn)
        if m:
            name = m.expand(repl)
            return name.lower() if case == "L" else name.upper() if case == "U" else name
    return dn


def principal_from_cert(cert: dict | None, rules) -> KafkaPrincipal:
    if not cert:
        return ANONYMOUS
    return KafkaPrincipal("User", map_principal(subject_dn(cert), rules))
