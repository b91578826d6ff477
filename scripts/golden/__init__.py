"""The pieces of scripts/capture_golden.py: a recording proxy and one driver per stock client.

``common`` holds what every driver shares (topics, records, timeouts, scenario steps);
``recorder`` decides which exchanges become golden files; ``proxy`` sits between the clients
and the broker; ``clients_kafka_python``, ``clients_confluent`` and ``clients_kcat`` drive one
client each through the APIs the broker serves.
"""

import sys
from pathlib import Path

#: the repository root: the recorder decodes frames with the broker's own ``wire`` codec
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
