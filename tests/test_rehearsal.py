"""tools/rehearse.py: one process plays rank r of an N-rank job (torch's fake process group), on the trainer's own
sharding and steps. Each case runs in a process of its own: a process group is process-wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from workflow_helpers import REPO

TOOLS, SCRIPTS = REPO / "tools", REPO / "workflow" / "scripts"


def python(code: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SCRIPTS), str(TOOLS)]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, *(["-c", code] if code else []), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_what_the_rehearsal_relies_on_in_torch_s_private_fake_group():
    """torch.testing._internal.distributed.fake_pg is private: pin what is used of it. One process joins as rank 3
    of 8; FSDP2 shards a layer over the 8 (this rank allocates 1/8 of it) and takes the rehearsal's own all-gather
    and reduce-scatter (set_custom_*), so what the step computes does not hang on what the fake group returns."""
    code = textwrap.dedent(
        """
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import fully_shard
        from rehearsal import world
        from lineage.parallel_dims import ParallelDims

        env = world.join(3, ParallelDims(nodes=1, processes_per_node=8), torch.device("cpu"))
        assert dist.get_backend() == "fake" and dist.get_world_size() == 8 and dist.get_rank() == 3
        from lineage.training.dist import all_reduce_sum, rehearsing
        assert rehearsing() and all_reduce_sum(torch.ones(2)).tolist() == [8.0, 8.0]
        from lineage.training.fsdp import sum_gradients

        layer = torch.nn.Linear(16, 8, bias=False)
        fully_shard(layer)
        sum_gradients(layer, layer.weight.device_mesh)  # the trainer's reduction: a sum over ranks
        local = layer.weight.to_local()
        assert local.shape == (1, 16), local.shape
        with torch.no_grad():
            local.copy_(torch.arange(16.0).view(1, 16))
        assert world.give_rules(layer) == 1
        out = layer(torch.ones(2, 16))  # the all-gather tiles this rank's row into all 8
        assert torch.equal(out, torch.full((2, 8), 120.0)), out
        out.sum().backward()  # the reduce-scatter keeps this rank's chunk, times 8 (every rank holds the same)
        assert torch.equal(layer.weight.grad.to_local(), torch.full((1, 16), 2.0 * 8)), layer.weight.grad
        print("pinned")
        """
    )
    assert "pinned" in python(code).stdout


def test_the_embedded_sftw2_rehearsed_as_rank_5_of_8_with_its_experts_split(tmp_path):
    """The embedded recipe at world 8 needs overrides, which the command names: its 16 rows split over 8 ranks in
    micro-batches of 2 (not 4), and its tiny model's 4 experts over E = 4 ranks of a node of 8. The rank holds 1/8
    of the weights and its own optimizer state, runs the trainer's steps, and the report says what it assumed."""
    summary = tmp_path / "summary.json"
    proc = python(
        "",
        "tools/rehearse.py",
        "sftw2",
        "--scale",
        "embedded",
        "--rank",
        "5",
        "--world",
        "8",
        "--ranks-per-node",
        "8",
        "--micro-batch-rows",
        "2",
        "--expert-parallel",
        "4",
        "--steps",
        "5",
        "--timed-from",
        "2",
        "--profile-steps",
        "1",
        "--summary",
        str(summary),
    )
    out = proc.stdout
    assert "rank 5 of 8 (8 a node), expert parallel 4" in out
    assert "routing is balanced" in out and "the network is not measured" in out
    assert [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ") and "step" not in line][
        :3
    ] == ["1", "2", "3"]
    report = json.loads(summary.read_text())
    assert report["steps"] == [2, 3] and report["tokens_per_s_rank"] > 0
    params = int(out.split(" parameters (")[0].rsplit(", ", 1)[1].replace(",", ""))
    held = report["held_gib"]["weights"] * 2**30 / 4  # fp32
    # about 1/8 (FSDP cuts dim 0 in chunks of ceil(d/8), so a rank holds a little more or less than the mean;
    # rank 5 is (dp_mod_ep 1, ep 1) of the (2, 4) mesh: its expert group's single expert went to its dp peer)
    assert params / 16 < held < params / 4, (held, params)
    assert report["held_gib"]["optimizer"] == pytest.approx(2 * report["held_gib"]["weights"], rel=0.05)


def test_holding_memory_back_is_refused_off_a_gpu_in_one_line():
    """--hold-back-gib caps the CUDA allocator (the headroom shown by running under the cap): on CPU it says so."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SCRIPTS), str(TOOLS)])}
    args = ["tools/rehearse.py", "sftw2", "--scale", "embedded", "--hold-back-gib", "4"]
    proc = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        "--hold-back-gib caps the CUDA allocator: rehearse on a GPU (--device cuda)"
    )


def test_host_delay_runs_before_every_fsdp_forward_and_each_checkpoint_rerun(tmp_path):
    """--host-delay-us (is the host behind the GPU at FSDP's hooks?) spins before every FSDP module's forward: with
    full checkpointing a block's own forward runs once a micro-batch (its checkpoint reruns what is inside it) and
    each experts module, an FSDP module inside its block, once more in the rerun."""
    overlay = tmp_path / "checkpointed.yaml"
    overlay.write_text("scales:\n  embedded:\n    train:\n      activation_checkpointing: true\n")
    summary = tmp_path / "summary.json"
    proc = python(
        "",
        *("tools/rehearse.py", "sftw2", "--scale", "embedded", "--configfile", str(overlay)),
        *("--rank", "5", "--world", "8", "--ranks-per-node", "8", "--expert-parallel", "4"),
        *("--micro-batch-rows", "1", "--steps", "3", "--timed-from", "2", "--host-delay-us", "300"),
        *("--summary", str(summary)),
    )
    header = next(line for line in proc.stdout.splitlines() if line.startswith("rehearsal: sftw2"))
    modules = int(header.split(" FSDP modules")[0].rsplit(" ", 1)[1])
    experts = int(header.split(" expert layers routed")[0].rsplit(" ", 1)[1])
    micro_batches = 16 // 8 // 1  # the embedded recipe's 16 rows over 8 ranks, one row a micro-batch
    delay = json.loads(summary.read_text())["host_delay"]
    assert (modules, experts) == (7, 2)  # the root, 4 blocks, 2 experts modules of the tiny Nemotron-H
    assert delay["calls_per_step"] == micro_batches * (modules + experts)
    assert delay["added_s_per_step"] == pytest.approx(delay["calls_per_step"] * 300e-6)
    assert f"{delay['calls_per_step']:.0f} calls a step (reruns included)" in proc.stdout
