"""Validation loss on the held-out prompts, every N optimizer steps, without touching what trains.

The rows are those of the prompts the `holdout_modulus` split holds out: an SFT run scores their
winner answers (results/<scale>/data/holdout.jsonl, each once), a DPO run on battle pairs their
pairs (holdout_pairs.jsonl, against the reference log-probs its reference job scored with its
training pairs). A slice of the training rows would change the card's recipe, and with the x40
repeats its prompts would also be trained on. Where the recipe
trains on the holdout as the card did (recipe.holdout_in_training: true), the trainer says so at
the start: the loss then measures fit, not generalisation.

Each rank scores its own share of the rows and the sums are reduced, so every rank runs the same
number of forward passes (each one all-gathers the FSDP shards): a rank with fewer rows runs
empty micro-batches, as packed training does. The pass runs in eval mode under no_grad, draws no
random numbers and leaves the shards as training left them, so the weights, the data order and
the curve of a run are those of the same run without validation (tests/test_tracking.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch.distributed.fsdp import FSDPModule

from lineage.training.data import pack_groups
from lineage.training.dist import DistEnv, all_reduce_sum


def rank_groups(
    lengths: Sequence[int], world_size: int, rank: int, micro_rows: int, budget: int | None = None
) -> list[list[int]]:
    """`rank`'s micro-batches of the validation rows (indices), as many on every rank (empty ones last).

    Rank r takes rows r, r + W, r + 2W, ...; without `budget` they go `micro_rows` at a time, with it
    they are packed in order into groups of at most `budget` tokens."""
    per_rank = []
    for r in range(world_size):
        mine = list(range(r, len(lengths), world_size))
        if budget is None:
            per_rank.append([mine[i : i + micro_rows] for i in range(0, len(mine), micro_rows)])
        else:
            per_rank.append([[mine[p] for p in g] for g in pack_groups([lengths[i] for i in mine], budget)])
    count = max(len(groups) for groups in per_rank)
    return per_rank[rank] + [[] for _ in range(count - len(per_rank[rank]))]


def due(step: int, steps: int, every: int) -> bool:
    """Validate after optimizer step `step` (1-based) of `steps`: every `every` steps and after the last (0: never)."""
    return every > 0 and (step % every == 0 or step == steps)


def validation_metrics(
    model: torch.nn.Module, loss_fn: Callable, data, env: DistEnv, stat_names: Sequence[str] = ()
) -> dict[str, float]:
    """`val_loss` and `val_<name>` for each of `stat_names` (loss_fn's summed stats, a DPO run's margin and
    accuracy), means over every rank's validation rows (`data`: this rank's StepData), weights untouched."""
    was_training = model.training
    model.eval()
    sums = torch.zeros(1 + len(stat_names), dtype=torch.float64, device=env.device)
    try:
        with torch.no_grad():
            for micro in data.micro_batches:
                micro = {k: v.to(env.device) if isinstance(v, torch.Tensor) else v for k, v in micro.items()}
                loss_sum, stats = loss_fn(model, micro)
                sums += torch.stack([loss_sum, *(stats[name] for name in stat_names)]).double()
    finally:
        model.train(was_training)
        for module in model.modules():  # a root kept gathered after forward holds no stale copy into the next step
            if isinstance(module, FSDPModule):
                module.reshard()
    count = torch.tensor([float(data.normalizer)], dtype=torch.float64, device=env.device)
    totals = all_reduce_sum(torch.cat([sums, count]))
    means = (totals[:-1] / totals[-1].clamp(min=1)).tolist()
    return dict(zip(["val_loss", *(f"val_{name}" for name in stat_names)], means, strict=True))
