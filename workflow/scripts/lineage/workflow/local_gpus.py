"""A scale whose jobs run on this machine's GPUs needs those GPUs: checked before any job, in one line.

On a cluster the jobs run on nodes the scheduler picks, and the machine Snakemake starts on (a login node) has no
GPU to ask; so the check applies only where jobs run here (Snakemake's local executor, not a dry run or --touch).
It asks the driver (`nvidia-smi`), not torch: the workflow's own environment has no torch, and the question is
whether this machine can run the scale's jobs at all. The training jobs' memory plan is lineage/workflow/fit.py's,
against `train.gpu_gib`; here the GPU's own total is compared with that figure, so a smaller card than the scale
was planned for is refused too (the driver lists a little more than torch gets: an H100 80GB 79.65 GiB, 79.18).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from lineage.workflow.checks import ConfigError


@dataclass(frozen=True)
class Gpu:
    name: str
    total_gib: float  # as the driver lists it


def local_gpus() -> list[Gpu] | None:
    """The GPUs the NVIDIA driver lists here, or None where there is no driver to ask."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    gpus = []
    for line in out.strip().splitlines():
        name, _, mib = line.rpartition(",")
        try:
            gpus.append(Gpu(name.strip(), int(mib.strip()) / 1024))
        except ValueError:  # "[N/A]" (a GPU the driver cannot read): listed, its memory unknown, so never too small
            gpus.append(Gpu(name.strip(), float("inf")))
    return gpus


def check_local_gpus(lineage, settings: dict, scale: str, gpus: list[Gpu] | None) -> None:
    """Refuse, in one line, a scale whose jobs need more GPUs (or bigger ones) than this machine has."""
    trained = [run for run in lineage.runs.values() if run.built and run.device == "cuda"]
    evaluates = settings["eval"]["device"] == "cuda"
    if not trained and not evaluates:
        return
    what = "trains" if trained else "evaluates"
    if not gpus:
        raise ConfigError(
            f"scale {scale} {what} on cuda, but this machine has no NVIDIA GPU (`nvidia-smi` "
            f"{'is not installed' if gpus is None else 'lists none'}); run it on a GPU machine, through the Slurm "
            "profile (--profile profiles/slurm), or choose a CPU scale (--config scale=embedded)"
        )
    wanted = max((run.processes_per_node for run in trained), default=1)
    if len(gpus) < wanted:
        run = next(r for r in trained if r.processes_per_node == wanted)
        raise ConfigError(
            f"runs.{run.name}: {wanted} processes a node on cuda, but this machine has {len(gpus)} GPU(s); "
            "run it on a node with that many, through the Slurm profile, or lower its processes"
        )
    if not trained:
        return
    from planning.memory import H100_GIB  # fit.py's default, where the scale names no GPU

    planned_for = settings["train"].get("gpu_gib", H100_GIB)
    smallest = min(gpus, key=lambda gpu: gpu.total_gib)
    if smallest.total_gib < planned_for:
        raise ConfigError(
            f"scale {scale} plans its training for GPUs of {planned_for:g} GiB (train.gpu_gib), but this machine's "
            f"{smallest.name} has {smallest.total_gib:.1f} GiB; set train.gpu_gib to what torch reports on it "
            "(torch.cuda.get_device_properties(0).total_memory / 2**30) to have each run planned against it"
        )
