"""Batch geometry and data order: which rows each rank trains on at each step.

The order is epochs of seeded permutations (one torch.Generator) concatenated until it covers
steps × global batch rows. Step s takes rows [s·G, (s+1)·G) of it, and rank r takes its
contiguous slice of those, so the rows of a step depend only on (seed, step), never on how
many ranks or micro-batches share them: a rerun reproduces the curve and a resume is exact.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lineage.chat import IGNORE_INDEX
from lineage.io import DataError, read_jsonl, sha256_file


class BatchPlanError(ValueError):
    """A global batch that cannot be split into micro-batches over the ranks."""


@dataclass(frozen=True)
class BatchPlan:
    """global rows = micro-batch rows × accumulation steps × world size."""

    global_rows: int
    micro_rows: int
    world_size: int

    def __post_init__(self):
        if self.global_rows < 1 or self.micro_rows < 1:
            raise BatchPlanError(f"batch sizes must be positive (global {self.global_rows}, micro {self.micro_rows})")
        if self.global_rows % (self.micro_rows * self.world_size):
            fits = [
                m
                for m in range(1, self.global_rows // self.world_size + 1)
                if self.global_rows % (m * self.world_size) == 0
            ]
            shown = ", ".join(map(str, fits[:8])) + (", ..." if len(fits) > 8 else "")
            raise BatchPlanError(
                f"global batch {self.global_rows} rows is not divisible by micro-batch {self.micro_rows} × world size "
                f"{self.world_size} = {self.micro_rows * self.world_size}; use a micro-batch in {{{shown}}}"
                + ("" if fits else f", or a global batch that is a multiple of the world size {self.world_size}")
            )

    @property
    def rank_rows(self) -> int:
        return self.global_rows // self.world_size

    @property
    def accumulation(self) -> int:
        return self.rank_rows // self.micro_rows


def load_rows(
    paths: Sequence[str | os.PathLike], required: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of all files in order, and one {path, sha256, rows} record per file for lineage.json."""
    rows, records = [], []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise DataError(f"{path}: data file not found")
        count = 0
        for line_no, row in read_jsonl(path):
            missing = [key for key in required if key not in row]
            if missing:
                raise DataError(
                    f"{path}:{line_no}: missing field(s) {', '.join(missing)}; expected {', '.join(required)}"
                )
            rows.append(row)
            count += 1
        records.append({"path": str(path), "sha256": sha256_file(path), "rows": count})
    if not rows:
        raise DataError(f"no rows in {', '.join(map(str, paths))}")
    return rows, records


def sample_order(n_rows: int, total: int, seed: int) -> torch.Tensor:
    """Row indices: seeded permutations of range(n_rows), one per epoch, cut at `total`."""
    if n_rows < 1:
        raise DataError("no rows left to train on")
    generator = torch.Generator().manual_seed(seed)
    epochs = -(-total // n_rows)
    return torch.cat([torch.randperm(n_rows, generator=generator) for _ in range(epochs)])[:total]


def rank_rows(order: torch.Tensor, step: int, plan: BatchPlan, rank: int) -> list[list[int]]:
    """The micro-batches (lists of row indices) that `rank` trains on at `step`."""
    start = step * plan.global_rows + rank * plan.rank_rows
    mine = order[start : start + plan.rank_rows].tolist()
    return [mine[i : i + plan.micro_rows] for i in range(0, len(mine), plan.micro_rows)]


def pad_right(sequences: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    """Stack sequences into (rows, longest) padding on the right.

    Right padding needs no attention mask: attention and the Mamba scan are causal, so a real
    token never sees the padding after it, and padded positions carry no labels.
    """
    longest = max(len(s) for s in sequences)
    out = torch.full((len(sequences), longest), value, dtype=torch.long)
    for i, seq in enumerate(sequences):
        out[i, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
    return out


def collate(rows, pad_id: int) -> dict[str, torch.Tensor]:
    """input_ids and labels of TokenizedRow-like objects (labels unshifted, IGNORE_INDEX on padding)."""
    return {
        "input_ids": pad_right([r.input_ids for r in rows], pad_id),
        "labels": pad_right([r.labels for r in rows], IGNORE_INDEX),
    }
