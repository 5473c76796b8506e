"""Training across nodes through the Slurm profile, on a real two-node Slurm cluster.

Each node is a network namespace with its own hostname and address (tests/slurm_nodes_cluster.py),
so the two FSDP ranks of a 2-node job talk gloo over a network, as on a cluster. One run, sftw2,
is trained as 1 node x 2 processes, then as 2 nodes x 1 process (bit-identical weights; where the
ranks run is not a reason to rerun), then as 2 nodes again with one node's rank killed mid-run (the
job fails, the profile's resubmission resumes from the last complete state to the same weights).
Every sbatch line of the plugin is captured by an sbatch on PATH that logs and calls the real one.

python -m pytest tests/test_slurm_nodes.py -q      (as root; starts and stops the cluster)
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import slurm_cluster
import slurm_nodes_cluster
from safetensors.numpy import load_file
from workflow_helpers import copy_workflow


def namespaces_refused() -> str:
    """Why this machine cannot make the nodes' namespaces ('' when it can)."""
    if os.geteuid() != 0:
        return "the test cluster's namespaces and daemons need root"
    if not shutil.which("unshare") or not shutil.which("nsenter"):
        return "util-linux's unshare and nsenter are missing"
    probe = subprocess.run(["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, text=True)
    return "" if probe.returncode == 0 else f"this machine refuses new namespaces: {probe.stderr.strip()}"


pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,
    pytest.mark.skipif(bool(namespaces_refused()), reason=namespaces_refused() or "-"),
]

DATA = Path(__file__).parent / "data"
QUICK = ["--config", "scale=embedded", "--configfile", str(DATA / "slurm_quick.yaml")]
CONFIG = [*QUICK, str(DATA / "slurm_nodes.yaml")]  # Stage 1: the Base that QUICK's chain starts from
TWO_NODES = str(DATA / "slurm_two_nodes.yaml")
RUN = "sftw2"
MODEL = f"results/embedded/models/{RUN}"


def profile(*overlays: str) -> list[str]:
    """The profile as users run it, plus this cluster's partitions and squeue (no accounting database)."""
    return [
        "--profile",
        "profiles/slurm",
        *CONFIG,
        *overlays,
        "--slurm-partition-config",
        str(DATA / "slurm_partitions.yaml"),
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--seconds-between-status-checks",
        "2",
        "--jobs",
        "2",
    ]


@pytest.fixture(scope="module")
def cluster():
    if slurm_cluster.running():
        slurm_cluster.stop()
    slurm_nodes_cluster.start()
    yield
    slurm_nodes_cluster.stop()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, cluster) -> Path:
    """A workflow copy whose Stage 1 (the Base) is built without Slurm, and an sbatch that logs each call."""
    root = copy_workflow(tmp_path_factory.mktemp("slurm-nodes"))
    shims = root / ".sbatch-log"
    shims.mkdir()
    (shims / "sbatch").write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shims}/calls\nexec {shutil.which("sbatch")} "$@"\n'
    )
    (shims / "sbatch").chmod(0o755)
    run_snakemake(root, "base", "--cores", "2", *QUICK)
    return root


def run_snakemake(cwd: Path, *args: str, timeout: int = 1200, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{cwd / '.sbatch-log'}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def sbatch_calls(root: Path) -> list[str]:
    path = root / ".sbatch-log" / "calls"
    return path.read_text().splitlines() if path.exists() else []


def call_of(calls: list[str], rule: str) -> str:
    (line,) = [c for c in calls if f"--comment rule_{rule}" in c]
    return line


def weights(root: Path) -> dict:
    model = root / MODEL
    return {name: tensor for file in sorted(model.glob("*.safetensors")) for name, tensor in load_file(file).items()}


def log(root: Path) -> str:
    return (root / f"logs/embedded/runs/{RUN}.log").read_text()


@pytest.fixture(scope="module")
def one_node(workdir) -> dict:
    """sftw2 as one node of two processes, through the profile; its weights are the reference."""
    seen = len(sbatch_calls(workdir))
    run_snakemake(workdir, RUN, *profile())
    calls = sbatch_calls(workdir)[seen:]
    assert "world size 2 on 1 node (lineage-n" in log(workdir), log(workdir)[:3000]
    return {"weights": weights(workdir), "calls": calls}


def test_one_node_job_asks_for_one_node_and_its_gpus_per_node(one_node):
    train = call_of(one_node["calls"], RUN)
    assert "--nodes=1" in train and "--gres=gpu:1" in train and " -p gpu " in train, train
    assert "--mem 4000" in train and "--cpus-per-task=2" in train, train
    data = call_of(one_node["calls"], "winner_rows")  # a CPU-only job: the CPU partition, no GPU
    assert " -p cpu " in data and "--nodes=1" in data and "gres" not in data, data


def test_two_nodes_train_the_same_weights_as_one(workdir, one_node):
    # Where the ranks run changes no weight: nothing to rerun.
    plan = run_snakemake(workdir, "-n", RUN, *profile(TWO_NODES)).stdout
    assert "Nothing to be done" in plan, plan[-3000:]
    seen = len(sbatch_calls(workdir))
    run_snakemake(workdir, RUN, "--forcerun", RUN, *profile(TWO_NODES))
    train = call_of(sbatch_calls(workdir)[seen:], RUN)
    assert "--nodes=2" in train and "--ntasks=2" in train and "--gres=gpu:1" in train and " -p gpu " in train, train
    assert "world size 2 on 2 nodes (lineage-n1, lineage-n2), full sharding" in log(workdir), log(workdir)[:3000]
    ours, reference = weights(workdir), one_node["weights"]
    assert ours.keys() == reference.keys()
    assert all((ours[k] == reference[k]).all() for k in ours), "2 x 1 processes trained other weights than 1 x 2"


def test_a_killed_node_process_fails_the_job_and_the_resubmission_resumes(workdir, one_node):
    seen = {job["id"] for job in slurm_cluster.squeue_jobs()}
    cmd = [sys.executable, "-m", "snakemake", RUN, "--forcerun", RUN, *profile(TWO_NODES), "--retries", "1"]
    env = {**os.environ, "PATH": f"{workdir / '.sbatch-log'}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        rank = _rank_on_second_node_after_a_saved_state(workdir / f"state/embedded/{RUN}", timeout=600)
        os.kill(rank, signal.SIGKILL)
        out, _ = run.communicate(timeout=900)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, out[-4000:]
    jobs = [j for j in slurm_cluster.squeue_jobs() if j["id"] not in seen and j["comment"] == f"rule_{RUN}"]
    assert sorted(j["state"] for j in jobs) == ["COMPLETED", "FAILED"], jobs
    assert "resumed from" in log(workdir), log(workdir)[:3000]
    ours, reference = weights(workdir), one_node["weights"]
    assert all((ours[k] == reference[k]).all() for k in ours), "the resumed run trained other weights"


def _rank_on_second_node_after_a_saved_state(state: Path, timeout: float) -> int:
    """The pid of the training rank on lineage-n2, once the run has written a complete state."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ranks = [
            pid
            for pid in slurm_nodes_cluster.processes_on("lineage-n2", "train_sft.py")
            if "accelerate" not in _cmdline(pid) and "launch_node" not in _cmdline(pid)
        ]
        if ranks and any(state.glob("*/step_*/COMPLETE")):
            return ranks[0]
        time.sleep(0.5)
    raise AssertionError(f"no rank on lineage-n2 with a saved state under {state} within {timeout:.0f} s")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
