"""Expert parallelism: each MoE layer's routed experts split over E ranks, tokens sent to them by all-to-all.

With E = 1 FSDP gathers every expert of a layer for every micro-batch, although each token uses
top-k of them (6 of 128 for the card's Nemotron-H): the gathers, not the matmuls, bound the step.
With E > 1 the ranks form a 2-D mesh (`dp_mod_ep`, `ep`), ep the inner dimension, so an expert
group stays within a node (lineage/parallel_dims.py: the degree's rules; lineage/training/mesh.py: the mesh). Each `*Experts` module keeps experts r*n/E ... (r+1)*n/E - 1 of ep rank r
as DTensors `Shard(0)` over `ep` (FSDP shards them further over `dp_mod_ep`, and everything else
over all ranks as before), and its forward:

1. orders the token copies by (expert, top-k slot, token), the order transformers' eager experts
   visit them in, and sends each to the rank of its expert (all-to-all, uneven splits); the copies
   are made, and summed back in 3., by moe_dispatch.py's gathers (no scatter-add in the backward);
2. runs the local experts as the module's implementation does: grouped_mm's two grouped GEMMs
   directly on the rows as they arrive grouped (no second sort), or the eager loop;
3. sends the results back (the all-to-all's transpose) and adds them up per token as that
   implementation does (grouped_mm: over the slots in order; eager: expert by expert).

Both all-to-alls are torch.distributed.nn's autograd-aware one, so the backward sends the
gradients the same way back. A token's result is the E = 1 result: the same rows go through the
same per-expert matmuls and are summed in the same order; only a matmul's blocking over a larger
batch of rows can round differently (tests/test_expert_parallel.py says how close).

Saved checkpoints keep transformers' layout: the full state dict gathers the DTensors whole.

How the group's ranks swap counts and rows is the module's `exchange` (`TokenExchange`: all-to-all over
the group). A rehearsal of one rank (tools/rehearse.py) puts a balanced exchange in its place.
"""

from __future__ import annotations

import types

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard

from lineage import families
from lineage.training.moe_dispatch import (
    check_supported,
    dispatch,
    down_and_sum,
    down_inputs,
    expert_counts,
    inverse,
    permute_rows,
)


def expert_modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model families' routed-expert modules (weights stored as 3-D tensors; lineage/families)."""
    return families.expert_modules(model)


def split_experts(model: torch.nn.Module, ep_mesh: DeviceMesh) -> None:
    """Before fully_shard (on the meta device): each expert weight becomes this rank's share, a DTensor
    Shard(0) over `ep_mesh`, and each experts module dispatches its tokens by all-to-all."""
    degree, rank = ep_mesh.size(), ep_mesh.get_local_rank()
    for module in expert_modules(model):
        if getattr(module.config, "_experts_implementation", None) == "grouped_mm":
            check_supported(module)
        for name, param in list(module.named_parameters(recurse=False)):
            if param.dim() != 3:
                continue
            per_rank = param.shape[0] // degree
            local = param.detach()[rank * per_rank : (rank + 1) * per_rank]
            shared = DTensor.from_local(
                local, ep_mesh, [Shard(0)], run_check=False, shape=param.shape, stride=param.stride()
            )
            module.register_parameter(name, torch.nn.Parameter(shared, requires_grad=param.requires_grad))
        module.local_forward = type(module).forward
        module.forward = types.MethodType(dispatched_forward, module)
        module.exchange, module.ep_degree, module.ep_rank = TokenExchange(ep_mesh.get_group()), degree, rank


class TokenExchange:
    """The expert group's all-to-alls: the per-expert counts (one small exchange), then the rows themselves."""

    def __init__(self, group: dist.ProcessGroup):
        self.group = group

    def counts(self, sent_per_expert: torch.Tensor) -> torch.Tensor:
        """Rows each local expert gets from each rank, [source rank, local expert] flattened."""
        got_per_expert = torch.empty_like(sent_per_expert)
        dist.all_to_all_single(got_per_expert, sent_per_expert, group=self.group)
        return got_per_expert

    def rows(self, tensor: torch.Tensor, received: list[int], sent: list[int]) -> torch.Tensor:
        """`tensor`'s rows sent in blocks of `sent` to the ranks in order; what arrives, in blocks of `received`."""
        out = tensor.new_empty(sum(received), *tensor.shape[1:])
        return dist_nn.all_to_all_single(out, tensor, received, sent, group=self.group)


class _LocalExperts(torch.nn.Module):
    """The module as its experts implementation sees it: this rank's experts only, as plain tensors."""

    def __init__(self, module: torch.nn.Module, weights: dict[str, torch.Tensor], experts: int):
        super().__init__()
        self.__dict__.update({k: v for k, v in module.__dict__.items() if not k.startswith("_")})
        self._is_expert_parallel = False  # transformers' own (replicated-token) expert parallelism: not this
        for name, child in module.named_children():
            self.add_module(name, child)  # the activation
        self.__dict__.update(weights)
        self.num_experts = experts


@torch.compiler.disable
def _host_side(module, sent: torch.Tensor, received: torch.Tensor) -> tuple[list[int], list[int], dict]:
    """The split sizes read on the host (one read), and this rank's experts as plain tensors: the one graph break
    of the dispatch. Taken outside a compiled graph, the local weights are what autograd sees in the forward and
    in a checkpoint's rerun alike; traced, Dynamo guards on the DTensor's inner tensor, whose requires_grad FSDP
    leaves different in the two, and compiles the rerun anew (a second graph whose saved tensors can differ from
    the forward's: the checkpoint then refuses the rerun)."""
    send, receive = torch.stack([sent, received]).tolist()
    weights = {
        name: param.to_local() for name, param in module.named_parameters(recurse=False) if isinstance(param, DTensor)
    }
    return send, receive, weights


def dispatched_forward(
    self, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
) -> torch.Tensor:
    tokens, top_k = top_k_index.shape
    experts, degree = self.num_experts, self.ep_degree
    per_rank = experts // degree
    grouped = getattr(self.config, "_experts_implementation", None) == "grouped_mm"
    # token copies (copy c = token * top_k + slot) in (expert, slot, token) order: transformers' eager loop order
    copy = torch.arange(tokens * top_k, device=top_k_index.device)
    expert = top_k_index.reshape(-1)
    order = torch.argsort((expert * top_k + copy % top_k) * tokens + copy // top_k)
    position = inverse(order)
    sent_per_expert = expert_counts(expert, experts).long()  # a fixed size: no graph break
    got = self.exchange.counts(sent_per_expert).view(degree, per_rank)  # [source rank, local expert]
    send, receive, weights = _host_side(self, sent_per_expert.view(degree, per_rank).sum(1), got.sum(1))

    by_expert = arrival = None
    if degree > 1:  # rows arrive by source rank, each source's rows by local expert (one source: by expert)
        local_expert = torch.repeat_interleave(
            torch.arange(per_rank, device=got.device).repeat(degree), got.reshape(-1), output_size=sum(receive)
        )
        by_expert = torch.argsort(local_expert, stable=True)
        arrival = inverse(by_expert)

    def to_experts(rows: torch.Tensor) -> torch.Tensor:
        """This rank's rows sent to their experts' ranks; what arrives, grouped by local expert."""
        rows = self.exchange.rows(rows, receive, send)
        return rows if by_expert is None else permute_rows(rows, by_expert, arrival)

    def route_back(rows: torch.Tensor) -> torch.Tensor:
        """to_experts reversed: the rows back in arrival order, then to the ranks they came from."""
        if by_expert is not None:
            rows = permute_rows(rows, arrival, by_expert)
        return self.exchange.rows(rows, send, receive)

    arrived = to_experts(dispatch(hidden_states, order, position, top_k))
    if grouped:
        row_weights = to_experts(permute_rows(top_k_weights.reshape(-1, 1), order, position))
        offsets = torch.cumsum(got.sum(0), dim=0, dtype=torch.int32)
        inputs = down_inputs(self, arrived, row_weights.reshape(-1), weights, offsets)
        return down_and_sum(self, inputs, weights, offsets, order, position, top_k, route_back)
    # the module's own implementation (eager) on the local experts, each row with weight 1
    ids = torch.repeat_interleave(torch.arange(per_rank, device=got.device), got.sum(0))
    # weight 1 in the rows' own dtype: the experts' output is not rounded before its real weight applies
    ones = torch.ones(len(ids), 1, dtype=hidden_states.dtype, device=hidden_states.device)
    returned = route_back(self.local_forward(_LocalExperts(self, weights, per_rank), arrived, ids[:, None], ones))
    # as the eager loop sums: expert by expert
    token, slot = order // top_k, order % top_k
    weighted = returned * top_k_weights[token, slot, None]
    out = torch.zeros_like(hidden_states, dtype=top_k_weights.dtype)
    return out.index_add_(0, token, weighted.to(top_k_weights.dtype)).to(hidden_states.dtype)
