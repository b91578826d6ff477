"""Which scenarios the test command asserts on pykafkad (compat/test_compat.py).

ASSERTED scenarios must pass with every client that can express them; a failure there fails
the test run.  PENDING scenarios need broker features that are still being built; they run
all the same (or show as "unsupported" while the broker does not advertise the APIs they
need), and their failures are printed and reported as warnings, never hidden.

When a feature lands, move its scenarios from PENDING to ASSERTED.
"""

from __future__ import annotations

from compat.scenarios import SCENARIOS

#: consumer groups (JoinGroup/SyncGroup/Heartbeat, OffsetCommit/Fetch) and transactions
PENDING: frozenset[str] = frozenset({
    "consumer-group",
    "offset-commit",
    "transactions",
    "transactions-offsets",
    "spark-deprecated-offset-fetching",
})

ASSERTED: frozenset[str] = frozenset(s.name for s in SCENARIOS) - PENDING
