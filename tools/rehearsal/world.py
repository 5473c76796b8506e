"""Rank r of an N-rank job in one process: torch's fake process group, and collectives with a stated rule.

torch's fake group (torch.testing._internal.distributed.fake_pg, a private module: tests/test_rehearsal.py pins
what is used of it) builds the real device meshes and lets FSDP2 shard the model as it would over N ranks, but
its collectives move no data, and what they leave in their outputs differs by torch version (2.11 leaves an
all-gather's output as it was allocated; 2.13 tiles the rank's own shard). So the rehearsal relies on neither
and gives each collective the model's compute sees a rule of its own, one that keeps every value finite:

- FSDP's all-gather tiles this rank's shard into every rank's place, and its reduce-scatter keeps this rank's
  chunk, times N for a sum: every rank is taken to hold what this one holds (lineage.training.dist's
  all_reduce_sum takes the same view, so losses, counts and rates are this rank's);
- the expert group's all-to-all is the identity with balanced routing (BalancedExchange, routing.py): each rank
  receives from the others what it sends them, the same number of rows per expert.

Both rules run on the streams the real collectives run on (FSDP's own for its copies), so the compute
overlaps them as it would NCCL's. The network itself is not measured: its bandwidths stay the planner's.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FSDPModule
from torch.distributed.fsdp._fully_shard._fsdp_api import AllGather, ReduceScatter
from torch.distributed.fsdp._fully_shard._fsdp_collectives import DefaultAllocMixin

from lineage.parallel_dims import ParallelDims
from lineage.training.dist import REHEARSAL_BACKEND, DistEnv, training_allocator
from lineage.training.expert_parallel import TokenExchange, expert_modules


def join(rank: int, dims: ParallelDims, device: torch.device) -> DistEnv:
    """This process as rank `rank` of the job `dims` lays out (its world, its ranks a node) in torch's fake group."""
    from torch.testing._internal.distributed.fake_pg import FakeStore  # registers the backend

    world_size, ranks_per_node = dims.world_size, dims.processes_per_node
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not one of the {world_size} ranks 0..{world_size - 1}")
    if device.type == "cuda":
        print(f"CUDA allocator: {training_allocator()}", flush=True)  # as a training job sets it, before CUDA starts
        torch.cuda.set_device(device)
    dist.init_process_group(REHEARSAL_BACKEND, rank=rank, world_size=world_size, store=FakeStore())
    return DistEnv(
        rank=rank,
        world_size=world_size,
        local_rank=rank % ranks_per_node,
        device=device,
        local_world_size=ranks_per_node,
    )


class TiledAllGather(DefaultAllocMixin, AllGather):
    """Every rank's place in the gathered buffer holds this rank's shard."""

    def __call__(self, output_tensor, input_tensor, group, async_op: bool = False):
        output_tensor.view(group.size(), -1).copy_(input_tensor.view(1, -1).expand(group.size(), -1))
        return None


class OwnReduceScatter(DefaultAllocMixin, ReduceScatter):
    """This rank's chunk of the gradients, summed over ranks that are taken to hold the same."""

    def __call__(self, output_tensor, input_tensor, group, op, async_op: bool = False):
        own = input_tensor.view(group.size(), -1)[group.rank()]
        if op == dist.ReduceOp.SUM:
            torch.mul(own, group.size(), out=output_tensor.view(-1))
        else:  # an average of equal parts
            output_tensor.view(-1).copy_(own)
        return None


class BalancedExchange(TokenExchange):
    """The expert group's all-to-alls under balanced routing: each rank gets back what it sends."""

    def __init__(self):
        super().__init__(group=None)

    def counts(self, sent_per_expert: torch.Tensor) -> torch.Tensor:
        return sent_per_expert.clone()

    def rows(self, tensor: torch.Tensor, received: list[int], sent: list[int]) -> torch.Tensor:
        return tensor


def give_rules(model: torch.nn.Module) -> int:
    """Put the rules above in place of the fake group's collectives; the number of FSDP modules they cover."""
    covered = 0
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.set_custom_all_gather(TiledAllGather())
            module.set_custom_reduce_scatter(OwnReduceScatter())
            covered += 1
    for experts in expert_modules(model):
        if hasattr(experts, "exchange"):
            experts.exchange = BalancedExchange()
    return covered
