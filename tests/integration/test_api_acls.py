"""Every API a listener serves has a row in the per-API authorization table, so a new API
cannot be served without saying which operation on which resource it needs."""

from __future__ import annotations

from pykafkad.dispatch import HANDLERS_BY_KIND, load_handlers
from pykafkad.security.api_acls import API_ACLS
from pykafkad.security.authorizer import CLUSTER, DELETE, SUPPORTED_OPERATIONS


def test_every_served_api_has_a_row():
    load_handlers()
    served = set().union(*(set(h) for h in HANDLERS_BY_KIND.values()))
    missing = sorted(served - set(API_ACLS))
    assert not missing, f"APIs without an API_ACLS row: {missing}"


#: checks Kafka makes of an operation no ACL can name for the resource, so only ALL (or a
#: super user) grants it: DeleteTopics asks DELETE on the cluster before each topic's
GRANTED_BY_ALL_ONLY = {(20, CLUSTER, DELETE)}


def test_every_row_names_an_operation_the_resource_has():
    for key, checks in API_ACLS.items():
        for c in checks:
            assert c.operation in SUPPORTED_OPERATIONS[c.resource_type] or \
                (key, c.resource_type, c.operation) in GRANTED_BY_ALL_ONLY, (key, c)
