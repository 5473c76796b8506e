"""What the planner takes from measurements (benchmarks/RESULTS.md; the full scale's MFU from the rehearsal of a rank on one H100), each
with the run that gave it: MFU by pack size, peak memory of the memory model's check runs, checkpoint I/O and
decoding rates. A new measurement changes a figure here and nothing else."""

from __future__ import annotations

import math
from dataclasses import dataclass

# The full scale's settings by pack size, without attention FLOPs (as step_time counts): rank 0 of the card's node
# rehearsed on one H100 (tools/rehearse.py sftw2 --scale full, 2026-12-06, torch 2.11): FSDP2 over 8, E = 8 with
# its dispatch (balanced routing), all 52 layers compiled under full checkpointing, the chunked in-place loss,
# rows of 4,096 tokens. 32,768: 32.1% (33.1% with attention), steps 3-8; 16,384: 30.4% with attention over steps
# 3-7 (the call ended before its summary), 29.5% without at the 32k run's attention share. Each micro-batch's
# grouped expert GEMMs get fewer rows at smaller packs and the fixed per-micro-batch work (FSDP's copies, launches
# for 52 layers three times) is spread over fewer tokens. 4,096 and 8,192: the world-1 stand-in's figures (liger's
# loss on the H200 times the chunked loss's paired gain on an H100) times the rehearsal's 0.915 of the stand-in at
# 32,768 (derived, not rehearsed).
_STANDIN_MFU_BY_PACK = {4096: 0.099 * 1.111, 8192: 0.158 * 1.224, 32768: 0.351}
_REHEARSED_MFU_BY_PACK = {16384: 0.295, 32768: 0.321}
_REHEARSED_OVER_STANDIN = _REHEARSED_MFU_BY_PACK[32768] / _STANDIN_MFU_BY_PACK[32768]
MEASURED_MFU_BY_PACK = {
    4096: round(_STANDIN_MFU_BY_PACK[4096] * _REHEARSED_OVER_STANDIN, 3),
    8192: round(_STANDIN_MFU_BY_PACK[8192] * _REHEARSED_OVER_STANDIN, 3),
    **_REHEARSED_MFU_BY_PACK,
}
# DPO's own rehearsal at its packs of 16,384 tokens with the chunked loss (tools/rehearse.py dpo1 --scale full, one
# H100, 2026-12-06): 30.8% with attention over steps 3-6, 29.9% without at the same share. DPO at another pack
# follows the SFT curve, scaled to meet this point.
MEASURED_DPO_MFU = (16384, 0.299)
MEASURED_MFU = MEASURED_MFU_BY_PACK[16384]  # the full scale's SFT pack: the default for a single job
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
