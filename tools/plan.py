"""Plan a training job before asking for GPUs: memory per GPU and node, and step time, on N nodes x G GPUs.

The model is built on the meta device from a named shape (no weights, no download) and its
parameters counted exactly; memory then follows from how this project trains:

- fp32 master weights, fp32 gradients and AdamW's two fp32 moments, all sharded: 16 bytes x P / N;
- bf16 copies of the blocks being all-gathered (the current one and the prefetched next) and the
  root (embeddings, head) for the whole step, plus one block's fp32 gradients before reduce-scatter;
  with --accumulate unsharded every block's bf16 weights and the full fp32 gradients instead
  (4 bytes x P less the shard that the static term already holds);
- activations saved for backward, per token and layer, counted from the tensors each layer type
  keeps in bf16 (attention through SDPA/flash, so no sequence-squared term); with activation
  checkpointing only each layer's input, plus one layer's full activations while it is recomputed;
- the logits of the positions with a loss (--loss-share of the tokens; the head runs only there): bf16
  output, its fp32 copy for the loss and the fp32 gradient (10 bytes x tokens x vocab; with chunked
  cross-entropy the fp32 part of one chunk only); with --fused-loss liger or cce none of them, only
  the head's fp32 gradient accumulator and one chunk; with --fused-loss compiled the bf16 logits
  and their bf16 gradient (4 bytes x tokens x vocab); with --fused-loss inplace one bf16 buffer that
  holds the logits, then their gradient (2 bytes x tokens x vocab);
- a fixed 1 GiB for the CUDA context and allocator slack.

Host memory per node is lineage.workflow.cluster.host_memory_mb (what `mem_mb: auto` asks Slurm for).

Step time has two parts. Compute = model FLOPs per step (lineage.modeling.ParamCounts.step_flops)
/ (GPUs x peak FLOP/s x MFU), with the MFU this trainer measured on one H200 (benchmarks/RESULTS.md).
Communication = the bytes each GPU sends per step over the slowest link its collectives cross,
at bus bandwidths given by --intra-gbs / --inter-gbs (assumed, not measured here: NCCL's typical
all-gather bus bandwidth over NVLink on 8 H100/H200, and 400 Gb/s per GPU across nodes):
- full sharding over N x G ranks: per micro-batch the bf16 parameters are gathered twice (forward,
  and again in backward after resharding) and the fp32 gradients reduce-scattered, 8 bytes per
  parameter x (W-1)/W, across nodes as soon as N > 1; with --accumulate unsharded once per step
  one gather and one reduce-scatter, 6 bytes per parameter x (W-1)/W;
- hybrid (HSDP): the same within the node, over NVLink, and once per step an all-reduce of each
  GPU's fp32 gradient shard across the N nodes (2 x (N-1)/N x 4P/G bytes), the only traffic that
  leaves a node; the price is 16 bytes x P / G of state per GPU instead of / (N x G).
With expert parallelism E (train.expert_parallel; planned here, see README), the routed experts of each
MoE layer are split over E GPUs of a node and FSDP gathers only the rest (and each expert group over the
W/E ranks that share it); every token then travels to its top-k experts' GPUs and back by all-to-all:
tokens x top-k x hidden x 2 bytes, dispatch and combine, in forward and backward, and the dispatch again
in the checkpointed recompute (which stops before the experts' down GEMM and the combine), (E-1)/E of it
leaving the GPU, at --a2a-gbs (assumed: the all-gather's bus bandwidth).
The all-to-all waits on the router and the experts wait on it, so it is added to the step, never
overlapped. FSDP overlaps its communication with compute, so a step takes between
max(compute, FSDP communication) and their sum (plus the all-to-all); the report gives both.

Rows are max_length tokens each unless --token-stats gives the real lengths (the `token_stats` rule:
each training set tokenized as its trainer does): a step's rows are then drawn from the run's sets
and packed per rank into micro-batches of pack_tokens with the trainer's own packer, so a step's
tokens and its number of micro-batches (each one a round of FSDP gathers) are what training sees. `--check` compares the memory model with the runs measured
on one H200; `--lineage` plans every trained run of the card's lineage (config.yaml, full scale).

Run as:
    python tools/plan.py --family nemotron_h --size 30b_a3b --vocab 131072 --gpus 8 --gpu-gib 80 \
        --global-batch-rows 512 --micro-batch-rows 2 --tokens-per-row 4096 --activation-checkpointing
    python tools/plan.py --nodes 2 --sharding hybrid ...
    python tools/plan.py --lineage --nodes-list 1,2,4
    python tools/plan.py --lineage --nodes-list 1 --expert-parallel-list 1,8 \
        --token-stats results/embedded/data/token_stats.json
    python tools/plan.py --check
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

import torch  # noqa: E402
import yaml  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

from lineage.errors import run_cli  # noqa: E402
from lineage.modeling import (  # noqa: E402
    CONFIG_CLASSES,
    SHAPES,
    ParamCounts,
    count_params,
    routed_experts,  # noqa: E402
)
from lineage.training.data import pack_groups  # noqa: E402
from lineage.training.fsdp import ACCUMULATIONS, blocks  # noqa: E402
from lineage.training.recipe import FUSED_LOSSES  # noqa: E402
from lineage.workflow.cluster import host_memory_mb  # noqa: E402
from lineage.workflow.runs import speed_settings, with_overrides  # noqa: E402

GIB = 1024**3
RUNTIME_BYTES = 1 * GIB
# the same settings by pack size: each micro-batch's grouped expert GEMMs get fewer rows at smaller packs (4,096
# tokens x top-6 / 128 experts = 192 a expert) and the fixed per-micro-batch work (FSDP's copies and casts,
# kernel launches for 52 layers three times) is spread over fewer tokens. One rank of the card's node
# (30b_a3b_rank8: 52 layers, the 16 experts a rank holds at E = 8) at its 64-row share of the 512-row step,
# liger's loss, blocks compiled under full checkpointing whose rerun leaves out each block's last product, the
# trainer's expert dispatch (train_speed.sh rk_full_{4k,8k,16k,32k}_liger_64, one H200, 2026-12-04; without
# attention FLOPs). 32,768 the mean of two calls on two machines (33.7%, 33.6%); 16,384 and 4,096-8,192 one call
# each. DPO's own run at its 16,384-token packs (dpo_speed.sh e_rank_full_16k_64) measured 33.0%: DPO is planned
# from this table, a little slower
MEASURED_MFU_BY_PACK = {4096: 0.099, 8192: 0.158, 16384: 0.307, 32768: 0.336}
# ours, Nemotron-H at the card's widths with the full scale's settings (packed, compiled blocks, activation
# checkpointing: its recompute is in the step, not in the FLOPs) at its packs of 32,768 tokens; without attention
# FLOPs, as step_time counts them (its attention layer adds 0.1 points at these rows)
MEASURED_MFU = MEASURED_MFU_BY_PACK[32768]
CHAT_LOSS_SHARE = 0.72  # trained tokens / tokens of the benchmark chat rows (2,007,140 / 2,789,514)
FUSED_CHUNK_ROWS = 1024  # liger-kernel's chunk of positions is at most about this at these vocabularies
INTRA_GBS = 360.0  # assumed NCCL bus bandwidth within an 8-GPU NVLink node, GB/s per GPU
INTER_GBS = 45.0  # assumed across nodes: 400 Gb/s per GPU (one NIC each), GB/s
A2A_GBS = INTRA_GBS  # assumed all-to-all bus bandwidth within a node, GB/s per GPU (messages of ~100 MB: NVLink-bound)
# Checkpoint I/O, measured on one H200 (benchmarks/checkpoint_io.py; benchmarks/RESULTS.md "Checkpoint I/O"):
# one rank's bytes per second reading its rows from a cold page cache, and writing them (pwrite, sha256, fsync);
# the former path's rank 0 reading the whole checkpoint into fp32, and gathering and writing it alone.
RANK_READ_GBS = 1.01
RANK_WRITE_GBS = 0.36
RANK0_READ_GBS = 0.80
RANK0_WRITE_GBS = 0.26
# Generation, measured on one H200 (benchmarks/continuous_batching.py, 2026-12-04): the card's widths at 7 layers
# (30b_a3b_reduced), bf16, the benchmarks' items at their answer lengths; tokens/s over the benchmarks of a call
# (32 rows: 192 items each of GSM8K / IFEval / degeneration; 128 rows: 256 each of GSM8K / IFEval), by
# (eval.cache, eval.batch_size). A decode step reads every layer's weights: the 52-layer model is planned at 7/52.
DECODE_TOKENS_PER_S = {
    ("graph", 32): 3_948,
    ("continuous", 32): 5_447,
    ("graph", 128): 7_956,
    ("continuous", 128): 7_066,
}
DECODE_LAYERS_MEASURED = 7
ANSWER_TOKENS = {"gsm8k": 184, "ifeval": 375, "degen": 298}  # mean answer lengths of that benchmark (assumed)
SCORING_TOKENS = {"mmlu": 150, "margin": 1100}  # tokens a scored item's forward reads (prompt, both answers)
SCORING_MFU = 0.30  # packed scoring forward (assumed, below the measured training MFU of 32k packs)
CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


@dataclass(frozen=True)
class Measured:
    """A single-H200 run of benchmarks/ (train_gpu_compare.sh, train_speed.sh) and its measured peak."""

    name: str
    family: str
    size: str
    vocab: int
    micro_tokens: int
    measured_gib: float
    loss_share: float = 1.0
    ce_chunk_tokens: int = 0
    fused_loss: str = "none"
    compiled: bool = False  # compiled blocks keep fewer activations than the model counts
    accumulate: str = "sharded"
    checkpointing: bool = False


MEASURED = (
    Measured("Llama 0.98B, padded, 16 x 1,133 tokens", "llama", "1b", 2048, 16 * 1133, 44.9),
    Measured("Llama 0.98B, packed, 4,096 tokens", "llama", "1b", 2048, 4096, 22.4),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 16,384, fused loss",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        16384,
        93.5,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, fused loss",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        99.5,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, unfused",
        "llama",
        "1b",
        128256,
        32768,
        89.3,
        CHAT_LOSS_SHARE,
        compiled=True,
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, fused loss",
        "llama",
        "1b",
        128256,
        32768,
        56.6,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        compiled=True,
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, compiled loss, unsharded",
        "llama",
        "1b",
        128256,
        32768,
        68.3,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, fused loss, unsharded",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        101.2,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, compiled loss, unsharded",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        110.4,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, in-place loss, unsharded, 512 rows",
        "llama",
        "1b",
        128256,
        32768,
        67.7,
        CHAT_LOSS_SHARE,
        fused_loss="inplace",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, in-place loss, unsharded, 512 rows",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        105.3,
        CHAT_LOSS_SHARE,
        fused_loss="inplace",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, fused loss, activation checkpointing",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        88.0,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        checkpointing=True,
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, compiled loss, activation checkpointing",
        "nemotron_h",
        "30b_a3b_reduced",
        131072,
        32768,
        88.0,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        checkpointing=True,
    ),
)


@dataclass
class Plan:
    counts: ParamCounts
    static: float  # bytes per GPU
    gathered: float
    activations: float
    logits: float

    @property
    def peak(self) -> float:
        return self.static + self.gathered + self.activations + self.logits + RUNTIME_BYTES


def build_meta_model(family: str, size: str, vocab: int) -> torch.nn.Module:
    if (family, size) not in SHAPES:
        raise SystemExit(f"no shape {family}/{size}; known: {', '.join(f'{f}/{s}' for f, s in SHAPES)}")
    config = CONFIG_CLASSES[family](**SHAPES[(family, size)], vocab_size=vocab)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def layer_kinds(model: torch.nn.Module) -> list[str]:
    config = model.config
    kinds = getattr(config, "layers_block_type", None)
    if kinds:
        return list(kinds)
    if getattr(config, "num_experts", 0):  # Qwen3-MoE: sparse layers as transformers builds them
        return [
            "attention_moe"
            if i not in config.mlp_only_layers and (i + 1) % config.decoder_sparse_step == 0
            else "attention_mlp"
            for i in range(config.num_hidden_layers)
        ]
    return ["attention_mlp"] * config.num_hidden_layers


def activation_bytes_per_token(kind: str, config) -> int:
    """bf16 bytes a layer of this kind keeps for backward, per token (norms, projections, products)."""
    h = config.hidden_size
    heads, kv = config.num_attention_heads, getattr(config, "num_key_value_heads", config.num_attention_heads)
    head_dim = getattr(config, "head_dim", None) or h // heads
    attention = 2 * (2 * h + heads * head_dim + 2 * kv * head_dim + 2 * heads * head_dim + h)  # in, norm, qkv, out, o
    if kind == "attention_mlp":  # a Llama decoder layer: attention, then a SwiGLU MLP
        return attention + 2 * (2 * h + 4 * config.intermediate_size)
    if kind == "attention_moe":  # attention, router (fp32), top-k routed SwiGLU experts with their dispatch copies
        k, expert = config.num_experts_per_tok, config.moe_intermediate_size
        return attention + 4 * config.num_experts + 2 * k * (2 * h + 4 * expert)
    if kind == "full_attention":
        return attention
    if kind == "linear_attention":  # Mamba-2: in_proj output, conv output, scan output, gate, norm
        inner = config.mamba_num_heads * config.mamba_head_dim
        in_proj = 2 * inner + 2 * config.n_groups * config.ssm_state_size + config.mamba_num_heads
        return 2 * (2 * h + in_proj + 3 * inner)
    if kind == "moe":  # router (fp32), shared expert, top-k routed experts with their dispatch copies
        k, expert, shared = (
            config.num_experts_per_tok,
            config.moe_intermediate_size,
            config.moe_shared_expert_intermediate_size,
        )
        return 4 * config.n_routed_experts + 2 * (2 * h + 3 * shared) + 2 * k * (2 * h + 3 * expert)
    if kind == "mlp":
        return 2 * (2 * h + 3 * config.intermediate_size)
    raise ValueError(f"unknown layer kind {kind!r}")


def saved_bytes_per_token(kind: str, config) -> int:
    """bf16 bytes a layer keeps under selective checkpointing (lineage/training/checkpointing.py), per token: its
    input, and the outputs of its matrix products and attention; the elementwise work is recomputed."""
    h = config.hidden_size
    heads, kv = config.num_attention_heads, getattr(config, "num_key_value_heads", config.num_attention_heads)
    head_dim = getattr(config, "head_dim", None) or h // heads
    attention = 2 * (heads * head_dim + 2 * kv * head_dim + heads * head_dim + h)  # q, k, v, attention out, o_proj
    if kind in ("full_attention",):
        return 2 * h + attention
    if kind == "linear_attention":  # in_proj and out_proj outputs (the scan's kernels recompute their inside)
        inner = config.mamba_num_heads * config.mamba_head_dim
        in_proj = 2 * inner + 2 * config.n_groups * config.ssm_state_size + config.mamba_num_heads
        return 2 * h + 2 * (in_proj + h)
    if kind == "moe":  # router logits (fp32), shared expert up/down, each routed copy's up/down outputs
        k, expert, shared = (
            config.num_experts_per_tok,
            config.moe_intermediate_size,
            config.moe_shared_expert_intermediate_size,
        )
        return 2 * h + 4 * config.n_routed_experts + 2 * (shared + h) + 2 * k * (expert + h)
    if kind == "mlp":
        return 2 * h + 2 * (config.intermediate_size + h)
    if kind == "attention_mlp":
        return 2 * h + attention + 2 * (2 * config.intermediate_size + h)
    if kind == "attention_moe":
        k, expert = config.num_experts_per_tok, config.moe_intermediate_size
        return 2 * h + attention + 4 * config.num_experts + 2 * k * (2 * expert + h)
    raise ValueError(f"unknown layer kind {kind!r}")


def expert_params(module: torch.nn.Module) -> int:
    """Parameters of the routed experts under `module` (transformers' `*Experts`: 3-D weights)."""
    return sum(
        p.numel()
        for m in module.modules()
        if type(m).__name__.endswith("Experts")
        for p in m.parameters(recurse=False)
        if p.dim() == 3
    )


def check_expert_parallel(model: torch.nn.Module, expert_parallel: int, gpus: int) -> None:
    """Refused where E does not divide the experts of a layer or the GPUs of a node."""
    if expert_parallel == 1:
        return
    experts = routed_experts(model.config)
    if not experts:
        raise SystemExit(f"expert parallel {expert_parallel}: {type(model).__name__} has no routed experts")
    if experts % expert_parallel or gpus % expert_parallel:
        raise SystemExit(
            f"expert parallel {expert_parallel} must divide the {experts} routed experts of a layer "
            f"and the {gpus} GPUs of a node"
        )


def plan(
    model: torch.nn.Module,
    *,
    gpus: int,
    micro_tokens: int,
    checkpointing: bool,
    ce_chunk_tokens: int = 0,
    loss_share: float = 1.0,
    fused_loss: str = "none",
    accumulate: str = "sharded",
    expert_parallel: int = 1,
) -> Plan:
    counts = count_params(model)
    total = counts.total
    # what FSDP gathers of a block: the rest whole, the experts of this GPU's group (1/E of them)
    block_params = [
        sum(p.numel() for p in block.parameters()) - expert_params(block) * (1 - 1 / expert_parallel)
        for block in blocks(model)
    ]
    root = total - sum(sum(p.numel() for p in block.parameters()) for block in blocks(model))
    static = 16 * total / gpus
    if accumulate == "unsharded":  # all weights in bf16, and the full fp32 gradients beside their shard
        gathered = 2 * total + 4 * total * (1 - 1 / gpus)
    else:
        gathered = 2 * (2 * max(block_params) + root) + 4 * max(block_params)
    per_layer = [activation_bytes_per_token(kind, model.config) for kind in layer_kinds(model)]
    if checkpointing == "selective":  # every layer's kept outputs, and one layer's recomputed whole in backward
        activations = micro_tokens * (
            sum(saved_bytes_per_token(kind, model.config) for kind in layer_kinds(model)) + max(per_layer)
        )
    elif checkpointing:
        activations = micro_tokens * (2 * model.config.hidden_size * len(per_layer) + max(per_layer))
    else:
        activations = micro_tokens * sum(per_layer)
    vocab, hidden = model.config.vocab_size, model.config.hidden_size
    loss_tokens = int(micro_tokens * loss_share)
    if fused_loss not in FUSED_LOSSES:
        raise ValueError(f"fused_loss {fused_loss!r}: expected one of {', '.join(FUSED_LOSSES)}")
    if fused_loss in ("liger", "cce"):  # no logits kept: the head's fp32 gradient accumulator, one chunk's fp32
        logits = 4 * vocab * hidden + 8 * min(FUSED_CHUNK_ROWS, loss_tokens) * vocab
    elif fused_loss == "compiled":  # the bf16 logits, then their bf16 gradient; the fp32 softmax stays in registers
        logits = 4 * loss_tokens * vocab
    elif fused_loss == "inplace":  # one bf16 buffer: the logits, then their gradient written over them
        logits = 2 * loss_tokens * vocab
    elif ce_chunk_tokens:  # the bf16 logits, but only one chunk's fp32 copy and gradient
        logits = (2 * loss_tokens + 8 * min(ce_chunk_tokens, loss_tokens)) * vocab
    else:
        logits = 10 * loss_tokens * vocab
    return Plan(counts, static, gathered, activations, logits)


def mfu_at(pack_tokens: int) -> float:
    """The measured MFU at this many tokens per micro-batch, interpolated in log2 between the measured
    packs (outside them: the nearest one)."""
    points = sorted(MEASURED_MFU_BY_PACK.items())
    if pack_tokens <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if pack_tokens <= x1:
            t = (math.log2(pack_tokens) - math.log2(x0)) / (math.log2(x1) - math.log2(x0))
            return y0 + t * (y1 - y0)
    return points[-1][1]


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
    nodes: int,
    gpus: int,
    sharding: str,
    micro_steps: int,
    intra_gbs: float = INTRA_GBS,
    inter_gbs: float = INTER_GBS,
    accumulate: str = "sharded",
    experts: int = 0,
    expert_parallel: int = 1,
) -> Traffic:
    """FSDP2's collectives per step (the module docstring gives the model); `gpus` is per node.

    With expert parallelism E the `experts` parameters are split over E GPUs and each part is
    sharded over the W/E ranks that hold it, so per parameter they move (W/E - 1)/(W/E) / E as much.
    """
    world = nodes * gpus
    if expert_parallel > 1:
        group = world // expert_parallel
        params = (params - experts) + experts / expert_parallel * ((group - 1) / group) / ((world - 1) / world)
    per_micro = 8.0 * params  # bf16 gather in forward and in backward, fp32 reduce-scatter
    if accumulate == "unsharded":  # one bf16 gather and one fp32 reduce-scatter a step
        per_micro, micro_steps = 6.0 * params, 1
    if sharding == "hybrid" and nodes > 1:
        intra = micro_steps * per_micro * (gpus - 1) / gpus
        inter = 2.0 * (nodes - 1) / nodes * 4.0 * params / gpus
        return Traffic(intra, inter, intra / (intra_gbs * 1e9) + inter / (inter_gbs * 1e9))
    moved = micro_steps * per_micro * (world - 1) / world
    if nodes == 1:
        return Traffic(moved, 0.0, moved / (intra_gbs * 1e9))
    return Traffic(0.0, moved, moved / (inter_gbs * 1e9))  # a ring over every rank is as slow as its slowest link


def shard_group(nodes: int, gpus: int, sharding: str) -> int:
    """The ranks that share one copy of the training state: a node (hybrid) or all of them."""
    return gpus if sharding == "hybrid" and nodes > 1 else nodes * gpus


def all_to_all_bytes(
    model: torch.nn.Module, tokens_per_gpu: float, expert_parallel: int, checkpointing: bool | str
) -> float:
    """Bytes one GPU sends per step to dispatch its tokens to their experts' GPUs and combine them back."""
    if expert_parallel == 1:
        return 0.0
    config = model.config
    moe_layers = sum(1 for m in model.modules() if type(m).__name__.endswith("Experts"))
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
    nodes: int,
    gpus: int,
    sharding: str,
    micro_steps: int,
    mfu: float,
    peak_tflops: float,
    intra_gbs: float = INTRA_GBS,
    inter_gbs: float = INTER_GBS,
    compute_factor: float = 1.0,
    accumulate: str = "sharded",
    experts: int = 0,
    expert_parallel: int = 1,
    all_to_all_bytes: float = 0.0,
    a2a_gbs: float = A2A_GBS,
) -> StepTime:
    """compute_factor: 4/3 for DPO (the frozen reference's forward on top of the policy's 3 passes)."""
    flops = compute_factor * counts.step_flops(tokens, int(tokens * loss_share))
    compute = step_seconds(flops, nodes * gpus, peak_tflops, mfu)
    moved = traffic(
        counts.total,
        nodes=nodes,
        gpus=gpus,
        sharding=sharding,
        micro_steps=micro_steps,
        intra_gbs=intra_gbs,
        inter_gbs=inter_gbs,
        accumulate=accumulate,
        experts=experts,
        expert_parallel=expert_parallel,
    )
    return StepTime(compute, moved, all_to_all_bytes / (a2a_gbs * 1e9))


def report(result: Plan, args) -> str:
    tokens_per_step = args.global_batch_rows * args.tokens_per_row
    world = args.nodes * args.gpus
    micro_steps = max(1, args.global_batch_rows // (args.micro_batch_rows * world))
    model = build_meta_model(args.family, args.size, args.vocab)
    timing = step_time(
        result.counts,
        tokens=tokens_per_step,
        loss_share=args.loss_share,
        nodes=args.nodes,
        gpus=args.gpus,
        sharding=args.sharding,
        micro_steps=micro_steps,
        mfu=args.mfu,
        peak_tflops=args.peak_tflops,
        intra_gbs=args.intra_gbs,
        inter_gbs=args.inter_gbs,
        accumulate=args.accumulate,
        experts=expert_params(model),
        expert_parallel=args.expert_parallel,
        all_to_all_bytes=all_to_all_bytes(
            model, tokens_per_step / world, args.expert_parallel, args.activation_checkpointing
        ),
        a2a_gbs=args.a2a_gbs,
    )
    gathered = (
        "all weights (bf16) and full fp32 grads (unsharded accumulation)"
        if args.accumulate == "unsharded"
        else "gathered bf16 blocks + root, one block's fp32 grads"
    )
    rows = [
        ("weights + grads + AdamW (fp32, sharded)", result.static),
        (gathered, result.gathered),
        (
            "activations ("
            + {False: "all kept", True: "checkpointed", "selective": "selective"}[args.activation_checkpointing]
            + ")",
            result.activations,
        ),
        ("LM head and loss (logits, or the fused kernel's gradient and chunk)", result.logits),
        ("CUDA context, allocator slack", RUNTIME_BYTES),
    ]
    group = shard_group(args.nodes, args.gpus, args.sharding)
    lines = [
        f"{args.family}/{args.size}: {result.counts.total / 1e9:.2f}B parameters, "
        f"{result.counts.active / 1e9:.2f}B active; "
        f"{args.nodes} node(s) x {args.gpus} GPUs of {args.gpu_gib} GiB, {args.sharding} sharding (state "
        f"sharded over {group} GPUs); micro-batch {args.micro_batch_rows} x {args.tokens_per_row} tokens, "
        f"{micro_steps} per step",
        "",
        "| memory per GPU | GiB |",
        "|---|---|",
    ]
    lines += [f"| {name} | {value / GIB:.1f} |" for name, value in rows]
    fits = "fits" if result.peak <= args.gpu_gib * GIB else "DOES NOT FIT"
    moved = timing.traffic
    lines += [
        f"| **peak** | **{result.peak / GIB:.1f}** ({fits}) |",
        "",
        f"host memory per node (mem_mb: auto): {host_memory_mb(result.counts.total, args.gpus) / 1024:,.0f} GiB",
        f"step of {args.global_batch_rows} rows x {args.tokens_per_row} tokens: compute {timing.compute:.1f} s "
        f"at MFU {args.mfu:.1%}; communication {moved.seconds:.1f} s ({moved.intra_bytes / 1e9:,.0f} GB per "
        f"GPU within the node at {args.intra_gbs:g} GB/s, {moved.inter_bytes / 1e9:,.0f} GB across nodes at "
        f"{args.inter_gbs:g} GB/s; expert parallel {args.expert_parallel}: all-to-all {timing.all_to_all:.1f} s); "
        f"step {timing.overlapped:.1f}-{timing.serial:.1f} s (overlapped-serial), "
        f"{tokens_per_step / timing.overlapped / world:,.0f}-{tokens_per_step / timing.serial / world:,.0f} "
        "tokens/s/GPU",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class PairLengths:
    """What a reference log-probs file says of the pairs a DPO run trains on (their real lengths)."""

    pairs: int
    mean_tokens: float  # chosen + rejected
    longest: int
    loss_share: float  # labelled completion tokens / tokens

    @classmethod
    def read(cls, path: Path) -> PairLengths:
        lines = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
        if not lines or "lengths" not in lines[0]:
            raise SystemExit(f"{path}: expected a reference_logprobs.py file (one line per pair with its lengths)")
        totals = [sum(line["lengths"]) for line in lines]
        labelled = sum(sum(line.get("labelled", line["lengths"])) for line in lines)
        return cls(len(lines), sum(totals) / len(totals), max(totals), labelled / sum(totals))


def dpo_micro_tokens(train: dict) -> int:
    """Tokens of a DPO micro-batch: a pack of pairs (default twice max_length), or micro_batch_rows pairs padded."""
    speed = speed_settings(train, "dpo")
    if speed["packing"]:
        return speed["pack_tokens"] or 2 * train["max_length"]
    return 2 * train["micro_batch_rows"] * train["max_length"]


def sft_micro_tokens(train: dict) -> int:
    """Tokens of a SFT micro-batch: a pack (default max_length), or micro_batch_rows rows padded."""
    speed = speed_settings(train, "sft")
    if speed["packing"]:
        return speed["pack_tokens"] or train["max_length"]
    return train["micro_batch_rows"] * train["max_length"]


@dataclass(frozen=True)
class Steps:
    """What one optimizer step of a run holds: tokens, the share with a loss, micro-batches per rank."""

    tokens: float
    loss_share: float
    micro_steps: float
    source: str  # where the lengths came from


class RowLengths:
    """The `token_stats` rule's histograms: steps drawn from a run's sets and packed as the trainer packs."""

    def __init__(self, path: Path):
        self.path = path
        self.sets = json.loads(path.read_text())["sets"]

    def covers(self, names) -> bool:
        return all(name in self.sets for name in names)

    def steps(self, names, *, rows: int, world: int, budget: int, samples: int = 64, seed: int = 0) -> Steps:
        lengths = [
            int(length) for name in names for length, n in self.sets[name]["histogram"].items() for _ in range(n)
        ]  # the run's sets concatenated, each row once, as the trainer samples them
        generator = torch.Generator().manual_seed(seed)
        tokens = packs = 0
        per_rank = rows // world
        for _ in range(samples):
            drawn = [lengths[i] for i in torch.randint(len(lengths), (rows,), generator=generator).tolist()]
            tokens += sum(drawn)
            packs += max(len(pack_groups(drawn[r * per_rank : (r + 1) * per_rank], budget)) for r in range(world))
        trained = sum(self.sets[n]["trained_tokens"] for n in names) / sum(self.sets[n]["tokens"] for n in names)
        return Steps(tokens / samples, trained, packs / samples, f"{self.path}")


def run_settings(train: dict, spec: dict) -> tuple[dict, int, dict]:
    """A run's full-scale train settings and steps as the workflow resolves them, and the train keys
    its overrides changed."""
    run_train, schedule = with_overrides(train, spec, "full")
    changed = {k: v for k, v in run_train.items() if train.get(k) != v}
    return run_train, schedule["steps"], changed


def busiest_rank_packs(tokens: float, micro_tokens: int, world: int) -> int:
    """Micro-batches of the rank with the most: a step's packs dealt over the ranks (a step waits for it)."""
    packs = math.ceil(tokens / micro_tokens)
    return max(1, math.ceil(packs / world))


def upper_bound_steps(train: dict, dpo: bool, world: int, lengths: PairLengths | None, micro_tokens: int) -> Steps:
    """Every row at max_length (every pair at twice that), unless a reference file gives the pairs;
    `micro_tokens` a micro-batch (a pack, or micro_batch_rows rows padded)."""
    rows, length = train["global_batch_rows"], train["max_length"]
    if not dpo:
        tokens = rows * length
        return Steps(
            tokens, CHAT_LOSS_SHARE, busiest_rank_packs(tokens, micro_tokens, world), "every row at max_length"
        )
    tokens = rows * (lengths.mean_tokens if lengths else 2 * length)
    micro = busiest_rank_packs(tokens, micro_tokens, world)
    return Steps(
        tokens,
        lengths.loss_share if lengths else CHAT_LOSS_SHARE,
        micro,
        "reference file" if lengths else "every pair at 2 x max_length",
    )


def lineage_table(args) -> str:
    """Every trained run of the card's lineage at full scale (config.yaml) on each node count of
    --nodes-list and expert-parallel degree of --expert-parallel-list: memory per GPU, whether it
    fits, step time, run hours and GPU-hours.

    A step's tokens and micro-batches come from --token-stats where it holds the run's sets (packed
    by the trainer's packer), else from the upper bound (every row at max_length). DPO runs as
    train_dpo.py runs it: packs of pairs, the head fused as for SFT, no second model (the
    reference's log-probs are a job of their own, listed apart).
    """
    config = yaml.safe_load(CONFIG.read_text())
    train = config["scales"]["full"]["train"]
    if args.expert_parallel_list is None:
        args.expert_parallel_list = [train.get("expert_parallel", 1)]
    model = build_meta_model(args.family, args.size, args.vocab)
    counts = count_params(model)
    experts = expert_params(model)
    for degree in args.expert_parallel_list:
        check_expert_parallel(model, degree, args.gpus)
    pairs = PairLengths.read(args.pair_lengths) if args.pair_lengths else None
    stats = RowLengths(args.token_stats) if args.token_stats else None
    mfu_note = (
        f"{args.mfu:.1%} (given)"
        if args.mfu is not None
        else f"as measured at each pack size ({mfu_at(args.pack_tokens or sft_micro_tokens(train)):.1%} for SFT, "
        f"{mfu_at(dpo_micro_tokens(train)):.1%} for DPO; MEASURED_MFU_BY_PACK)"
    )
    pair_note = (
        f", DPO pairs as measured in {args.pair_lengths} ({pairs.pairs:,} pairs, mean {pairs.mean_tokens:,.0f} "
        f"tokens, longest {pairs.longest:,})"
        if pairs
        else ""
    )
    lines = [
        f"{args.family}/{args.size} ({counts.total / 1e9:.1f}B, {counts.active / 1e9:.1f}B active, "
        f"{experts / 1e9:.1f}B in routed experts), {args.gpus} x {args.gpu_gib:g} GiB GPUs per node, "
        f"checkpointing, head loss {speed_settings(train, 'sft')['fused_loss']} (DPO: "
        f"{speed_settings(train, 'dpo')['fused_loss']}); SFT packs of "
        f"{args.pack_tokens or sft_micro_tokens(train):,} "
        f"tokens, DPO packs of {dpo_micro_tokens(train):,}; MFU {mfu_note}, {args.intra_gbs:g} GB/s within "
        f"/ {args.inter_gbs:g} GB/s across nodes, all-to-all {args.a2a_gbs:g} GB/s. Row lengths: "
        f"{stats.path if stats else 'none given (--token-stats)'}; runs whose sets it lacks: every row at "
        f"max_length{pair_note}. Times: overlapped-serial.",
        "",
        "| run | steps | rows from | tokens/step | micro-batches/rank | nodes | E | sharding | GiB/GPU | "
        "host GiB/node | s/step | hours | GPU-hours |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    references = []
    for name, spec in config["runs"].items():
        if spec["kind"] not in ("sft", "dpo"):
            continue
        dpo = spec["kind"] == "dpo"
        run_train, steps, changed = run_settings(train, spec)
        gpus = run_train["processes"] if "processes" in changed else args.gpus
        degrees = [run_train["expert_parallel"]] if "expert_parallel" in changed else args.expert_parallel_list
        for degree in degrees:
            check_expert_parallel(model, degree, gpus)
        micro_tokens = dpo_micro_tokens(run_train) if dpo else (args.pack_tokens or sft_micro_tokens(run_train))
        mfu = args.mfu if args.mfu is not None else mfu_at(micro_tokens)
        notes = (["rejected"] if spec.get("rejected") else []) + [f"{k} {changed[k]}" for k in sorted(changed)]
        shown = f"{name} ({'; '.join(notes)})" if notes else name
        for nodes in args.nodes_list:
            world = nodes * gpus
            if stats and stats.covers(spec["data"]):
                step = stats.steps(spec["data"], rows=run_train["global_batch_rows"], world=world, budget=micro_tokens)
                source = "token stats"
            else:
                step = upper_bound_steps(run_train, dpo, world, pairs, micro_tokens)
                source = step.source
            if dpo and nodes == args.nodes_list[0]:
                references.append((name, spec, step.tokens))
            for degree in degrees:
                for sharding in ("full", "hybrid") if nodes > 1 else ("full",):
                    group = shard_group(nodes, gpus, sharding)
                    result = plan(
                        model,
                        gpus=group,
                        micro_tokens=micro_tokens,
                        checkpointing=True,
                        loss_share=step.loss_share,
                        fused_loss=speed_settings(run_train, spec["kind"])["fused_loss"],
                        expert_parallel=degree,
                    )
                    timing = step_time(
                        counts,
                        tokens=int(step.tokens),
                        loss_share=step.loss_share,
                        nodes=nodes,
                        gpus=gpus,
                        sharding=sharding,
                        micro_steps=max(1, round(step.micro_steps)),
                        mfu=mfu,
                        peak_tflops=args.peak_tflops,
                        intra_gbs=args.intra_gbs,
                        inter_gbs=args.inter_gbs,
                        experts=experts,
                        expert_parallel=degree,
                        all_to_all_bytes=all_to_all_bytes(model, step.tokens / world, degree, True),
                        a2a_gbs=args.a2a_gbs,
                    )
                    fits = "" if result.peak <= args.gpu_gib * GIB else " (does not fit)"
                    hours = [steps * t / 3600 for t in (timing.overlapped, timing.serial)]
                    lines.append(
                        f"| {shown} | {steps:,} | {source} | {step.tokens:,.0f} | "
                        f"{step.micro_steps:.1f} | {nodes} | {degree} | {sharding} | "
                        f"{result.peak / GIB:.1f}{fits} | {host_memory_mb(counts.total, gpus, nodes) / 1024:,.0f} | "
                        f"{timing.overlapped:.1f}-{timing.serial:.1f} | "
                        f"{hours[0]:,.2f}-{hours[1]:,.2f} | {hours[0] * world:,.1f}-{hours[1] * world:,.1f} |"
                    )
    lines += [
        "",
        f"Reference log-probs: one forward pass over a run's pairs on its node, each of the {args.gpus} GPUs "
        "scoring a share with the whole bf16 model (an upper bound: every pair of every step scored, repeats "
        "included; runs of one parent and pair set share the job):",
        "",
        "| job | for | pairs scored | hours on 1 node |",
        "|---|---|---|---|",
    ]
    shared: dict[tuple, list] = {}
    for name, spec, step_tokens in references:
        shared.setdefault((tuple(spec["parents"]), tuple(spec["data"])), []).append((name, spec, step_tokens))
    for group in shared.values():
        name, spec, step_tokens = max(group, key=lambda entry: entry[1]["steps"])
        flops = 2 * counts.active * step_tokens * spec["steps"]
        names = sorted(n for n, _, _ in group)  # the workflow names a shared job after the first by name
        lines.append(
            f"| {names[0]}_reference | {', '.join(names)} | "
            f"{train['global_batch_rows'] * spec['steps']:,} | "
            f"{step_seconds(flops, args.gpus, args.peak_tflops, args.mfu or MEASURED_MFU) / 3600:,.1f} |"
        )
    lines.append("\n" + checkpoint_io_note(counts.total, args.gpus, config))
    lines.append("\n" + eval_note(counts, len(layer_kinds(model)), config, args))
    weights_gib = 2 * counts.total / GIB
    lines.append(
        f"\nEach scoring GPU holds the bf16 weights whole: {weights_gib:.1f} GiB "
        f"({'fits' if weights_gib + 8 <= args.gpu_gib else 'does not fit'} one {args.gpu_gib:g} GiB GPU "
        "with packs of 32,768 tokens)."
    )
    return "\n".join(lines)


def eval_note(counts: ParamCounts, layers: int, config: dict, args) -> str:
    """GPU-hours of evaluating the lineage's checkpoints: every GPU of the eval job a whole replica that
    loads the checkpoint, decodes its share of the answers and scores its share of the items."""
    full = config["scales"]["full"]
    gpus = full["resources"]["eval"]["gpus"]
    cache = full["eval"]["cache"]
    sizes = {name: sum(parts) for name, parts in full["eval"]["sizes"].items()}
    margin_items = 2_000  # held-out battle pairs (the card's holdout split; not known before the data stage)
    answers = sum(sizes.get(name, 0) * tokens for name, tokens in ANSWER_TOKENS.items())
    rows = full["eval"]["batch_size"]
    measured = min(DECODE_TOKENS_PER_S, key=lambda key: (key[0] != cache, abs(math.log2(key[1] / rows))))
    decode = DECODE_TOKENS_PER_S[measured] * DECODE_LAYERS_MEASURED / layers
    scored = sizes.get("mmlu", 0) * SCORING_TOKENS["mmlu"] + margin_items * SCORING_TOKENS["margin"]
    score_s = 2 * counts.active * scored / (args.peak_tflops * 1e12 * SCORING_MFU)
    load_s = 2 * counts.total / 1e9 / RANK_READ_GBS  # each replica reads the whole bf16 checkpoint
    per_gpu_s = load_s + (answers / decode + score_s) / gpus
    fixed = DECODE_TOKENS_PER_S[("graph", 32)] * DECODE_LAYERS_MEASURED / layers
    before_s = load_s + answers / fixed + score_s  # one GPU, fixed batches of 32: the former eval job
    columns = [*config["eval_table"]["columns"], *config["eval_table"]["chain"]]
    rejected = [name for name, spec in config["runs"].items() if spec.get("rejected")]
    checkpoints = {"soupF2_eval (card table and chain)": len(columns), "ablations (rejected runs)": len(rejected)}
    lines = [
        f"Evaluation: one job per checkpoint on {gpus} GPUs (resources.eval), cache {cache}, {rows} rows; per checkpoint "
        f"{answers:,} answer tokens (assumed mean answers: "
        f"{', '.join(f'{name} {tokens}' for name, tokens in ANSWER_TOKENS.items())} tokens) at "
        f"{decode:,.0f} tokens/s per GPU (measured as {measured[0]} at {measured[1]} rows and "
        f"{DECODE_LAYERS_MEASURED} layers, scaled to {layers}), "
        f"{scored:,} scored tokens at {SCORING_MFU:.0%} MFU, and a {load_s:.0f} s load per replica: "
        f"{per_gpu_s / 60:.1f} min a job, {per_gpu_s * gpus / 3600:.2f} GPU-hours a checkpoint (one GPU in "
        f"fixed batches of 32, the former job: {before_s / 60:.0f} min, {before_s / 3600:.2f} GPU-hours).",
        "",
        "| target | checkpoints | hours (jobs in sequence) | GPU-hours |",
        "|---|---|---|---|",
    ]
    for target, count in checkpoints.items():
        lines.append(f"| {target} | {count} | {count * per_gpu_s / 3600:.2f} | {count * per_gpu_s * gpus / 3600:.1f} |")
    return "\n".join(lines)


def checkpoint_io_note(params: int, ranks: int, config: dict) -> str:
    """Load and save seconds of one training job's checkpoint, every rank its share against rank 0 alone."""
    gb = 2 * params / 1e9  # bf16
    trained = [spec for spec in config["runs"].values() if spec["kind"] in ("sft", "dpo")]
    load, save = gb / ranks / RANK_READ_GBS, gb / ranks / RANK_WRITE_GBS
    old_load, old_save = gb / RANK0_READ_GBS, gb / RANK0_WRITE_GBS
    return (
        f"Checkpoint I/O of a training job ({gb:.1f} GB in bf16, {ranks} ranks each reading and writing its "
        f"1/{ranks} at one rank's measured {RANK_READ_GBS:g} GB/s read, {RANK_WRITE_GBS:g} GB/s write+hash; "
        f"assumes the node's storage sustains {ranks * RANK_READ_GBS:.1f} / {ranks * RANK_WRITE_GBS:.1f} GB/s): "
        f"load {load:.0f} s, save {save:.0f} s; rank 0 alone, the former path: load {old_load:.0f} s, save "
        f"{old_save:.0f} s. The {len(trained)} trained runs of config.yaml each load a parent and save a child: "
        f"{len(trained) * (load + save) / 60:.0f} min of I/O against "
        f"{len(trained) * (old_load + old_save) / 60:.0f} min. Resumable states are written in the background "
        "(StateSaver): a step pauses only while they are staged in host memory."
    )


def planned_peak(run: Measured) -> float:
    model = build_meta_model(run.family, run.size, run.vocab)
    return (
        plan(
            model,
            gpus=1,
            micro_tokens=run.micro_tokens,
            checkpointing=run.checkpointing,
            ce_chunk_tokens=run.ce_chunk_tokens,
            loss_share=run.loss_share,
            fused_loss=run.fused_loss,
            accumulate=run.accumulate,
        ).peak
        / GIB
    )


def check() -> str:
    """The model against the peak memory of the measured single-H200 runs."""
    lines = ["| run on one H200 | planned GiB | measured GiB | error |", "|---|---|---|---|"]
    for run in MEASURED:
        planned = planned_peak(run)
        note = " (compiled: fewer activations kept than planned)" if run.compiled else ""
        lines.append(
            f"| {run.name}{note} | {planned:.1f} | {run.measured_gib:.1f} | "
            f"{100 * (planned - run.measured_gib) / run.measured_gib:+.0f}% |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="nemotron_h")
    parser.add_argument("--size", default="30b_a3b")
    parser.add_argument("--vocab", type=int, default=131072)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    parser.add_argument(
        "--sharding",
        choices=("full", "hybrid"),
        default="full",
        help="hybrid: shard within a node, replicate across nodes",
    )
    parser.add_argument("--intra-gbs", type=float, default=INTRA_GBS, help="bus bandwidth within a node, GB/s per GPU")
    parser.add_argument("--inter-gbs", type=float, default=INTER_GBS, help="bus bandwidth across nodes, GB/s per GPU")
    parser.add_argument("--gpu-gib", type=float, default=80)
    parser.add_argument("--global-batch-rows", type=int, default=512)
    parser.add_argument("--micro-batch-rows", type=int, default=2)
    parser.add_argument("--tokens-per-row", type=int, default=4096, help="padded row length (or pack length)")
    parser.add_argument(
        "--activation-checkpointing",
        nargs="?",
        const=True,
        default=False,
        choices=[True, "selective"],
        type=lambda text: "selective" if text == "selective" else text,
        help="full (no value) or selective (keep the products' outputs)",
    )
    parser.add_argument("--ce-chunk-tokens", type=int, default=0, help="as train_sft.py's flag (0: off)")
    parser.add_argument(
        "--fused-loss",
        nargs="?",
        const="liger",
        default="none",
        choices=FUSED_LOSSES,
        help="train_sft.py's --fused-loss (alone: liger, no logits kept; compiled: bf16 logits only)",
    )
    parser.add_argument(
        "--accumulate",
        choices=ACCUMULATIONS,
        default="sharded",
        help="train_sft.py's --accumulate (unsharded: all weights and gradients on every GPU)",
    )
    parser.add_argument(
        "--loss-share",
        type=float,
        default=1.0,
        help=f"share of tokens with a loss, where the head runs (the chat rows: {CHAT_LOSS_SHARE})",
    )
    parser.add_argument(
        "--mfu",
        type=float,
        default=None,
        help=f"model FLOPs utilisation (default {MEASURED_MFU * 100:.1f}%%; --lineage: as measured at each pack size)",
    )
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 per GPU (H100/H200: 989)")
    parser.add_argument("--check", action="store_true", help="compare with the measured single-H200 runs")
    parser.add_argument("--lineage", action="store_true", help="plan the card's trained runs (config.yaml, full scale)")
    parser.add_argument(
        "--pair-lengths",
        type=Path,
        default=None,
        metavar="FILE",
        help="--lineage: a reference_logprobs.py file whose pair lengths DPO steps are planned with",
    )
    parser.add_argument(
        "--nodes-list",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="node counts of --lineage (default 1,2,4)",
    )
    parser.add_argument(
        "--expert-parallel",
        type=int,
        default=1,
        metavar="E",
        help="routed experts split over E GPUs of a node (1: FSDP shards them like the rest)",
    )
    parser.add_argument(
        "--expert-parallel-list",
        type=lambda text: [int(n) for n in text.split(",")],
        default=None,
        help="expert-parallel degrees of --lineage (e.g. 1,8; default: the full scale's train.expert_parallel)",
    )
    parser.add_argument(
        "--a2a-gbs", type=float, default=A2A_GBS, help="all-to-all bandwidth within a node, GB/s per GPU"
    )
    parser.add_argument(
        "--pack-tokens",
        type=int,
        default=None,
        metavar="N",
        help="--lineage: SFT packs of N tokens (default: the full scale's train.speed.pack_tokens)",
    )
    parser.add_argument(
        "--token-stats",
        type=Path,
        default=None,
        metavar="FILE",
        help="--lineage: the token_stats rule's output; steps are packed from these row lengths",
    )
    args = parser.parse_args(argv)
    if args.check:
        print(check())
        return 0
    if args.lineage:
        print(lineage_table(args))
        return 0
    model = build_meta_model(args.family, args.size, args.vocab)
    check_expert_parallel(model, args.expert_parallel, args.gpus)
    args.mfu = MEASURED_MFU if args.mfu is None else args.mfu
    result = plan(
        model,
        gpus=shard_group(args.nodes, args.gpus, args.sharding),
        micro_tokens=args.micro_batch_rows * args.tokens_per_row,
        checkpointing=args.activation_checkpointing,
        ce_chunk_tokens=args.ce_chunk_tokens,
        loss_share=args.loss_share,
        fused_loss=args.fused_loss,
        accumulate=args.accumulate,
        expert_parallel=args.expert_parallel,
    )
    print(report(result, args))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
