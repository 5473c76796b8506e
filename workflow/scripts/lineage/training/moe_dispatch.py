"""A MoE layer's token copies sent to their experts and summed back, by gathers in both directions.

Each of T tokens is copied to its top-k experts and the T*k copies are sorted by expert, so that
every expert's rows are contiguous for the two grouped GEMMs; afterwards each token sums its k
results. Written with indexing (`x[token_of_row]`, `y[row_of_copy]`), as transformers' grouped_mm
does, autograd differentiates both gathers into scatter-adds (`index_put_` with accumulate: atomics
over T*k rows, in bf16 for the tokens' gradient), the largest cost of a MoE layer after its GEMMs
(~7% of a full-scale rank's step, benchmarks/RESULTS.md).

The sorted copies are a permutation, so each backward is a gather too: the dispatch's gathers each
token's k row gradients and sums them in fp32, in slot order (one rounding, the same every run);
the sum's gathers each row's token gradient. Under torch.compile each direction is one fused kernel.

The router's weight multiplies a copy's down-projection input, not its output (the same product:
(w h) W = w (h W)), so the down GEMM and the sum of the copies come last and need nothing saved
through autograd: under full activation checkpointing the block's recompute stops before that GEMM
(last_product.py). The tail runs eager for that (an eager GEMM saves its inputs before computing).

Rows and copies: copy c = token * k + slot; `order[j]` is the copy at row j (an expert-sorted
permutation of the copies), `position` its inverse (the row of copy c).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import torch
from transformers.integrations.moe import _grouped_linear


class MoeDispatchError(ValueError):
    """An experts module this dispatch cannot run."""


def inverse(order: torch.Tensor) -> torch.Tensor:
    """The inverse permutation: position[order[j]] = j."""
    position = torch.empty_like(order)
    position[order] = torch.arange(order.numel(), device=order.device, dtype=order.dtype)
    return position


class _Dispatch(torch.autograd.Function):
    """rows = x[order // k]: each row the token of its copy."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, order: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
        ctx.save_for_backward(position)
        ctx.top_k = top_k
        return x[order // top_k]

    @staticmethod
    def backward(ctx, grad_rows: torch.Tensor):
        (position,) = ctx.saved_tensors
        return _summed_copies(grad_rows, position, ctx.top_k), None, None, None


def _summed_copies(rows: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
    """Each token's k rows added in fp32 in slot order, rounded once. Written as k adds, not a sum over a
    dimension of k: Inductor then makes one pointwise kernel of k gathers, where for `.sum(1)` it chose a
    reduction kernel 3.3x slower in a full-scale rank's backward (benchmarks/RESULTS.md)."""
    copies = rows[position].view(position.numel() // top_k, top_k, rows.shape[-1])
    total = copies[:, 0].float()
    for slot in range(1, top_k):
        total = total + copies[:, slot]
    return total.to(rows.dtype)


@functools.cache
def _summed_copies_fused():
    """_summed_copies compiled (gather, fp32 sum and cast: one kernel), made on first use: compiling imports
    Inductor (~1 s at start-up), which a CPU run never needs."""
    return torch.compile(_summed_copies, dynamic=True)


class _SumCopies(torch.autograd.Function):
    """out[t] = the sum over slots s, in order and in fp32, of rows[position[t * k + s]]; rounded once.

    Its backward needs only each row's token, which it keeps itself instead of saving it through autograd's
    saved-tensor hooks: under activation checkpointing it then asks nothing of the recompute."""

    @staticmethod
    def forward(ctx, rows: torch.Tensor, order: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
        ctx.token_of_row = order // top_k  # a few MB of indices, held until backward
        summed = _summed_copies_fused() if rows.is_cuda else _summed_copies
        return summed(rows, position, top_k)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        return grad_out[ctx.token_of_row], None, None, None


class _PermuteRows(torch.autograd.Function):
    """rows[index] for a permutation `index`; the backward gathers by its inverse, which the op keeps itself
    (as _SumCopies keeps its indices)."""

    @staticmethod
    def forward(ctx, rows: torch.Tensor, index: torch.Tensor, inverse_index: torch.Tensor) -> torch.Tensor:
        ctx.inverse_index = inverse_index
        return rows[index]

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad[ctx.inverse_index], None, None


def permute_rows(rows: torch.Tensor, index: torch.Tensor, inverse_index: torch.Tensor) -> torch.Tensor:
    """rows[index], `index` a permutation and `inverse_index` its inverse."""
    return _PermuteRows.apply(rows, index, inverse_index)


def dispatch(x: torch.Tensor, order: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
    """[T, H] tokens -> [T*k, H] rows in `order`."""
    return _Dispatch.apply(x, order, position, top_k)


def sum_copies(rows: torch.Tensor, order: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
    """[T*k, H] rows in `order` -> [T, H]: each token's k rows summed in fp32 in slot order, in the rows' dtype."""
    return _SumCopies.apply(rows, order, position, top_k)


def down_inputs(
    module: torch.nn.Module,
    rows: torch.Tensor,
    row_weights: torch.Tensor,
    weights: dict[str, torch.Tensor],
    offsets: torch.Tensor,
) -> torch.Tensor:
    """Rows grouped by expert (`offsets`: cumulative rows per expert) -> the down GEMM's input rows: the up
    grouped GEMM, the activation (or gate), each row times its router weight (in fp32, rounded once)."""
    gated = getattr(module, "has_gate", False)
    up = _grouped_linear(
        rows, weights["gate_up_proj" if gated else "up_proj"], offsets, is_transposed=module.is_transposed
    )
    up = module._apply_gate(up) if gated else module.act_fn(up)
    return (up * row_weights.unsqueeze(-1)).to(rows.dtype)


def check_supported(module: torch.nn.Module) -> None:
    """Refuse, before training, an experts module these functions would compute wrongly."""
    if getattr(module, "has_bias", False) or getattr(module, "has_post_expert_norm", False):
        raise MoeDispatchError(
            f"{type(module).__name__}: expert biases and post-expert norms are not supported by the trainer's "
            "expert dispatch; set experts: eager"
        )


def expert_counts(experts: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Rows per expert, as a fixed-size tensor (histc: no data-dependent shape under torch.compile)."""
    values = experts.float() if experts.device.type in ("cpu", "mps") else experts.int()
    return torch.histc(values, bins=num_experts, min=0, max=num_experts - 1)


def expert_weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The module's stacked expert weights by name (`up_proj`, `down_proj`, ...)."""
    return {name: param for name, param in module.named_parameters(recurse=False) if param.dim() == 3}


@torch.compiler.disable  # eager: its GEMM saves its inputs before computing (module docstring)
def down_and_sum(
    module: torch.nn.Module,
    rows: torch.Tensor,
    weights: dict[str, torch.Tensor],
    offsets: torch.Tensor,
    order: torch.Tensor,
    position: torch.Tensor,
    top_k: int,
    route_back: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """The experts' tail: the down grouped GEMM (check_supported(module): no expert biases or post-expert
    norms), its rows sent back to their tokens (`route_back`: expert parallelism's all-to-all), each token's
    k copies summed."""
    computed = _grouped_linear(rows, weights["down_proj"], offsets, is_transposed=module.is_transposed)
    if route_back is not None:
        computed = route_back(computed)
    return sum_copies(computed, order, position, top_k)


def sorted_experts_forward(
    self: torch.nn.Module, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
) -> torch.Tensor:
    """transformers' grouped_mm experts forward (same rows, same GEMMs, an fp32 sum per token in slot order), its
    sort and gathers replaced by this module's dispatch and sum, the router weights applied before the down GEMM."""
    top_k = top_k_index.shape[-1]
    experts = top_k_index.reshape(-1)
    order = torch.argsort(experts, stable=True)
    position = inverse(order)
    offsets = torch.cumsum(expert_counts(experts, self.num_experts), dim=0, dtype=torch.int32)
    rows = dispatch(hidden_states, order, position, top_k)
    row_weights = permute_rows(top_k_weights.reshape(-1), order, position)
    weights = expert_weights(self)
    inputs = down_inputs(self, rows, row_weights, weights, offsets)
    return down_and_sum(self, inputs, weights, offsets, order, position, top_k)


def use_sorted_dispatch(experts_modules: list[torch.nn.Module]) -> int:
    """Give every grouped_mm experts module this dispatch (others keep their own forward); return how many."""
    changed = 0
    for module in experts_modules:
        if getattr(module.config, "_experts_implementation", None) != "grouped_mm":
            continue
        check_supported(module)
        module.forward = types.MethodType(sorted_experts_forward, module)
        changed += 1
    return changed
