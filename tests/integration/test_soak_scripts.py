"""The soak scripts keep working: a tiny, seeded run of each (the full runs are 30 kill -9 cycles
and 20,000 fuzzed frames, see the README)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str, json_path: Path) -> dict:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args,
                           "--json", str(json_path)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert json_path.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(json_path.read_text())
    assert proc.returncode == (0 if result["ok"] else 1)
    return result


def test_crash_loop_two_kill_9_cycles_lose_nothing(tmp_path):
    r = _run("crash_loop.py", "--cycles", "2", "--seed", "3", "--seconds-per-cycle", "1",
             "--rate", "500", "--data-dir", str(tmp_path / "data"), json_path=tmp_path / "r.json")
    assert r["cycles"] == 2 and len(r["ready_s"]) == 2 and r["not_ready"] == 0
    assert r["records_acked"] > 0 and r["records_read"] > 0
    assert (r["lost"], r["duplicates"], r["out_of_order"]) == (0, 0, 0)
    assert r["commit_regressions"] == []
    assert r["ok"]


def test_fuzz_frames_200_frames_leave_the_broker_serving(tmp_path):
    r = _run("fuzz_frames.py", "--frames", "200", "--seed", "3", "--batch", "20",
             "--data-dir", str(tmp_path / "data"), json_path=tmp_path / "r.json")
    assert r["frames"] == 200 and r["connections"] > 0
    assert r["protocol_error_closes"] > 0  # the mutations did reach the broker's decoder
    assert r["tracebacks"] == 0 and r["health_failures"] == [] and not r["crashed"]
    assert r["client_round_trip"] == "ok" and r["alive_at_end"]
    assert r["ok"]
