"""Reads a listener's ssl.* / sasl.* settings as Kafka does: ``listener.name.<l>.<key>`` first,
then the broker-wide ``<key>``; SASL JAAS configs may also be mechanism-scoped
(``listener.name.<l>.<mechanism>.sasl.jaas.config``)."""

from __future__ import annotations

from typing import Any

#: Kafka's defaults for the settings read here
DEFAULTS = {
    "ssl.keystore.type": "JKS",
    "ssl.truststore.type": "JKS",
    "ssl.client.auth": "none",
    "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
    "ssl.principal.mapping.rules": "DEFAULT",
    "sasl.enabled.mechanisms": "GSSAPI",
    "connections.max.reauth.ms": "0",
}


def _raw(config, key: str) -> Any:
    ignored = config.ignored
    if key in ignored:
        return ignored[key]
    try:
        if config.is_set(key):
            return config[key]
    except KeyError:
        pass
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return ",".join(value)
    return str(getattr(value, "value", value))


def listener_setting(config, listener: str, key: str, mechanism: str | None = None) -> str | None:
    """The effective value of ``key`` on ``listener`` (None: unset, no Kafka default)."""
    prefix = f"listener.name.{listener.lower()}."
    keys = []
    if mechanism:
        keys.append(f"{prefix}{mechanism.lower()}.{key}")
    keys += [prefix + key, key]
    for k in keys:
        value = _text(_raw(config, k))
        if value is not None:
            return value
    return DEFAULTS.get(key)


def csv(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]
