"""The harness side of the authorization scenario: the user's ACLs, created through the
PLAINTEXT listener (whose ANONYMOUS principal is a super user on a secured target) with
CreateAcls, as ``kafka-acls --add`` creates them.

The scenario, for every client: the user (compat.security.USER, no ACL) is refused when it
produces to a topic and when it consumes in a group; after the ACLs below it produces and
consumes the same records.
"""

from __future__ import annotations

import time

from compat.runner import WAIT_S, Env, NotApplicable

#: what producing needs (WRITE implies DESCRIBE), then what a group consumer needs
PRODUCE_ACLS = (("TOPIC", "WRITE"),)
CONSUME_ACLS = (("TOPIC", "READ"), ("GROUP", "READ"))


def user(env: Env):
    """The unprivileged user's compat.security.ClientSecurity."""
    if env.secured is None:
        raise NotApplicable("needs a secured target")
    return env.secured.user


def grant(env: Env, topic: str, group: str, acls) -> None:
    """Allows the user ``acls`` ((resource type, operation) pairs) on ``topic`` or ``group``
    (literal names, any host); returns once DescribeAcls lists them, which the broker answers
    from the authorizer that will check them."""
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    principal = f"User:{user(env).username}"
    names = {"TOPIC": topic, "GROUP": group}
    bindings = [AclBinding(ResourceType[kind], names[kind], ResourcePatternType.LITERAL,
                           principal, "*", AclOperation[op], AclPermissionType.ALLOW)
                for kind, op in acls]
    admin = AdminClient({"bootstrap.servers": env.harness})
    for f in admin.create_acls(bindings).values():
        f.result(WAIT_S)
    every = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    deadline = time.monotonic() + WAIT_S
    while not set(bindings) <= set(admin.describe_acls(every).result(WAIT_S)):
        if time.monotonic() > deadline:
            raise AssertionError(f"the ACLs of {principal} were not listed after {WAIT_S}s")
        time.sleep(0.05)  # the authorizer's update has no notification to wait on


def expect_refused(error: object, code: str, what: str) -> None:
    """``error`` (an exception or an error text) names Kafka's authorization error ``code``
    (e.g. TOPIC_AUTHORIZATION_FAILED), in any client's spelling of it."""
    text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    words = code.lower().split("_")
    spellings = (code, " ".join(words), "".join(w.capitalize() for w in words),
                 "".join(w.capitalize() for w in words[:-1]) + "Exception")  # Java's class
    squeezed = text.replace(" ", "").lower()
    if not any(s.replace(" ", "").lower() in squeezed for s in spellings):
        raise AssertionError(f"{what}: expected {code}, got {text[:300]}")


def expect_call_refused(action, code: str, what: str) -> None:
    """Runs ``action``, which must raise a client error naming ``code``."""
    try:
        action()
    except Exception as e:  # any client's exception type
        expect_refused(e, code, what)
        return
    raise AssertionError(f"{what}: accepted, expected {code}")
