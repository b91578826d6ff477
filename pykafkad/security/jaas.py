"""The JAAS config text Kafka takes in ``sasl.jaas.config``:
``<LoginModule class> required key="value" key2=value2;``.  Only the options matter here
(PLAIN's ``user_<name>="<password>"`` entries, OAUTHBEARER's ``unsecuredLoginStringClaim_*``)."""

from __future__ import annotations

import re

from pykafkad.config.types import ConfigError

_HEADER = re.compile(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\s*", re.I)
_OPTION = re.compile(r'\s*([\w.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))\s*')


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """The login module's class name and its options; a malformed text is refused as Kafka's
    JaasConfig refuses it."""
    m = _HEADER.match(text)
    if not m:
        raise ConfigError(f"Invalid JAAS config: {text!r}", "sasl.jaas.config")
    pos, options = m.end(), {}
    while pos < len(text) and text[pos] != ";":
        o = _OPTION.match(text, pos)
        if not o:
            raise ConfigError("Invalid JAAS config: expected key=value at "
                              f"{text[pos:pos + 20]!r}", "sasl.jaas.config")
        value = o.group(2) if o.group(2) is not None else o.group(3)
        options[o.group(1)] = re.sub(r"\\(.)", r"\1", value)
        pos = o.end()
    if text[pos:].strip() != ";":
        raise ConfigError("Invalid JAAS config: expected one login module ending with ';'",
                          "sasl.jaas.config")
    return m.group(1), options


def plain_users(options: dict[str, str]) -> dict[str, str]:
    """PlainLoginModule's ``user_<name>`` options: who may log in with which password."""
    return {k[5:]: v for k, v in options.items() if k.startswith("user_")}
