"""bench/load.py --quick: the real bot process under a small burst, every answer complete.

It asserts what the bench counts (answers complete and exact, the figures it writes),
never a timing: the timings are the bench's to report, on whatever machine runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ("answers", "complete", "answered_at_all", "chunks_delivered", "discord_429s",
           "discord_global_429s", "discord_requests", "typing_requests", "cpu_us_per_chunk",
           "floor_cpu_us_per_chunk", "cpu_ratio_to_floor", "unpaced_floor_cpu_us_per_chunk", "memory_kib_per_answer",
           "first_message_p50_s", "first_message_p99_s", "discord_rps_avg",
           "discord_rps_busiest_second", "error_lines", "answering_floor_cpu_us_per_chunk",
           "answering_floor_ratio_to_floor", "cpu_ratio_to_answering_floor", "answering_floor_429s")


def test_quick_load_run_answers_everyone_exactly_and_writes_its_figures(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"other_bench.figure": 1.0}))
    run = subprocess.run([sys.executable, "bench/load.py", "--quick", "--results", str(results)],
                         cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    figures = json.loads(results.read_text())
    prefix = "load.20_answers_4_channels."
    assert figures[prefix + "answers"] == 20
    assert figures[prefix + "complete"] == 20, run.stdout[-3000:]
    assert figures[prefix + "chunks_delivered"] == 20 * 90  # 3 s at 30 chunks/s, every chunk shown
    assert figures[prefix + "error_lines"] == 0, run.stdout[-3000:]
    assert [name for name in FIGURES if prefix + name not in figures] == []
    assert figures["other_bench.figure"] == 1.0  # the other benches' figures are kept
