"""A scale whose jobs run here on cuda needs this machine's GPUs: refused in one line before any job where it has
none, too few or too small ones (lineage/workflow/local_gpus.py); a dry run, --touch and a cluster's executor are
not asked (their jobs run elsewhere, or not at all)."""

from __future__ import annotations

import copy
import shutil

import pytest
from workflow_helpers import REPO, copy_workflow, snakemake

from lineage.errors import EXIT_CODES
from lineage.workflow.config_file import read_config
from lineage.workflow.local_gpus import Gpu, check_local_gpus
from lineage.workflow.runs import ConfigError, build_lineage

H100 = Gpu("NVIDIA H100 80GB HBM3", 81559 / 1024)


def one_gpu() -> dict:
    """The shipped `gpu` scale: trained and evaluated on cuda, one process (a workstation's one GPU)."""
    return read_config(scale="gpu")


def check(config, gpus):
    lineage = build_lineage(config, base_dir=REPO, check_files=False)
    check_local_gpus(lineage, config["scales"][config["scale"]], config["scale"], gpus)


def test_a_cuda_scale_needs_a_gpu_here():
    config = one_gpu()
    for gpus, said in ((None, "is not installed"), ([], "lists none")):
        with pytest.raises(
            ConfigError, match=rf"scale gpu trains on cuda, but this machine has no NVIDIA GPU .*{said}"
        ):
            check(config, gpus)
    check(config, [H100])  # an H100 holds what the scale plans (fit.py: against 79.18 GiB)


def test_too_few_or_too_small_gpus_are_refused_naming_the_fix():
    config = one_gpu()
    two = copy.deepcopy(config)
    two["scales"]["gpu"]["train"]["processes"] = 2
    with pytest.raises(ConfigError, match=r"runs\.\w+: 2 processes a node on cuda, but this machine has 1 GPU"):
        check(two, [H100])
    small = Gpu("NVIDIA GeForce RTX 4090", 24564 / 1024)
    with pytest.raises(
        ConfigError, match=r"plans its training for GPUs of 79.18 GiB .* RTX 4090 has 24.0 GiB; set train.gpu_gib"
    ):
        check(config, [small])
    config["scales"]["gpu"]["train"]["gpu_gib"] = 23.5  # planned against the card it has: runs
    check(config, [small])


def test_a_cpu_scale_asks_nothing():
    check(read_config(scale="embedded"), None)


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has an NVIDIA driver")
def test_the_workflow_refuses_before_any_job_and_a_dry_run_plans(tmp_path):
    workflow = copy_workflow(tmp_path / "workflow")
    proc = snakemake("data", "--cores", "1", "--config", "scale=gpu", cwd=workflow, check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"], proc.stdout + proc.stderr
    refusals = [line for line in proc.stderr.splitlines() if line.startswith("config error:")]
    assert len(refusals) == 1 and "scale gpu trains on cuda, but this machine has no NVIDIA GPU" in refusals[0]
    assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr, proc.stderr
    written = [p for p in (workflow / "results").rglob("*") if p.is_file()]
    # no job ran: only what planning writes (the digests of the shipped inputs, read by content)
    assert all("inputs" in p.parts or p.name == ".digest_cache.json" for p in written), written
    assert "data" in snakemake("data", "-n", "--config", "scale=gpu", cwd=workflow).stdout  # planning needs no GPU
