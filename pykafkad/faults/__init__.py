"""Fault control for tests: per-request fault rules (answer an error, delay, close the
connection) and a per-node partition table (isolate a node from its peers or from clients).

A test drives them through a control frame on the node's own listeners (control.py), which
a node serves only when ``pykafkad.faults.enable=true`` (on in pykafkad.testing and for
``pykafkad cluster`` nodes) and only to loopback peers.  With no rule set, a request costs
one dict lookup.
"""

from pykafkad.faults.rules import FaultRule, FaultRules

__all__ = ["FaultRule", "FaultRules"]
