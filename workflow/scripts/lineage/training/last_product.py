"""Full activation checkpointing that does not recompute a block's last matrix product.

Under full checkpointing each block's backward first reruns the block's forward to recover what its
backward needs. torch's non-reentrant checkpoint stops that rerun as soon as the last tensor saved
for backward is recovered (early stop), and an eager matrix product saves its inputs before it
computes. So when a block's last product is eager and nothing after it saves a tensor (the residual
add saves none), the rerun stops before that product: it is computed once, in forward. A compiled
graph saves its tensors only after it has run, so the product must stand outside the graph.

The last products left out of the rerun: the Mamba-2 mixer's out_proj, the attention's o_proj, the
routed experts' down GEMM (the MoE's shared expert now runs first) and a dense MLP's down_proj: at
the card's widths about a quarter of the rerun's matrix products (benchmarks/RESULTS.md). Each mixer
computes what it did before; only the routed experts change an operation's order (the router weight
multiplies the down GEMM's input, moe_dispatch.py), within bf16 rounding of the former output.
"""

from __future__ import annotations

import types

import torch

from lineage.training.expert_parallel import dispatched_forward
from lineage.training.moe_dispatch import sorted_experts_forward
from lineage.training.packing import missing_mamba_kernels


def _eager(module: torch.nn.Module) -> str:
    """`module` runs eager where its parent is compiled: the graph ends before it."""
    module.forward = torch.compiler.disable(module.forward)
    return type(module).__name__


def _shared_first_moe_forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
    """transformers' NemotronHMoE forward with the shared expert before the routed ones, whose down GEMM
    (moe_dispatch.py's eager tail) is then the block's last product."""
    shared = self.shared_experts(hidden_states)
    _, top_k_weights, top_k_index = self.gate(hidden_states)
    flat = hidden_states.view(-1, hidden_states.shape[-1])
    return self.experts(flat, top_k_index, top_k_weights).view(hidden_states.shape) + shared


def _mamba_forward_out_proj_last(self, hidden_states: torch.Tensor, cache_params=None, attention_mask=None, **kwargs):
    """transformers' NemotronHMamba2Mixer training forward on mamba-ssm's fused kernel, its out_proj moved
    out of the kernel (same product, same inputs), eager after it; other calls go to transformers' forward."""
    if not (self.training and cache_params is None and hidden_states.is_cuda):
        return type(self).forward(self, hidden_states, cache_params, attention_mask, **kwargs)
    from mamba_ssm.ops.triton.ssd_combined import mamba_split_conv1d_scan_combined
    from transformers.models.nemotron_h.modeling_nemotron_h import apply_mask_to_padding_states

    projected = self.in_proj(apply_mask_to_padding_states(hidden_states, attention_mask))
    scanned = mamba_split_conv1d_scan_combined(
        projected,
        self.conv1d.weight.squeeze(1),
        self.conv1d.bias,
        self.dt_bias,
        -torch.exp(self.A_log.float()),
        self.D,
        self.chunk_size,
        seq_idx=kwargs.get("seq_idx"),  # packed rows (lineage/training/packing.py)
        dt_limit=self.time_step_limit,
        activation=self.activation,
        rmsnorm_weight=self.norm.weight,
        rmsnorm_eps=self.norm.variance_epsilon,
        headdim=self.head_dim,
        ngroups=self.n_groups,
        norm_before_gate=False,
    )
    return self.out_proj(scanned)


def _down_last(experts: torch.nn.Module) -> bool:
    """Experts whose forward ends with their eager down GEMM (moe_dispatch.py, expert_parallel.py on grouped_mm)."""
    grouped = getattr(experts.config, "_experts_implementation", None) == "grouped_mm"
    forward = getattr(experts.forward, "__func__", None)
    return grouped and forward in (sorted_experts_forward, dispatched_forward)


def leave_out_of_recompute(block: torch.nn.Module) -> list[str]:
    """Make `block`'s last matrix product eager and its last op that saves a tensor for backward (before the
    block is compiled and checkpointed); return what was changed, by class name ([] when nothing applies)."""
    changed = []
    mixer = getattr(block, "mixer", None)  # Nemotron-H: one mixer per block
    kind = type(mixer).__name__
    if kind == "NemotronHMamba2Mixer":
        if not missing_mamba_kernels():  # the mixer runs eager (compiling.py): out_proj after the kernel is enough
            mixer.forward = types.MethodType(_mamba_forward_out_proj_last, mixer)
            changed.append(kind)
        # without the kernels transformers' own forward already ends with out_proj
    elif kind == "NemotronHAttention":
        changed.append(_eager(mixer.o_proj))
    elif kind == "NemotronHMoE":
        latent = not isinstance(mixer.fc2_latent_proj, torch.nn.Identity)  # a product after the experts
        if not latent and _down_last(mixer.experts):
            mixer.forward = types.MethodType(_shared_first_moe_forward, mixer)
            changed.append(kind)
    elif mixer is not None and isinstance(getattr(mixer, "down_proj", None), torch.nn.Linear):
        changed.append(_eager(mixer.down_proj))  # Nemotron-H's dense MLP blocks
    mlp = getattr(block, "mlp", None)  # Llama-like: attention, then the MLP last
    if isinstance(getattr(mlp, "down_proj", None), torch.nn.Linear):
        changed.append(_eager(mlp.down_proj))
    return changed
