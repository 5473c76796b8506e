"""Step lines, throughput, MFU and metrics.jsonl (rank 0 only).

tok/s counts every non-padding input token of the global batch (prompt included, as
torchtitan and Megatron do) per second of step wall time. MFU = model FLOP/s / (peak × GPUs),
model FLOPs = 6 × (N_body × tokens + N_head × loss positions) + 12 × attention width × causal
pairs (lineage.modeling.ParamCounts): N_body are the matmul parameters one token uses (routed
experts top-k of n), without the input embedding, a lookup; the LM head counts once (a tied
embedding is the head) and only at the positions the loss reads (SFT: the trained tokens), which
is all a fused head computes. Attention scores count as PaLM's MFU counts them, but causally and
per row: a packed row attends only itself, so a pack's FLOPs are those of its rows, not of one
sequence of the pack's length. The Mamba scan is not counted. metrics.jsonl also keeps
mfu_without_attention (the matmuls alone, the figure earlier RESULTS.md sections give). Peak is
dense bf16 tensor-core FLOP/s per GPU, from --peak-flops or the table below; on CPU, or a GPU not
in the table, MFU is reported as n/a.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import torch

PEAK_BF16_FLOPS = {"H100": 989e12, "H200": 989e12, "H800": 989e12, "GH200": 989e12, "A100": 312e12, "L40S": 362e12}


def peak_flops(device: torch.device, precision: str, override: float | None = None) -> float | None:
    """Peak FLOP/s of one device at this precision, or None when unknown."""
    if override:
        return override
    if device.type != "cuda" or precision != "bf16":
        return None
    name = torch.cuda.get_device_name(device)
    return next((flops for key, flops in PEAK_BF16_FLOPS.items() if key in name), None)


def mfu(model_flops_per_s: float, world_size: int, peak: float | None) -> float | None:
    """Model FLOP/s as a share of the peak of `world_size` devices (None when the peak is unknown)."""
    if not peak:
        return None
    return model_flops_per_s / (peak * world_size)


def step_line(
    step: int,
    steps: int,
    loss: float,
    lr: float,
    grad_norm: float,
    tokens_per_s: float,
    mfu_value: float | None,
    extra: dict[str, float] | None = None,
    peak_mem_gib: float | None = None,
    elapsed_s: float | None = None,
    eta_s: float | None = None,
    compiled: int = 0,
) -> str:
    """One step's line: the step and its numbers, the graphs it compiled (if any), then elapsed time, ETA and a UTC
    timestamp."""
    width = max(4, len(str(steps)))
    parts = [
        f"step {step:0{width}d}/{steps:0{width}d}",
        f"loss {loss:.4f}",
        f"lr {lr:.2e}",
        f"grad_norm {grad_norm:.3f}",
        f"tok/s {tokens_per_s:,.0f}",
        f"mfu {'n/a' if mfu_value is None else f'{100 * mfu_value:.1f}%'}",
    ]
    parts += [f"{key} {value:.4f}" for key, value in (extra or {}).items()]
    if peak_mem_gib is not None:
        parts.append(f"peak_mem {peak_mem_gib:.1f} GiB")
    if compiled:
        parts.append(f"compiled +{compiled} graphs")
    if elapsed_s is not None:
        parts.append(f"elapsed {clock(elapsed_s)}")
    if eta_s is not None:
        parts.append(f"eta {clock(eta_s)}")
    parts.append(_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return " | ".join(parts)


def clock(seconds: float) -> str:
    """H:MM:SS."""
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class MetricsFile:
    """Append one JSON object per step; on resume, drop the lines after the resumed step."""

    def __init__(self, path: str | os.PathLike | None, resume_step: int, enabled: bool):
        self.path = Path(path) if path and enabled else None
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = []
        if resume_step > 0 and self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    step = json.loads(line).get("step", 0) if line.strip() else None
                except json.JSONDecodeError:  # the line a killed run was writing; that step is redone
                    continue
                if step is not None and step <= resume_step:
                    kept.append(line)
        self.path.write_text("".join(line + "\n" for line in kept))

    def write(self, record: dict[str, Any]) -> None:
        if self.path is not None:
            with self.path.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
