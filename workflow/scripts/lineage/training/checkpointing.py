"""Activation checkpointing of each block: full (recompute the whole block) or selective.

Selective keeps what is costly to recompute and recomputes the rest: the outputs of the matrix
products (dense, batched and the experts' grouped GEMMs) and of the attention kernels are saved
in forward; norms, activations, casts, routing and the residual adds are recomputed in backward
from them. The backward then re-runs only cheap elementwise work (and the Mamba-2 kernels, which
launch their own kernels and are recomputed whole), for more memory than full checkpointing.
Non-reentrant in both cases, so FSDP2's hooks stay outside the recompute.
"""

from __future__ import annotations

import functools

import torch

MODES = (False, True, "selective")  # none, full, selective


@functools.cache  # the policy asks for every op of every forward: decide each op once
def _saved(op) -> bool:
    """An op whose output selective checkpointing keeps: a matrix product or an attention kernel."""
    name = str(op)
    return any(word in name for word in ("aten.mm", "aten.addmm", "aten.bmm", "grouped_mm", "attention", "flash"))


def _policy(ctx, op, *args, **kwargs):
    from torch.utils.checkpoint import CheckpointPolicy

    return CheckpointPolicy.MUST_SAVE if _saved(op) else CheckpointPolicy.PREFER_RECOMPUTE


def checkpoint_options(mode) -> dict:
    """torch.utils.checkpoint keyword arguments for `mode` (True: full, "selective")."""
    if mode not in MODES[1:]:
        raise ValueError(f"activation checkpointing {mode!r}: expected true (full) or selective")
    options = {"use_reentrant": False}
    if mode == "selective":
        from torch.utils.checkpoint import create_selective_checkpoint_contexts

        options["context_fn"] = functools.partial(create_selective_checkpoint_contexts, _policy)
    return options


def enable_activation_checkpointing(model: torch.nn.Module, mode=True) -> None:
    """Recompute each block's activations in backward: all of them (True) or the cheap ones ("selective")."""
    options = checkpoint_options(mode)
    enable = getattr(model, "activation_checkpointing_enable", None)  # transformers >= 5.23
    if enable is not None:
        enable(options)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)
