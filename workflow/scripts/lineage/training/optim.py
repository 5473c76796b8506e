"""AdamW on the fp32 (master) parameters, the learning-rate schedules, and gradient clipping.

Weight decay applies to matrices (dim >= 2: projections, experts, embeddings) and not to
vectors (norm weights, biases, the Mamba A_log / D / dt_bias), as in most open recipes.
"""

from __future__ import annotations

import math

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor

from lineage.training.recipe import SCHEDULES


def build_optimizer(
    model: torch.nn.Module,
    *,
    lr: float,
    betas: tuple[float, float],
    weight_decay: float,
    eps: float = 1e-8,
    fused: bool | None = None,
) -> torch.optim.AdamW:
    """AdamW over the trainable parameters; `fused` (one kernel a step) defaults to on when they are all on GPUs."""
    decay, no_decay = [], []
    for param in model.parameters():
        if param.requires_grad:
            (decay if param.dim() >= 2 else no_decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if fused is None:
        fused = all(p.is_cuda for p in decay + no_decay)
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, fused=fused or None)


def lr_multiplier(step: int, *, steps: int, warmup: int, schedule: str, min_ratio: float = 0.0) -> float:
    """Factor on the peak lr at optimizer step `step` (0-based).

    Linear warmup reaches the peak at step warmup-1; then cosine or linear decay toward
    min_ratio (reached one step after the last step), or constant.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    progress = (step - warmup) / max(1, steps - warmup)
    shape = 0.5 * (1.0 + math.cos(math.pi * progress)) if schedule == "cosine" else 1.0 - progress
    return min_ratio + (1.0 - min_ratio) * shape


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def clip_grad_norm(
    model: torch.nn.Module, max_norm: float, optimizer: torch.optim.Optimizer | None = None
) -> torch.Tensor:
    """Clip to `max_norm` (0 = no clipping) for the coming optimizer step; return the total gradient norm
    before clipping.

    A fused AdamW takes the clip into its step: it divides each gradient by `grad_scale` =
    max(1, norm / max_norm) as it reads it (the hook GradScaler uses), so no pass rewrites every fp32
    gradient first; otherwise the gradients are scaled here. The norm stays a device tensor (0-d) so
    that the step is queued behind it without the host waiting for the GPU; float() it when the step's
    numbers are read.
    """
    params_by_mesh = _params_by_mesh(model)
    norm = _total_norm(params_by_mesh)
    fused = optimizer is not None and bool(optimizer.defaults.get("fused"))
    if optimizer is not None:
        optimizer.grad_scale = None  # set again below when this step's clip is folded in
    if max_norm <= 0:
        return norm
    if fused:
        # torch's clip multiplies by min(1, max_norm / (norm + 1e-6)); the step divides by its inverse
        optimizer.grad_scale = torch.clamp((norm.float() + 1e-6) / max_norm, min=1.0)
    else:
        for params in params_by_mesh.values():  # it scales each parameter's .grad (given tensors, it does nothing)
            torch.nn.utils.clip_grads_with_norm_(params, max_norm, norm, foreach=True)
    return norm


def _params_by_mesh(model: torch.nn.Module) -> dict[DeviceMesh | None, list[torch.nn.Parameter]]:
    """The parameters that have a gradient, grouped by device mesh (None: plain tensors). Under expert
    parallelism the experts are sharded on a mesh of their own, and one foreach op does not take DTensors
    of two meshes."""
    groups: dict[DeviceMesh | None, list[torch.nn.Parameter]] = {}
    for param in model.parameters():
        if param.grad is not None:
            groups.setdefault(param.device_mesh if isinstance(param, DTensor) else None, []).append(param)
    return groups


def _total_norm(params_by_mesh: dict[DeviceMesh | None, list[torch.nn.Parameter]]) -> torch.Tensor:
    """The 2-norm over all gradients, a plain 0-d tensor: each mesh's norm made whole, then combined."""
    parts = []
    for params in params_by_mesh.values():
        part = torch.nn.utils.get_total_norm([p.grad for p in params], foreach=True)
        parts.append(part.full_tensor() if isinstance(part, DTensor) else part)
    if not parts:
        return torch.zeros(())
    return parts[0] if len(parts) == 1 else torch.linalg.vector_norm(torch.stack(parts))
