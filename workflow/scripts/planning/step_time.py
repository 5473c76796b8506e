"""Seconds an optimizer step takes: compute and communication.

Compute = model FLOPs per step (lineage.modeling.ParamCounts.step_flops) / (GPUs x peak FLOP/s x MFU),
with the MFU this trainer measured on one H200 (measured.py). Communication = the bytes each GPU sends
per step over the slowest link its collectives cross, at bus bandwidths given by --intra-gbs /
--inter-gbs (assumed, not measured here: NCCL's typical all-gather bus bandwidth over NVLink on 8
H100/H200, and 400 Gb/s per GPU across nodes):
- full sharding over N x G ranks: per micro-batch the bf16 parameters are gathered twice (forward,
  and again in backward after resharding) and the fp32 gradients reduce-scattered, 8 bytes per
  parameter x (W-1)/W, across nodes as soon as N > 1; with --accumulate unsharded once per step
  one gather and one reduce-scatter, 6 bytes per parameter x (W-1)/W;
- hybrid (HSDP): the same within the node, over NVLink, and once per step an all-reduce of each
  GPU's fp32 gradient shard across the N nodes (2 x (N-1)/N x 4P/G bytes), the only traffic that
  leaves a node; the price is 16 bytes x P / G of state per GPU instead of / (N x G).
With expert parallelism E (train.expert_parallel) the routed experts of each MoE layer are split over E
GPUs of a node and FSDP gathers only the rest (and each expert group over the W/E ranks that share it);
every token then travels to its top-k experts' GPUs and back by all-to-all: tokens x top-k x hidden x 2
bytes, dispatch and combine, in forward and backward, and the dispatch again in the checkpointed rerun
(which stops before the experts' down GEMM and the combine), (E-1)/E of it leaving the GPU, at --a2a-gbs
(assumed: the all-gather's bus bandwidth). The all-to-all waits on the router and the experts wait on it,
so it is added to the step, never overlapped. FSDP overlaps its communication with compute, so a step
takes between max(compute, FSDP communication) and their sum (plus the all-to-all); reports give both.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from lineage import families
from lineage.modeling import ParamCounts
from lineage.parallel_dims import ParallelDims

INTRA_GBS = 360.0  # assumed NCCL bus bandwidth within an 8-GPU NVLink node, GB/s per GPU
INTER_GBS = 45.0  # assumed across nodes: 400 Gb/s per GPU (one NIC each), GB/s
A2A_GBS = INTRA_GBS  # assumed all-to-all bus bandwidth within a node, GB/s per GPU (messages of ~100 MB: NVLink-bound)


def step_seconds(flops: float, gpus: int, peak_tflops: float, mfu: float) -> float:
    return flops / (gpus * peak_tflops * 1e12 * mfu)


@dataclass(frozen=True)
class Traffic:
    """Bytes one GPU sends per optimizer step, within its node and across nodes, and the seconds they take."""

    intra_bytes: float
    inter_bytes: float
    seconds: float


def traffic(
    params: int,
    *,
    dims: ParallelDims,
    micro_steps: int,
    intra_gbs: float = INTRA_GBS,
    inter_gbs: float = INTER_GBS,
    accumulate: str = "sharded",
    experts: int = 0,
) -> Traffic:
    """FSDP2's collectives per step (the module docstring gives the model) on the mesh `dims` lays out.

    With expert parallelism E the `experts` parameters are split over E GPUs and each part is
    sharded over the W/E ranks that hold it, so per parameter they move (W/E - 1)/(W/E) / E as much.
    """
    world = dims.world_size
    if dims.expert > 1:
        group = dims.expert_data
        params = (params - experts) + experts / dims.expert * ((group - 1) / group) / ((world - 1) / world)
    per_micro = 8.0 * params  # bf16 gather in forward and in backward, fp32 reduce-scatter
    if accumulate == "unsharded":  # one bf16 gather and one fp32 reduce-scatter a step
        per_micro, micro_steps = 6.0 * params, 1
    if dims.hybrid:  # gathers within a node's shard group; one all-reduce of the gradients across the replicas
        shard, replicas = dims.shard, dims.replicate
        intra = micro_steps * per_micro * (shard - 1) / shard
        inter = 2.0 * (replicas - 1) / replicas * 4.0 * params / shard
        return Traffic(intra, inter, intra / (intra_gbs * 1e9) + inter / (inter_gbs * 1e9))
    moved = micro_steps * per_micro * (world - 1) / world
    if dims.nodes == 1:
        return Traffic(moved, 0.0, moved / (intra_gbs * 1e9))
    return Traffic(0.0, moved, moved / (inter_gbs * 1e9))  # a ring over every rank is as slow as its slowest link


def all_to_all_bytes(
    model: torch.nn.Module, tokens_per_gpu: float, expert_parallel: int, checkpointing: bool | str
) -> float:
    """Bytes one GPU sends per step to dispatch its tokens to their experts' GPUs and combine them back."""
    if expert_parallel == 1:
        return 0.0
    config = model.config
    moe_layers = len(families.expert_modules(model))
    width = getattr(config, "moe_latent_size", None) or config.hidden_size
    # dispatch and combine in forward and backward; full checkpointing's rerun sends the dispatch only
    # (last_product.py), selective's reruns both (its policy keeps products' outputs, not the all-to-all's)
    passes = 2 * 2 + {True: 1, "selective": 2}.get(checkpointing, 0)
    return (
        tokens_per_gpu
        * config.num_experts_per_tok
        * width
        * 2
        * passes
        * moe_layers
        * (expert_parallel - 1)
        / expert_parallel
    )


@dataclass(frozen=True)
class StepTime:
    compute: float
    traffic: Traffic
    all_to_all: float = 0.0  # seconds; on the critical path

    @property
    def overlapped(self) -> float:
        return max(self.compute, self.traffic.seconds) + self.all_to_all

    @property
    def serial(self) -> float:
        return self.compute + self.traffic.seconds + self.all_to_all


def step_time(
    counts: ParamCounts,
    *,
    tokens: int,
    loss_share: float,
    dims: ParallelDims,
    micro_steps: int,
    mfu: float,
    peak_tflops: float,
    intra_gbs: float = INTRA_GBS,
    inter_gbs: float = INTER_GBS,
    accumulate: str = "sharded",
    experts: int = 0,
    all_to_all_bytes: float = 0.0,
    a2a_gbs: float = A2A_GBS,
) -> StepTime:
    flops = counts.step_flops(tokens, int(tokens * loss_share))
    compute = step_seconds(flops, dims.world_size, peak_tflops, mfu)
    moved = traffic(
        counts.total,
        dims=dims,
        micro_steps=micro_steps,
        intra_gbs=intra_gbs,
        inter_gbs=inter_gbs,
        accumulate=accumulate,
        experts=experts,
    )
    return StepTime(compute, moved, all_to_all_bytes / (a2a_gbs * 1e9))
