"""benchmarks/run_table.py: the figures a benchmark call quotes carry their count and range, and runs are
compared step by step where both ran the same step (the same packs)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

# loaded by path: putting benchmarks/ on sys.path would shadow workflow/scripts/soup.py with benchmarks/soup.py
_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "run_table.py"
_SPEC = importlib.util.spec_from_file_location("benchmark_run_table", _PATH)
run_table = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(run_table)


def steps(speeds: list[float], loss_step: float = 0.0) -> list[dict]:
    return [
        {"step": i + 1, "loss": 10.0 - i + loss_step, "tok_per_s": s, "mfu": s / 1e5, "peak_mem_gib": 80.0 + i}
        for i, s in enumerate(speeds)
    ]


def test_timed_figures_carry_their_count_and_range_and_runs_are_paired_by_step():
    before = steps([10.0, 20.0, 90.0, 100.0, 120.0, 80.0])  # steps 4-6 timed: 80, 100, 120
    after = steps([10.0, 20.0, 90.0, 110.0, 150.0, 80.0, 200.0], loss_step=0.01)  # one step more: unpaired
    text = run_table.table({"before": before, "after": after})
    assert "| before | 6 (3) | 10.0000 -> 5.0000 | 0.000% | 100 [80-120] | 0.1% [0.1%-0.1%] | - | 85.0 |" in text
    assert "| after | 7 (4) |" in text and "| 130 [80-200] |" in text and "| 86.0 |" in text
    assert "0.200%" in text  # 0.01 on a loss of 5 at the last step both ran
    # steps 4, 5, 6: 110/100, 150/120, 80/80 -> median 1.1, range 1.0-1.25; step 7 has no partner
    assert "after / before, step by step: 1.100x [1.000x-1.250x] over 3 steps both ran" in text
    assert "before 1.00x, after 1.30x (vs before, the slowest)" in text


def test_few_steps_are_timed_from_the_second_and_a_run_without_step_numbers_is_not_paired():
    assert [r["step"] for r in run_table.timed_steps(steps([1.0, 2.0, 3.0]))] == [2, 3]
    assert [r["step"] for r in run_table.timed_steps(steps([1.0]))] == [1]
    unnumbered = [{k: v for k, v in r.items() if k != "step"} for r in steps([5.0, 5.0, 5.0, 5.0])]
    assert run_table.paired_ratio(unnumbered, steps([5.0] * 4)) is None


def test_the_script_prints_the_table_of_a_folder_and_refuses_an_empty_one(tmp_path):
    for name, rows in {"a": steps([1.0, 2.0, 3.0, 4.0]), "b": steps([1.0, 2.0, 3.0, 8.0])}.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([sys.executable, _PATH, tmp_path], capture_output=True, text=True, check=True).stdout
    assert "b / a, step by step: 2.000x [2.000x-2.000x] over 1 steps both ran" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = subprocess.run([sys.executable, _PATH, empty], capture_output=True, text=True)
    assert failed.returncode != 0 and "no run left metrics" in failed.stderr
