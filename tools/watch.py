"""What a running lineage is doing, without opening its log files: each running job's step, loss, tokens/s and
ETA, the jobs done and left, and the job time left at the durations seen so far.

It reads what Snakemake and the jobs already write: Snakemake's own log of the newest run
(`.snakemake/log/*.snakemake.log`: each job's start with its log file, each finish, "N of M steps done") and each
running job's log (the trainers' step lines: `step 0012/0024 | loss ... | tok/s ... | eta ...`). Nothing is
started or locked, so it runs beside `snakemake` (locally or through the Slurm profile) in a second terminal:

    python tools/watch.py              # every 10 s until the run ends; --once for one report
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

STEP = re.compile(
    r"step (?P<step>\d+)/(?P<steps>\d+) \| loss (?P<loss>[-\d.naif]+) .*?\| tok/s (?P<tokens>[\d,]+) .*?"
    r"\| eta (?P<eta>[\d:]+)"
)
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
STARTED = re.compile(r"^(?:local)?rule (?P<rule>\w+):$")
FINISHED = re.compile(r"^Finished jobid: (?P<job>\d+) \(Rule: (?P<rule>\w+)\)")
PROGRESS = re.compile(r"^(?P<done>\d+) of (?P<total>\d+) steps \(\d+%\) done")
FAILED = re.compile(r"^Error in rule (?P<rule>\w+):")


@dataclass
class Job:
    rule: str
    started: datetime | None
    log: str = ""
    wildcards: str = ""
    finished: datetime | None = None
    failed: bool = False


@dataclass
class Run:
    """What Snakemake's log of one run says so far."""

    path: Path
    began: datetime | None = None
    last: datetime | None = None  # the newest time stamp in the log
    total: int = 0
    done: int = 0
    jobs: dict[str, Job] = field(default_factory=dict)
    planned: dict[str, int] = field(default_factory=dict)  # rule -> jobs, from the "Job stats" table

    @property
    def running(self) -> list[Job]:
        return [job for job in self.jobs.values() if job.finished is None and not job.failed]

    @property
    def ended(self) -> bool:
        return bool(self.total) and self.done >= self.total


def newest_log(workdir: Path) -> Path | None:
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    return logs[-1] if logs else None


def read_run(path: Path) -> Run:
    """Parse Snakemake's log (its plain text, as Snakemake 9 writes it)."""
    run, now, pending, in_stats = Run(path), None, None, False
    for line in path.read_text(errors="replace").splitlines():
        if match := STAMP.match(line):
            now = datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
            run.began, run.last = run.began or now, now
        elif line.startswith("job ") and "count" in line:
            in_stats = True
        elif in_stats:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
                run.planned[parts[0]] = int(parts[1])
            elif parts and parts[0] == "total":
                run.total, in_stats = int(parts[1]), False
        elif match := STARTED.match(line):
            pending = Job(match.group("rule"), now)
        elif pending is not None and line.startswith("    log: "):
            pending.log = line.removeprefix("    log: ").split(",")[0].split(" (")[0].strip()
        elif pending is not None and line.startswith("    wildcards: "):
            pending.wildcards = line.removeprefix("    wildcards: ").strip()
        elif pending is not None and line.startswith("    jobid: "):
            run.jobs[line.split()[-1]] = pending
        elif match := FINISHED.match(line):
            if job := run.jobs.get(match.group("job")):
                job.finished = now
            pending = None
        elif match := PROGRESS.match(line):
            run.done, run.total = int(match.group("done")), int(match.group("total"))
        elif match := FAILED.match(line):
            pending = None  # the error block repeats the job's fields: nothing to record from it
            for job in run.jobs.values():
                if job.rule == match.group("rule") and job.finished is None:
                    job.failed = True
    return run


def last_step(log: Path) -> dict | None:
    """The newest step line of a job's log (a trainer's), or None."""
    if not log.is_file():
        return None
    with log.open("rb") as handle:
        handle.seek(max(0, log.stat().st_size - 65536))
        tail = handle.read().decode(errors="replace")
    steps = list(STEP.finditer(tail))
    return steps[-1].groupdict() if steps else None


def report(workdir: Path, run: Run, now: datetime | None = None, history: dict[str, list[float]] | None = None) -> str:
    """The run's state in a few lines; `history`: each rule's job durations in earlier runs here (durations())."""
    now = now or datetime.now()
    if run.began and run.ended and run.last:
        since = f"; started {run.began:%H:%M:%S}, ended {run.last:%H:%M:%S} after {_clock((run.last - run.began).total_seconds())}"
    elif run.began:
        since = f"; started {run.began:%H:%M:%S}, {_clock((now - run.began).total_seconds())} ago"
    else:
        since = ""
    running = run.running
    lines = [
        f"{run.path.relative_to(workdir)}: {run.done} of {run.total} jobs done, {len(running)} running, "
        f"{max(0, run.total - run.done - len(running))} waiting{since}"
    ]
    for job in running:
        name = job.rule + (f" ({job.wildcards})" if job.wildcards else "")
        step = last_step(workdir / job.log) if job.log else None
        age = _clock((now - job.started).total_seconds()) if job.started else "?"
        if step:
            what = (
                f"step {int(step['step'])}/{int(step['steps'])}  loss {step['loss']}  tok/s {step['tokens']}  "
                f"eta {step['eta']}"
            )
        else:
            what = f"running for {age}"
        lines.append(f"  {name:<28} {what}  {job.log}")
    if not run.ended and (left := job_time_left(run, history or {}, now)):
        lines.append(f"  left: {left}")
    failed = [job for job in run.jobs.values() if job.failed]
    if failed:
        lines.append("  failed: " + ", ".join(f"{j.rule} ({j.log})" for j in failed))
    return "\n".join(lines)


def durations(runs) -> dict[str, list[float]]:
    """Each rule's finished jobs' durations in seconds, over `runs`."""
    seen: dict[str, list[float]] = {}
    for run in runs:
        for job in run.jobs.values():
            if job.finished and job.started:
                seen.setdefault(job.rule, []).append((job.finished - job.started).total_seconds())
    return seen


def job_time_left(run: Run, history: dict[str, list[float]], now: datetime) -> str:
    """The job time the run still needs: each job not finished at the median of its rule's finished jobs, in this
    run or else in earlier runs here, less what a running one has already run. A rule never run here is not
    guessed (a data stage takes a second, a training run an hour): it is named, and the figure is a lower bound."""
    own = durations([run])
    finished: dict[str, int] = {}
    for job in run.jobs.values():
        if job.finished:
            finished[job.rule] = finished.get(job.rule, 0) + 1
    if not run.planned:
        return ""
    left, unseen, earlier = 0.0, [], False
    for rule, count in run.planned.items():
        jobs = count - finished.get(rule, 0)
        if jobs <= 0:
            continue
        known = own.get(rule) or history.get(rule)
        if not known:
            unseen.append(rule)
            continue
        earlier |= rule not in own
        typical = statistics.median(known)
        running = [job for job in run.running if job.rule == rule and job.started]
        left += sum(max(0.0, typical - (now - job.started).total_seconds()) for job in running)
        left += (jobs - len(running)) * typical
    source = "this run's and earlier runs' durations here" if earlier else "this run's durations so far"
    if unseen:
        return (
            f"at least ~{_clock(left)} of job time at {source}, one job at a time, plus {len(unseen)} rules not run "
            f"here yet: {', '.join(sorted(unseen))}"
        )
    return f"~{_clock(left)} of job time at {source}, one job at a time"


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("."), help="the workflow's directory (default: here)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between reports")
    parser.add_argument("--once", action="store_true", help="one report, then exit")
    args = parser.parse_args(argv)
    workdir = args.dir.resolve()
    finished_runs: dict[Path, Run] = {}  # earlier runs' logs no longer change: each is read once
    while True:
        path = newest_log(workdir)
        if path is None:
            print(f"no Snakemake log under {workdir / '.snakemake' / 'log'}: nothing has run here yet", file=sys.stderr)
            return 1
        run = read_run(path)
        for earlier in (workdir / ".snakemake" / "log").glob("*.snakemake.log"):
            if earlier != path and earlier not in finished_runs:
                finished_runs[earlier] = read_run(earlier)
        print(report(workdir, run, history=durations(finished_runs.values())), flush=True)
        stopped = not run.running and any(job.failed for job in run.jobs.values())
        if args.once or run.ended or stopped:
            return 0
        time.sleep(args.every)
        print()


if __name__ == "__main__":
    sys.exit(main())
