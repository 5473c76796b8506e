"""The Slurm profile on a real single-node Slurm cluster (Debian's slurmctld and slurmd).

The published lineage runs through sbatch at embedded scale; a changed hyperparameter
resubmits exactly the jobs that depend on it; a job killed with scancel is detected and the
next run resumes it from its resumable state.

python -m pytest tests/test_slurm.py -q      (as root; starts and stops the cluster)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import slurm_cluster
from workflow_helpers import copy_workflow, planned_jobs, snakemake

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the test cluster's daemons run as root"),
]

QUICK = Path(__file__).parent / "data" / "slurm_quick.yaml"


def profile(*overlays: Path) -> list[str]:
    """The profile as users run it, plus what a cluster without an accounting database needs, at
    embedded scale with fewer steps and eval items (QUICK) and any further config overlays."""
    return [
        "--profile",
        "profiles/slurm",
        "--config",
        "scale=embedded",
        "--configfile",
        str(QUICK),
        *map(str, overlays),
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--seconds-between-status-checks",  # a one-node test cluster answers squeue at once
        "2",
        "--jobs",
        "3",
    ]


PROFILE = profile()
SFTWF_LR = "runs:\n  sftwF:\n    lr: 7.0e-6\n"


@pytest.fixture(scope="module")
def cluster():
    slurm_cluster.start()
    yield
    slurm_cluster.stop()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("slurm-workflow"))


def submitted_since(seen: set[str]) -> list[str]:
    """'rule:wildcards' of the jobs submitted after the ids in `seen` (from sbatch --comment)."""
    jobs = [job for job in slurm_cluster.squeue_jobs() if job["id"] not in seen]
    return sorted(job["comment"].removeprefix("rule_").replace("_wildcards_", ":") for job in jobs)


def job_ids() -> set[str]:
    return {job["id"] for job in slurm_cluster.squeue_jobs()}


def test_profile_builds_the_published_lineage_through_sbatch(cluster, workdir):
    snakemake("soupF2_eval", *PROFILE, cwd=workdir, timeout=1800)
    submitted = submitted_since(set())
    chain = ("base", "stage1_sft", "dpo1")  # QUICK's Stage 1 is dpo1
    for job in (*chain, "sftw2", "sftw4", "sftwF", "soup24", "soupF2"):
        assert job in submitted, (job, submitted)
    assert not any(j.startswith(("verifier_pairs", "dpo2")) for j in submitted)  # past QUICK's Stage 1
    assert all(j.split(":")[0] not in ("make_eval_table", "eval_column") for j in submitted)  # local rules
    for run in ("stage1_sft", "sftw2", "sftw4", "sftwF"):
        log = (workdir / f"logs/embedded/runs/{run}.log").read_text()
        assert "world size 2" in log, f"{run} did not train with 2 FSDP processes:\n{log[:2000]}"
    assert (workdir / "results/embedded/eval_table.md").is_file()


def test_audit_draws_the_dag_and_writes_the_report(cluster, workdir):
    local = ["--cores", "2", "--config", "scale=embedded", "--configfile", str(QUICK)]  # the profile runs' config
    snakemake("audit", *local, cwd=workdir, timeout=900)
    audit = workdir / "results/embedded/audit"
    for graph in ("rulegraph", "dag"):
        svg = (audit / f"{graph}.svg").read_text()
        assert svg.lstrip().startswith(("<?xml", "<svg")) and "sftwF" in svg and "soupF2" in svg
    report = (audit / "report.html").read_text()
    assert "<html" in report.lower() and "eval_table" in report and "loss_curves" in report
    lineage = (audit / "lineage.tsv").read_text()
    assert all(run in lineage for run in ("stage1", "sftw2", "sftw4", "sftwF", "soup24", "soupF2"))


def test_changed_hyperparameter_resubmits_only_its_descendants(cluster, workdir):
    overlay = workdir / "sftwF_lr.yaml"
    overlay.write_text(SFTWF_LR)
    changed = profile(overlay)
    # The plan for the published model: sftwF, soupF2, their benchmarks and the table; nothing else.
    plan = planned_jobs("soupF2_eval", *changed, cwd=workdir)
    assert plan == {
        "sftwF": 1,
        "soupF2": 1,
        "evaluate": 2,
        "eval_column": 1,
        "make_eval_table": 1,
        "publish": 1,
        "soupF2_eval": 1,
    }
    # Through sbatch (the models; their evals are the same rules as above): exactly sftwF and soupF2.
    seen = job_ids()
    snakemake("soupF2", *changed, cwd=workdir, timeout=1800)
    assert submitted_since(seen) == ["sftwF", "soupF2"]
    # ...and a second run submits nothing.
    seen = job_ids()
    assert planned_jobs("soupF2", *changed, cwd=workdir) == {}
    snakemake("soupF2", *changed, cwd=workdir)
    assert submitted_since(seen) == []


def test_scancel_mid_run_is_detected_and_the_rerun_resumes(cluster, workdir):
    target, state = "sftwS", workdir / "state/embedded/sftwS"
    cmd = [sys.executable, "-m", "snakemake", target, *PROFILE, "--retries", "0"]
    run = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        job = _wait_for_saved_state(f"rule_{target}", state, timeout=900)
        subprocess.run(["scancel", job], check=True)
        out, _ = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode != 0, out
    assert f"Error in rule {target}" in out or "failed" in out.lower(), out[-3000:]
    assert not (workdir / "results/embedded/models/sftwS").exists()  # no half-written checkpoint

    snakemake(target, *PROFILE, cwd=workdir, timeout=1200)
    log = (workdir / "logs/embedded/runs/sftwS.log").read_text()
    assert "resumed from" in log, log[:3000]
    assert (workdir / "results/embedded/models/sftwS/lineage.json").is_file()


def _wait_for_saved_state(comment: str, state: Path, timeout: float) -> str:
    """The Slurm id of the running job with this comment, once it has written a complete state."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = [j for j in slurm_cluster.squeue_jobs() if j["comment"] == comment and j["state"] == "RUNNING"]
        if running and any(state.glob("*/step_*/COMPLETE")):
            return running[0]["id"]
        time.sleep(1)
    raise AssertionError(f"no running job {comment} with a saved state within {timeout:.0f} s")
