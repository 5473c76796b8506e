"""Full activation checkpointing that does not recompute a block's last matrix product.

Under full checkpointing each block's backward first reruns the block's forward to recover what its
backward needs. torch's non-reentrant checkpoint stops that rerun as soon as the last tensor saved
for backward is recovered (early stop), and an eager matrix product saves its inputs before it
computes. So when a block's last product is eager and nothing after it saves a tensor (the residual
add saves none), the rerun stops before that product: it is computed once, in forward. A compiled
graph saves its tensors only after it has run, so the product must stand outside the graph.

The last products left out of the rerun, as each family names them (lineage/families/): the Mamba-2 mixer's out_proj, the attention's o_proj, the
routed experts' down GEMM (the MoE's shared expert now runs first) and a dense MLP's down_proj: at
the card's widths about a quarter of the rerun's matrix products (benchmarks/RESULTS.md). Each mixer
computes what it did before; only the routed experts change an operation's order (the router weight
multiplies the down GEMM's input, moe_dispatch.py), within bf16 rounding of the former output.
"""

from __future__ import annotations

import types

import torch

from lineage import families
from lineage.training.expert_parallel import dispatched_forward
from lineage.training.moe_dispatch import sorted_experts_forward


def _eager(module: torch.nn.Module) -> str:
    """`module` runs eager where its parent is compiled: the graph ends before it."""
    module.forward = torch.compiler.disable(module.forward)
    return type(module).__name__


def _down_last(experts: torch.nn.Module) -> bool:
    """Experts whose forward ends with their eager down GEMM (moe_dispatch.py, expert_parallel.py on grouped_mm)."""
    grouped = getattr(experts.config, "_experts_implementation", None) == "grouped_mm"
    forward = getattr(experts.forward, "__func__", None)
    return grouped and forward in (sorted_experts_forward, dispatched_forward)


def leave_out_of_recompute(block: torch.nn.Module) -> list[str]:
    """Make `block`'s last matrix product eager and its last op that saves a tensor for backward (before the
    block is compiled and checkpointed); return what was changed, by class name ([] when nothing applies).

    The block's family names its last products (families.Tail); a block no family builds is left as it is."""
    family = families.of_block(block)
    changed = []
    for tail in family.last_products(block) if family else []:
        if tail.forward is None:
            changed.append(_eager(tail.module))
        elif (not tail.kernels or not family.missing_kernels()) and (tail.experts is None or _down_last(tail.experts)):
            tail.module.forward = types.MethodType(tail.forward, tail.module)
            changed.append(type(tail.module).__name__)
    return changed
