"""tools/watch.py's reading of Snakemake's log: the jobs left and the job time they need, from this run's durations
and earlier runs' here, never a guess for a rule that has not run here."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import watch

T0 = datetime(2026, 12, 7, 1, 49, 10)
PLAN = {"read_battles": 1, "stage1_sft": 1, "evaluate": 2}


def snakemake_log(path: Path, events: list[tuple[int, str, str, int]], plan=PLAN, done_total=None) -> Path:
    """A log as Snakemake 9 writes it: the job-stats table, then (second, 'start'|'finish', rule, jobid) events."""
    lines = ["Job stats:", "job                count", "---------------  -------"]
    lines += [f"{rule:<15} {count:>8}" for rule, count in plan.items()] + [f"total {sum(plan.values()):>17}", ""]
    done = 0
    for second, what, rule, job in events:
        lines.append(f"[{(T0 + timedelta(seconds=second)):%a %b %d %H:%M:%S %Y}]")
        if what == "start":
            lines += [f"localrule {rule}:", f"    log: logs/embedded/{rule}_{job}.log", f"    jobid: {job}"]
        else:
            done, total = done + 1, done_total or sum(plan.values())
            lines += [f"Finished jobid: {job} (Rule: {rule})", f"{done} of {total} steps ({100 * done // total}%) done"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_rule_never_run_here_is_named_not_guessed(tmp_path):
    log = snakemake_log(
        tmp_path / "a.log",
        [(0, "start", "read_battles", 1), (1, "finish", "read_battles", 1), (1, "start", "stage1_sft", 2)],
    )
    run = watch.read_run(log)
    left = watch.job_time_left(run, {}, T0 + timedelta(seconds=50))
    assert left.startswith("at least ~0:00:00 of job time") and "2 rules not run here yet: evaluate, stage1_sft" in left


def test_earlier_runs_durations_count_and_a_running_job_counts_what_it_has_left(tmp_path):
    earlier = snakemake_log(
        tmp_path / "earlier.log",
        [
            (0, "start", "stage1_sft", 2),
            (300, "finish", "stage1_sft", 2),
            (300, "start", "evaluate", 3),
            (360, "finish", "evaluate", 3),
        ],
    )
    log = snakemake_log(
        tmp_path / "now.log",
        [(0, "start", "read_battles", 1), (1, "finish", "read_battles", 1), (1, "start", "stage1_sft", 2)],
    )
    history = watch.durations([watch.read_run(earlier)])
    left = watch.job_time_left(watch.read_run(log), history, T0 + timedelta(seconds=101))
    expected = "~0:05:20 of job time at this run's and earlier runs' durations here, one job at a time"
    assert left == expected  # stage1_sft's 300 s less the 100 it has run, then two evaluations of 60 s


def test_an_ended_run_says_how_long_it_took_and_nothing_is_left(tmp_path):
    events = [(0, "start", "read_battles", 1), (2, "finish", "read_battles", 1)]
    log = snakemake_log(tmp_path / "x.snakemake.log", events, plan={"read_battles": 1})
    shown = watch.report(tmp_path, watch.read_run(log), now=T0 + timedelta(hours=3))
    assert "1 of 1 jobs done" in shown and "ended 01:49:12 after 0:00:02" in shown and "left:" not in shown
