"""What the planner takes from measurements on one H200 (benchmarks/RESULTS.md; one ratio from an H100), each
with the run that gave it: MFU by pack size, peak memory of the memory model's check runs, checkpoint I/O and
decoding rates. A new measurement changes a figure here and nothing else."""

from __future__ import annotations

import math
from dataclasses import dataclass

# The full scale's settings by pack size: each micro-batch's grouped expert GEMMs get fewer rows at smaller packs
# (4,096 tokens x top-6 / 128 experts = 192 an expert) and the fixed per-micro-batch work (FSDP's copies and
# casts, kernel launches for 52 layers three times) is spread over fewer tokens. One rank of the card's node
# (30b_a3b_rank8: 52 layers, the 16 experts a rank holds at E = 8) at its 64-row share of the 512-row step,
# blocks compiled under full checkpointing whose rerun leaves out each block's last product, the trainer's expert
# dispatch; without attention FLOPs, as step_time counts them. 32,768: the chunked in-place loss, steps 3-10
# (train_speed.sh rk_full_32k_inplace_chunked_64, 2026-12-05; liger's loss 34.6% in the same call, 33.7% and
# 33.6% on 2026-12-04). The smaller packs: liger's loss on the H200 (rk_full_{4k,8k,16k}_liger_64, 2026-12-04)
# times the chunked loss's speed over liger's at that pack on one H100 at the rank's first 26 layers (2026-12-06;
# benchmarks/run_table.py's paired steps 4-8, the median; the lower of two calls where two ran). The same transfer
# at 32,768 (1.035x on the H100 against the H200's 1.019x) would overstate that row by 2%; the small packs' steps
# vary by +-15%, the larger uncertainty.
_LIGER_MFU_BY_PACK = {4096: 0.099, 8192: 0.158, 16384: 0.307}
_CHUNKED_OVER_LIGER = {4096: 1.111, 8192: 1.224, 16384: 1.080}
MEASURED_MFU_BY_PACK = {
    **{pack: round(mfu * _CHUNKED_OVER_LIGER[pack], 3) for pack, mfu in _LIGER_MFU_BY_PACK.items()},
    32768: 0.351,
}
# DPO's own run at its packs of 16,384 tokens (dpo_speed.sh e_rank_full_16k_64: 64 pairs, compiled loss, the
# same rank shape and checkpointing; 2026-12-04, without attention FLOPs). DPO at another pack follows the SFT
# curve, scaled to meet this point. The chunked loss at 32,768-token packs ran at 0.996x its speed (one H100, 26
# layers, steps 4-8 paired, 2026-12-06: dpo_speed.sh e_rank_full_32k_inplace_chunked_64), so DPO keeps this point.
MEASURED_DPO_MFU = (16384, 0.330)
MEASURED_MFU = MEASURED_MFU_BY_PACK[32768]  # the full scale's SFT pack: the default for a single job
CHAT_LOSS_SHARE = 0.72  # trained tokens / tokens of the benchmark chat rows (2,007,140 / 2,789,514)

# Checkpoint I/O (benchmarks/checkpoint_io.py; RESULTS.md "Checkpoint I/O"): one rank's bytes per second reading
# its rows from a cold page cache, and writing them (pwrite, sha256, fsync); the former path's rank 0 reading the
# whole checkpoint into fp32, and gathering and writing it alone.
RANK_READ_GBS = 1.01
RANK_WRITE_GBS = 0.36
RANK0_READ_GBS = 0.80
RANK0_WRITE_GBS = 0.26

# Generation (benchmarks/continuous_batching.py, 2026-12-04): the card's widths at 7 layers (30b_a3b_reduced),
# bf16, the benchmarks' items at their answer lengths; tokens/s over the benchmarks of a call (32 rows: 192 items
# each of GSM8K / IFEval / degeneration; 128 rows: 256 each of GSM8K / IFEval), by (eval.cache, eval.batch_size).
# A decode step reads every layer's weights: the 52-layer model is planned at 7/52.
DECODE_TOKENS_PER_S = {
    ("graph", 32): 3_948,
    ("continuous", 32): 5_447,
    ("graph", 128): 7_956,
    ("continuous", 128): 7_066,
}
DECODE_LAYERS_MEASURED = 7


def _interpolated(points: dict[int, float], pack_tokens: int) -> float:
    """Linear in log2 of the pack between measured points; outside them, the nearest one."""
    ordered = sorted(points.items())
    if pack_tokens <= ordered[0][0]:
        return ordered[0][1]
    for (x0, y0), (x1, y1) in zip(ordered, ordered[1:]):
        if pack_tokens <= x1:
            t = (math.log2(pack_tokens) - math.log2(x0)) / (math.log2(x1) - math.log2(x0))
            return y0 + t * (y1 - y0)
    return ordered[-1][1]


def mfu_at(pack_tokens: int, kind: str = "sft") -> float:
    """The measured MFU of a `kind` ("sft" or "dpo") run at this many tokens per micro-batch."""
    sft = _interpolated(MEASURED_MFU_BY_PACK, pack_tokens)
    if kind == "sft":
        return sft
    if kind != "dpo":
        raise ValueError(f"kind {kind!r}: expected sft or dpo")
    pack, mfu = MEASURED_DPO_MFU
    return sft * mfu / _interpolated(MEASURED_MFU_BY_PACK, pack)


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


_NEMOTRON = ("nemotron_h", "30b_a3b_reduced", 131072)
_LLAMA = ("llama", "1b", 128256)
MEASURED = (
    Measured("Llama 0.98B, padded, 16 x 1,133 tokens", "llama", "1b", 2048, 16 * 1133, 44.9),
    Measured("Llama 0.98B, packed, 4,096 tokens", "llama", "1b", 2048, 4096, 22.4),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 16,384, fused loss",
        *_NEMOTRON,
        16384,
        93.5,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, fused loss",
        *_NEMOTRON,
        32768,
        99.5,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, unfused",
        *_LLAMA,
        32768,
        89.3,
        CHAT_LOSS_SHARE,
        compiled=True,
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, fused loss",
        *_LLAMA,
        32768,
        56.6,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        compiled=True,
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, compiled loss, unsharded",
        *_LLAMA,
        32768,
        68.3,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, fused loss, unsharded",
        *_NEMOTRON,
        32768,
        101.2,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, compiled loss, unsharded",
        *_NEMOTRON,
        32768,
        110.4,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Llama 1.24B, vocab 128,256, packed 32,768, compiled, in-place loss, unsharded, 512 rows",
        *_LLAMA,
        32768,
        67.7,
        CHAT_LOSS_SHARE,
        fused_loss="inplace",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, in-place loss, unsharded, 512 rows",
        *_NEMOTRON,
        32768,
        105.3,
        CHAT_LOSS_SHARE,
        fused_loss="inplace",
        compiled=True,
        accumulate="unsharded",
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, fused loss, activation checkpointing",
        *_NEMOTRON,
        32768,
        88.0,
        CHAT_LOSS_SHARE,
        fused_loss="liger",
        checkpointing=True,
    ),
    Measured(
        "Nemotron-H MEMEM*E, vocab 131,072, packed 32,768, compiled, compiled loss, activation checkpointing",
        *_NEMOTRON,
        32768,
        88.0,
        CHAT_LOSS_SHARE,
        fused_loss="compiled",
        compiled=True,
        checkpointing=True,
    ),
)
