"""Evaluation over the GPUs of a job: every rank holds the whole model and runs a share of the batches.

Why whole batches: the batches are planned exactly as one process plans them (same sort, same
grouping, same packs), then batch k goes to rank k mod N. A request is therefore computed with the
same neighbours, padding and shapes whatever the number of ranks, so its numbers are bit-identical
to a one-rank run on the same kind of device, and the merged records are byte-identical. Splitting
items instead would change the batch each item lands in, and with it the last bits of its logits.

Batches are planned longest first, so the round-robin deal gives every rank a similar mix of long and
short batches. The results are merged with one all-gather per call and every rank continues with
all of them (what follows, metrics and records, is cheap and the same everywhere); only rank 0
writes files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Replicas:
    """This process's place among the evaluation's ranks (rank 0 of 1: no collectives at all)."""

    rank: int = 0
    world: int = 1

    def __post_init__(self):
        if not 0 <= self.rank < self.world:
            raise ValueError(f"rank {self.rank} is not one of {self.world} ranks")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def mine(self, batches: Sequence[T]) -> list[tuple[int, T]]:
        """(batch number, batch) of this rank's share: every world-th batch of the one-rank plan."""
        return [(number, batches[number]) for number in range(self.rank, len(batches), self.world)]

    def merge(self, results: list, computed: dict[int, object]) -> list:
        """`results` (one slot per request, in request order) with every rank's `computed` slots filled in."""
        if self.world > 1:
            import torch.distributed as dist

            shares: list[dict | None] = [None] * self.world
            dist.all_gather_object(shares, computed)
            computed = {index: value for share in shares for index, value in share.items()}  # type: ignore[union-attr]
        for index, value in computed.items():
            results[index] = value
        missing = [i for i, value in enumerate(results) if value is None]
        if missing:
            raise RuntimeError(f"{len(missing)} requests were computed by no rank (first: {missing[0]})")
        return results


ONE = Replicas()


def from_process_group() -> Replicas:
    """The initialised process group's rank and size (a world of one when there is none)."""
    import torch.distributed as dist

    if not dist.is_initialized():
        return ONE
    return Replicas(dist.get_rank(), dist.get_world_size())
