"""Batch geometry and data order: which rows each rank trains on at each step.

The order is epochs of seeded permutations (one torch.Generator) concatenated until it covers
steps × global batch rows. Step s takes rows [s·G, (s+1)·G) of it, and rank r takes its
contiguous slice of those, so the rows of a step depend only on (seed, step), never on how
many ranks or micro-batches share them: a rerun reproduces the curve and a resume is exact.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lineage.chat import IGNORE_INDEX
from lineage.io import DataError, LineError, read_rows_lenient, sha256_file
from lineage.training.packing import seq_idx_from_cu_seq_lens


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


UNREADABLE_NAMED = 100  # unreadable rows of a file named in lineage.json (the count is always whole)


@dataclass(frozen=True)
class LoadedRows:
    """The rows of the data files in order, and where each came from.

    A row that cannot be read (not JSON, not text, a required field missing) is skipped and named in its
    file's record: one bad row in a downloaded mixture never stops a run and never trains.
    """

    rows: list[dict[str, Any]]
    records: list[dict[str, Any]]  # one per file for lineage.json: path, sha256, rows, unreadable, unreadable_rows
    lines: list[tuple[int, str, array]]  # (index of the file's first row, its path, each row's line or row number)

    def where(self, index: int) -> str:
        """Where row `index` came from, as "<file>:<line>" (for Parquet, the row number)."""
        at = bisect.bisect_right([first for first, _, _ in self.lines], index) - 1
        first, path, numbers = self.lines[at]
        return f"{path}:{numbers[index - first]}"

    def summary(self) -> str:
        """One line naming the skipped rows (up to three), or "" when every row was read."""
        skipped = [(r["path"], u) for r in self.records for u in r["unreadable_rows"]]
        total = sum(r["unreadable"] for r in self.records)
        if not total:
            return ""
        named = "; ".join(f"{path}:{u['row']}: field '{u['field']}': {u['reason']}" for path, u in skipped[:3])
        return f"{total} unreadable row(s) skipped ({named}{'; ...' if total > 3 else ''})"


def load_rows(paths: Sequence[str | os.PathLike], required: Sequence[str]) -> LoadedRows:
    """The rows of all files (JSONL or Parquet) with the fields in `required`, in order; the others skipped."""
    rows, records, lines = [], [], []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise DataError(f"{path}: data file not found")
        numbers, unreadable, skipped, first = array("q"), [], 0, len(rows)
        for number, row, error, _ in read_rows_lenient(path):
            missing = [key for key in required if row is not None and key not in row]
            if missing:
                error = LineError(missing[0], f"missing; a row needs {', '.join(required)}")
            if error is not None:
                skipped += 1
                if len(unreadable) < UNREADABLE_NAMED:
                    unreadable.append({"row": number, "field": error.field, "reason": error.reason})
                continue
            rows.append(row)
            numbers.append(number)
        records.append(
            {
                "path": str(path),
                "sha256": sha256_file(path),
                "rows": len(numbers),
                "unreadable": skipped,
                "unreadable_rows": unreadable,
            }
        )
        lines.append((first, str(path), numbers))
    loaded = LoadedRows(rows, records, lines)
    if not rows:
        raise DataError(
            f"no readable rows in {', '.join(map(str, paths))}" + (f": {loaded.summary()}" if loaded.summary() else "")
        )
    return loaded


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


def pack_groups(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Positions 0..n-1 of consecutive rows grouped greedily so that each group fits `budget` tokens.

    The order is kept, so packing changes how a step's rows are split, never which rows or in
    what order they are trained on.
    """
    groups: list[list[int]] = []
    used = budget
    for position, length in enumerate(lengths):
        if length > budget:
            raise BatchPlanError(f"a row of {length} tokens does not fit the packing budget of {budget} tokens")
        if used + length > budget:
            groups.append([])
            used = 0
        groups[-1].append(position)
        used += length
    return groups


def packed_rank_rows(
    order: torch.Tensor, step: int, plan: BatchPlan, rank: int, lengths: Sequence[int], budget: int
) -> list[list[int]]:
    """`rank`'s rows at `step` packed into micro-batches of at most `budget` tokens.

    Every rank must run the same number of forward/backward passes (each one all-gathers the
    shards), so ranks with fewer packs get empty ones up to the largest count of any rank.
    """
    per_rank = []
    for r in range(plan.world_size):
        ids = [i for group in rank_rows(order, step, plan, r) for i in group]
        per_rank.append([[ids[p] for p in group] for group in pack_groups([lengths[i] for i in ids], budget)])
    mine = per_rank[rank]
    return mine + [[] for _ in range(max(len(packs) for packs in per_rank) - len(mine))]


def collate_packed(rows, pad_id: int, length: int, multiple: int | None = None) -> dict[str, torch.Tensor | int]:
    """Rows concatenated into one sequence of `length` tokens, position_ids restarting per row.

    transformers reads the restarts of position_ids (with no attention_mask) as row boundaries and
    masks attention to causal-within-a-row. Each row's first label is dropped: in the padded layout
    the first position is never a target, and here it would be predicted from the previous row.
    The tail is padding (no labels) with positions from 0, a row of its own that nothing sees.
    With `multiple`, the sequence is cut to the rows' tokens rounded up to it (a step's last pack
    is often mostly tail); without, it is exactly `length`, static shapes for kernels compiled per
    shape (FlexAttention's block mask). `cu_seq_lens` holds the same boundaries as cumulative
    lengths (int32) for the varlen attention kernel, `longest` the longest of those rows (tail
    included, an int known on the host: the kernel sizes its grid by it, and reading it from the
    device would wait for the GPU), and `seq_idx` each token's row number (int32) for the Mamba-2
    kernels (lineage.training.packing).
    """
    if multiple is not None:
        used = sum(len(row.input_ids) for row in rows)
        length = min(length, max(multiple, -(-used // multiple) * multiple))
    input_ids = torch.full((1, length), pad_id, dtype=torch.long)
    labels = torch.full((1, length), IGNORE_INDEX, dtype=torch.long)
    position_ids = torch.zeros((1, length), dtype=torch.long)
    start, cu_seq_lens = 0, [0]
    for row in rows:
        n = len(row.input_ids)
        if start + n > length:
            raise BatchPlanError(f"rows of {start + n} tokens do not fit a packed sequence of {length}")
        input_ids[0, start : start + n] = torch.as_tensor(row.input_ids, dtype=torch.long)
        labels[0, start + 1 : start + n] = torch.as_tensor(row.labels[1:], dtype=torch.long)
        position_ids[0, start : start + n] = torch.arange(n)
        start += n
        cu_seq_lens.append(start)
    position_ids[0, start:] = torch.arange(length - start)
    if start < length:
        cu_seq_lens.append(length)
    longest = max(end - begin for begin, end in zip(cu_seq_lens, cu_seq_lens[1:]))
    cu_seq_lens = torch.tensor(cu_seq_lens, dtype=torch.int32)
    return {
        "input_ids": input_ids,
        "labels": labels,
        "position_ids": position_ids,
        "cu_seq_lens": cu_seq_lens,
        "longest": longest,
        "seq_idx": seq_idx_from_cu_seq_lens(cu_seq_lens, length),
    }
