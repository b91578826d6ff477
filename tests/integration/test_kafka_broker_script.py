"""scripts/kafka_broker.py (the official Apache Kafka broker from Maven jars) restarts on its own
data dir: the dir keeps its cluster id, so Kafka starts and still has the records."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from compat.kafka_broker import formatted_cluster_id
from tests.integration.clients import confluent_consume, confluent_produce, create_topic, needs_java

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kafka_broker.py"


def _start(data_dir: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--data-dir", str(data_dir)],
                            stdout=subprocess.PIPE, text=True)
    # the script prints this line once Kafka answers, or exits (its own startup timeout)
    line = proc.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        proc.kill()
        raise AssertionError(f"scripts/kafka_broker.py did not start (exit {proc.wait()}): "
                             f"{line!r}\n{(data_dir / 'kafka.log').read_text()[-3000:]}")
    return proc, m.group(1)


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0


@needs_java
def test_a_restart_on_the_same_data_dir_keeps_the_records(tmp_path):
    data, topic = tmp_path / "kafka", f"restart-{uuid.uuid4().hex[:8]}"
    proc, bootstrap = _start(data)
    try:
        create_topic(bootstrap, topic)
        confluent_produce(bootstrap, topic, [{"key": b"k", "value": b"kept"}])
    finally:
        _stop(proc)
    cluster_id = formatted_cluster_id(data)
    assert cluster_id

    proc, bootstrap = _start(data)
    try:
        assert formatted_cluster_id(data) == cluster_id
        [record] = confluent_consume(bootstrap, topic, 1)
        assert (record.key(), record.value(), record.offset()) == (b"k", b"kept", 0)
    finally:
        _stop(proc)
