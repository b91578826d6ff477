"""Every API a listener serves has a row in the per-API authorization table, so a new API
cannot be served without saying which operation on which resource it needs."""

from __future__ import annotations

from pykafkad.dispatch import HANDLERS_BY_KIND, load_handlers
from pykafkad.security.api_acls import API_ACLS
from pykafkad.security.authorizer import SUPPORTED_OPERATIONS


def test_every_served_api_has_a_row():
    load_handlers()
    served = set().union(*(set(h) for h in HANDLERS_BY_KIND.values()))
    missing = sorted(served - set(API_ACLS))
    assert not missing, f"APIs without an API_ACLS row: {missing}"


def test_every_row_names_an_operation_the_resource_has():
    for key, checks in API_ACLS.items():
        for c in checks:
            assert c.operation in SUPPORTED_OPERATIONS[c.resource_type], (key, c)
