"""Memory per GPU of a training job, from the model built on the meta device (no weights, no download)
and counted exactly, as this project trains:

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
  holds the logits, then their gradient (2 bytes x tokens x vocab); with inplace_chunked the head's
  fp32 gradient, one chunk's bf16 logits and the hidden states' bf16 gradient;
- outside torch's allocator (gpu_reserve): the CUDA context with the kernels it loads, measured, and NCCL's
  buffers, as NCCL's own allocation log counts them on a node of 8 H100s (the figures below).

A plan fits when its peak, reserve included, is within what torch reports as the device's total (79.18 GiB for
an H100 80GB, not a nominal 80): `fits()` is the one rule the planner, the config checks and the rehearsal use.
`check()` holds the model against the peaks measured on one H200 (measured.MEASURED).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AutoModelForCausalLM

from lineage import families
from lineage.modeling import CONFIG_CLASSES, SHAPES, ParamCounts, count_params, routed_experts
from lineage.parallel_dims import ParallelDims, check_degrees, check_expert_count, check_expert_in_node
from lineage.training.fsdp import blocks
from lineage.training.inplace_cross_entropy import CHUNK_ROWS
from lineage.training.recipe import FUSED_LOSSES
from planning.measured import MEASURED, Measured

GIB = 1024**3
FUSED_CHUNK_ROWS = 1024  # liger-kernel's chunk of positions is at most about this at these vocabularies

# What torch reports as an H100 80GB's total memory (torch.cuda.get_device_properties; its out-of-memory
# messages say the same): the planner's default device.
H100_GIB = 79.18
# Outside torch's allocator, per GPU. The CUDA context with cuBLAS's handles and the kernels a training step
# loads: the device's total less its free memory less what torch reserved, read by tools/rehearse.py at the end
# of the full scale's sftw2 rehearsal on one H100 (torch 2.11, compiled blocks, 2026-12-06).
CUDA_CONTEXT_BYTES = 1.0 * GIB
# NCCL's buffers on a node of 8 H100s, from NCCL's allocation log (NVIDIA/nccl issue #1685, 2025-04): 1.06 GB a
# GPU once the world's communicator has run its collectives, 3.28 GB more once an all-to-all has connected every
# pair of the group (32 P2P channels a pair, each with buffers of 10 MiB and 2 MiB). The fake process group of a
# rehearsal allocates none of it, so it is planned, never measured here.
NCCL_COLLECTIVES_BYTES = 1.06e9
NCCL_ALL_TO_ALL_BYTES = 3.28e9


def gpu_reserve(world_size: int, expert_parallel: int = 1) -> float:
    """Bytes a GPU of a training job holds outside torch's allocator: the CUDA context, and NCCL's buffers for
    the world's collectives (world_size > 1) and the expert group's all-to-all (expert_parallel > 1)."""
    nccl = (NCCL_COLLECTIVES_BYTES if world_size > 1 else 0) + (NCCL_ALL_TO_ALL_BYTES if expert_parallel > 1 else 0)
    return CUDA_CONTEXT_BYTES + nccl


def fits(peak_bytes: float, gpu_gib: float) -> bool:
    """Whether a planned peak (reserve included) fits a device whose total torch reports as `gpu_gib`."""
    return peak_bytes <= gpu_gib * GIB


@dataclass
class Plan:
    counts: ParamCounts
    static: float  # bytes per GPU
    gathered: float
    activations: float
    logits: float
    reserve: float = CUDA_CONTEXT_BYTES  # outside torch's allocator (gpu_reserve)

    @property
    def tensors(self) -> float:
        """What torch's allocator holds at the peak (the rehearsal's max_memory_allocated compares with it)."""
        return self.static + self.gathered + self.activations + self.logits

    @property
    def peak(self) -> float:
        return self.tensors + self.reserve


def build_meta_model(family: str, size: str, vocab: int) -> torch.nn.Module:
    if (family, size) not in SHAPES:
        raise SystemExit(f"no shape {family}/{size}; known: {', '.join(f'{f}/{s}' for f, s in SHAPES)}")
    config = CONFIG_CLASSES[family](**SHAPES[(family, size)], vocab_size=vocab)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def layer_kinds(model: torch.nn.Module) -> list[str]:
    """Each layer's kind, as the model's family names it (the kinds below count their activations)."""
    return families.of_config(model.config).layer_kinds(model.config)


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
    """Parameters of the routed experts under `module` (families.expert_modules: 3-D weights)."""
    return sum(p.numel() for m in families.expert_modules(module) for p in m.parameters(recurse=False) if p.dim() == 3)


def check_expert_parallel(model: torch.nn.Module, dims: ParallelDims) -> None:
    """Refuse an E the trainer refuses: one that does not divide the GPUs of a node or the experts of a layer. (Not
    hybrid sharding with E > 1, which the trainer also refuses: the planner prices it as a what-if.)"""
    check_degrees(dims)
    check_expert_in_node(dims)
    check_expert_count(dims, routed_experts(model.config))


def plan(
    model: torch.nn.Module,
    *,
    gpus: int,
    micro_tokens: int,
    checkpointing: bool | str,
    ce_chunk_tokens: int = 0,
    loss_share: float = 1.0,
    fused_loss: str = "none",
    accumulate: str = "sharded",
    expert_parallel: int = 1,
    world_size: int | None = None,
) -> Plan:
    """Bytes per GPU of each term (the module docstring); `gpus` is the shard group, `world_size` the job's ranks
    (default: the shard group) for NCCL's share of the reserve."""
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
    kinds = layer_kinds(model)
    per_layer = [activation_bytes_per_token(kind, model.config) for kind in kinds]
    if checkpointing == "selective":  # every layer's kept outputs, and one layer's recomputed whole in backward
        activations = micro_tokens * (sum(saved_bytes_per_token(kind, model.config) for kind in kinds) + max(per_layer))
    elif checkpointing:
        activations = micro_tokens * (2 * model.config.hidden_size * len(per_layer) + max(per_layer))
    else:
        activations = micro_tokens * sum(per_layer)
    return Plan(
        counts,
        static,
        gathered,
        activations,
        _loss_bytes(model, micro_tokens, loss_share, fused_loss, ce_chunk_tokens),
        gpu_reserve(world_size or gpus, expert_parallel),
    )


def _loss_bytes(model, micro_tokens: int, loss_share: float, fused_loss: str, ce_chunk_tokens: int) -> float:
    """The head's logits and loss at their peak, for each way of computing the loss."""
    vocab, hidden = model.config.vocab_size, model.config.hidden_size
    loss_tokens = int(micro_tokens * loss_share)
    if fused_loss not in FUSED_LOSSES:
        raise ValueError(f"fused_loss {fused_loss!r}: expected one of {', '.join(FUSED_LOSSES)}")
    if fused_loss in ("liger", "cce"):  # no logits kept: the head's fp32 gradient accumulator, one chunk's fp32
        return 4 * vocab * hidden + 8 * min(FUSED_CHUNK_ROWS, loss_tokens) * vocab
    if fused_loss == "compiled":  # the bf16 logits, then their bf16 gradient; the fp32 softmax stays in registers
        return 4 * loss_tokens * vocab
    if fused_loss == "inplace":  # one bf16 buffer: the logits, then their gradient written over them
        return 2 * loss_tokens * vocab
    if fused_loss == "inplace_chunked":  # the head's fp32 gradient, a chunk's bf16 logits, the hidden's gradient
        return 4 * vocab * hidden + 2 * min(CHUNK_ROWS, loss_tokens) * vocab + 2 * loss_tokens * hidden
    if ce_chunk_tokens:  # the bf16 logits, but only one chunk's fp32 copy and gradient
        return (2 * loss_tokens + 8 * min(ce_chunk_tokens, loss_tokens)) * vocab
    return 10 * loss_tokens * vocab


def planned_peak(run: Measured) -> float:
    """GiB the model plans for a measured single-GPU run."""
    model = build_meta_model(run.family, run.size, run.vocab)
    planned = plan(
        model,
        gpus=1,
        micro_tokens=run.micro_tokens,
        checkpointing=run.checkpointing,
        ce_chunk_tokens=run.ce_chunk_tokens,
        loss_share=run.loss_share,
        fused_loss=run.fused_loss,
        accumulate=run.accumulate,
    )
    return planned.peak / GIB


def check() -> str:
    """The model against the peak memory of the measured single-H200 runs, as a table."""
    lines = ["| run on one H200 | planned GiB | measured GiB | error |", "|---|---|---|---|"]
    for run in MEASURED:
        planned = planned_peak(run)
        note = " (compiled: fewer activations kept than planned)" if run.compiled else ""
        lines.append(
            f"| {run.name}{note} | {planned:.1f} | {run.measured_gib:.1f} | "
            f"{100 * (planned - run.measured_gib) / run.measured_gib:+.0f}% |"
        )
    return "\n".join(lines)
