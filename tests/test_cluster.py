"""What a job asks of Slurm (lineage/workflow/cluster.py): explicit nodes, GPUs per node, memory per node
planned from the model, and the launch of one or several nodes."""

from __future__ import annotations

import copy
import shlex
from pathlib import Path

import pytest
import yaml
from workflow_helpers import write_checkpoint

from lineage.checkpoints.read import checkpoint_params
from lineage.workflow.cluster import Resources, host_memory_mb, launch_command
from lineage.workflow.runs import ConfigError, build_lineage

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
GPU = Resources(cpus=64, mem_mb=900_000, runtime=480, gpus=8)


def test_every_request_names_its_nodes_and_asks_for_gpus_per_node():
    one = GPU.snakemake(nodes=1)
    assert one == {
        "nodes": 1,
        "mem_mb": 900_000,
        "runtime": 480,
        "cpus_per_task": 64,
        "gres": "gpu:8",
        "tasks_per_gpu": 0,
    }
    assert Resources(cpus=2, mem_mb=2000, runtime=10).snakemake() == {
        "nodes": 1,
        "mem_mb": 2000,
        "runtime": 10,
        "cpus_per_task": 2,
    }  # CPU-only: no GPU key at all
    typed = Resources(cpus=64, mem_mb=1, runtime=1, gpus=8, gpu_type="h200")
    assert typed.snakemake()["gres"] == "gpu:h200:8"
    flag = Resources(cpus=64, mem_mb=1, runtime=1, gpus=8, gpu_request="gpus_per_node").snakemake()
    assert "gres" not in flag and flag["slurm_extra"] == "--gpus-per-node=8"


def test_a_job_of_several_nodes_takes_the_plugins_mpi_path_with_one_task_per_node():
    two = GPU.snakemake(nodes=2)
    # mpi: the jobstep runs the rule in the batch step, whose srun starts the tasks; tasks == nodes;
    # tasks_per_gpu 0 keeps the plugin from turning `tasks` into --ntasks-per-gpu
    assert two["nodes"] == 2 and two["tasks"] == 2 and two["mpi"] == "srun" and two["tasks_per_gpu"] == 0
    assert two["gres"] == "gpu:8" and two["mem_mb"] == 900_000  # both per node


def test_one_node_launches_accelerate_and_several_launch_one_accelerate_per_node_through_srun():
    assert launch_command(1, 8, GPU).endswith(
        "--config_file workflow/accelerate/fsdp2.yaml --num_processes 8 --num_cpu_threads_per_process 8"
    )  # 64 CPUs of the node, 8 ranks
    assert launch_command(1, 2, Resources(cpus=2, mem_mb=1, runtime=1)).endswith("--num_cpu_threads_per_process 1")
    words = shlex.split(launch_command(4, 8, GPU))
    assert words[0] == "srun" and "--nodes=4" in words and "--ntasks-per-node=1" in words
    assert "--cpus-per-task=64" in words and "--gres=gpu:8" in words and "--kill-on-bad-exit=1" in words
    assert words[-3:] == ["workflow/scripts/launch_node.sh", "8", "2"]  # 64 CPUs a node shared by 32 ranks


def test_planned_host_memory_covers_the_staged_state_and_every_process():
    small, large = host_memory_mb(1_000_000, 8), host_memory_mb(31_600_000_000, 8)
    assert large >= 31.6e9 * 12 / 2**20 + 8 * 6 * 1024  # fp32 weights and two Adam moments staged, 8 processes
    assert host_memory_mb(31_600_000_000, 8, nodes=2) < large  # the state is spread over the nodes
    assert small % 1024 == 0 and small < large < 900_000  # the constant it replaces asked for 900 GB
    assert host_memory_mb(1_000_000, 1) < small


def test_params_are_counted_from_the_headers(tmp_path):
    ckpt = write_checkpoint(tmp_path / "ckpt", {"a": (4, 8), "b": (16,), "c": (2, 3, 5)})
    assert checkpoint_params(ckpt) == 32 + 16 + 30


def full_scale(tmp_path: Path, **train) -> dict:
    config = copy.deepcopy(CONFIG)
    config["scale"] = "full"
    full = config["scales"]["full"]
    full["stage1"]["path"] = str(write_checkpoint(tmp_path / "stage1", {"w": (1000, 1000)}))
    full["export"]["path"] = "resources/sample/battles.jsonl"
    full["eval"] |= {"unlisted": "sample", "items": {}, "sizes": {}}  # the shipped samples stand in
    full["train"] |= train
    return config


def test_mem_auto_asks_for_what_the_planner_says_the_stage1_model_needs(tmp_path):
    lineage = build_lineage(full_scale(tmp_path), base_dir=REPO)
    assert lineage.resources["train"].mem_mb == host_memory_mb(1_000_000, 8)
    assert lineage.resources["train"].snakemake(nodes=1)["mem_mb"] == host_memory_mb(1_000_000, 8)


def test_mem_auto_without_a_checkpoint_to_count_is_refused_with_the_key(tmp_path):
    config = copy.deepcopy(CONFIG)
    config["scales"]["embedded"]["resources"]["train"]["mem_mb"] = "auto"
    with pytest.raises(ConfigError, match=r"scales.embedded.resources.train.mem_mb: auto plans host memory"):
        build_lineage(config, base_dir=REPO)


def test_nodes_multiply_the_world_size_and_overrides_apply_per_run(tmp_path):
    config = full_scale(tmp_path, nodes=2)
    config["runs"]["sftw4"].setdefault("overrides", {})["full"] = {"nodes": 4}
    lineage = build_lineage(config, base_dir=REPO)
    assert lineage.runs["sftw2"].nodes == 2 and lineage.runs["sftw2"].world_size == 16
    assert lineage.runs["sftw4"].world_size == 32
