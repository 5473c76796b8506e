"""A MoE layer's token copies sent to their experts and summed back, by gathers in both directions.

Each of T tokens is copied to its top-k experts and the T*k copies are sorted by expert, so that
every expert's rows are contiguous for the two grouped GEMMs; afterwards each token sums its k
results, weighted by the router. Written with indexing (`x[token_of_row]`, `y[row_of_copy]`), as
transformers' grouped_mm does, autograd differentiates both gathers into scatter-adds
(`index_put_` with accumulate: atomics over T*k rows, in bf16 for the tokens' gradient), the
largest cost of a MoE layer after its GEMMs (~7% of a full-scale rank's step, benchmarks/RESULTS.md).

The sorted copies are a permutation, so each backward is a gather too: the dispatch's gathers each
token's k row gradients and sums them in fp32, in slot order (one rounding, the same every run);
the combine's gathers each row's token gradient. Under torch.compile each direction is one fused
kernel.

Rows and copies: copy c = token * k + slot; `order[j]` is the copy at row j (an expert-sorted
permutation of the copies), `position` its inverse (the row of copy c).
"""

from __future__ import annotations

import types

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
        copies = grad_rows[position].view(position.numel() // ctx.top_k, ctx.top_k, grad_rows.shape[-1])
        return copies.sum(1, dtype=torch.float32).to(grad_rows.dtype), None, None, None


class _Combine(torch.autograd.Function):
    """out[t] = sum over slots s, in order, of weights[t, s] * rows[position[t * k + s]], in fp32."""

    @staticmethod
    def forward(
        ctx, rows: torch.Tensor, weights: torch.Tensor, order: torch.Tensor, position: torch.Tensor
    ) -> torch.Tensor:
        ctx.save_for_backward(rows, weights, order, position)
        tokens, top_k = weights.shape
        return (rows[position].view(tokens, top_k, rows.shape[-1]) * weights.unsqueeze(-1)).sum(1)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        rows, weights, order, position = ctx.saved_tensors
        tokens, top_k = weights.shape
        grad_rows = grad_weights = None
        if ctx.needs_input_grad[0]:
            row_weight = weights.reshape(-1)[order].unsqueeze(-1)
            grad_rows = (grad_out[order // top_k] * row_weight).to(rows.dtype)
        if ctx.needs_input_grad[1]:
            picked = rows[position].view(tokens, top_k, rows.shape[-1])
            grad_weights = (grad_out.unsqueeze(1) * picked).sum(-1).to(weights.dtype)
        return grad_rows, grad_weights, None, None


def dispatch(x: torch.Tensor, order: torch.Tensor, position: torch.Tensor, top_k: int) -> torch.Tensor:
    """[T, H] tokens -> [T*k, H] rows in `order`."""
    return _Dispatch.apply(x, order, position, top_k)


def combine(rows: torch.Tensor, weights: torch.Tensor, order: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """[T*k, H] rows in `order`, [T, k] router weights -> [T, H] weighted sums (fp32, as the weights promote)."""
    return _Combine.apply(rows, weights, order, position)


def grouped_experts(
    module: torch.nn.Module, rows: torch.Tensor, weights: dict[str, torch.Tensor], counts: torch.Tensor
) -> torch.Tensor:
    """The experts on rows already grouped by expert (`counts` rows each): two grouped GEMMs, as transformers'
    grouped_mm computes them, without its own sort and gathers (check_supported(module) when installed)."""
    offsets = torch.cumsum(counts, dim=0, dtype=torch.int32)
    gated = getattr(module, "has_gate", False)
    up = _grouped_linear(
        rows, weights["gate_up_proj" if gated else "up_proj"], offsets, is_transposed=module.is_transposed
    )
    up = module._apply_gate(up) if gated else module.act_fn(up)
    return _grouped_linear(up, weights["down_proj"], offsets, is_transposed=module.is_transposed)


def check_supported(module: torch.nn.Module) -> None:
    """Refuse, before training, an experts module grouped_experts would compute wrongly."""
    if getattr(module, "has_bias", False) or getattr(module, "has_post_expert_norm", False):
        raise MoeDispatchError(
            f"{type(module).__name__}: expert biases and post-expert norms are not supported by the trainer's "
            "expert dispatch; set experts: eager"
        )


def expert_counts(experts: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Rows per expert, as a fixed-size tensor (histc: no data-dependent shape under torch.compile)."""
    values = experts.float() if experts.device.type in ("cpu", "mps") else experts.int()
    return torch.histc(values, bins=num_experts, min=0, max=num_experts - 1)


def sorted_experts_forward(
    self: torch.nn.Module, hidden_states: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
) -> torch.Tensor:
    """transformers' grouped_mm experts forward (same rows, same GEMMs, same fp32 sum per token in slot order),
    its sort and gathers replaced by this module's dispatch and combine."""
    top_k = top_k_index.shape[-1]
    experts = top_k_index.reshape(-1)
    order = torch.argsort(experts, stable=True)
    position = inverse(order)
    rows = dispatch(hidden_states, order, position, top_k)
    weights = {name: param for name, param in self.named_parameters(recurse=False) if param.dim() == 3}
    computed = grouped_experts(self, rows, weights, expert_counts(experts, self.num_experts))
    return combine(computed, top_k_weights, order, position).to(hidden_states.dtype)


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
