"""The recipe's packing settings as the model and the collator need them, for SFT and DPO alike."""

from __future__ import annotations

import torch

from lineage.training import flash_attention_4, varlen_attention
from lineage.training.recipe import TrainRecipe

PACK_MULTIPLE = 256  # packs end at the next multiple of this many tokens after their last row
VARLEN_KERNELS = (varlen_attention.NAME, flash_attention_4.NAME)  # packed attention that takes the row boundaries


def refusal(recipe: TrainRecipe, device: str) -> str | None:
    """Why the recipe's packed attention cannot run on `device` (None when it can); checked before any work."""
    kernel = recipe.packed_attention
    if kernel in VARLEN_KERNELS and device == "cpu":
        return f"--packed-attention {kernel} runs a CUDA kernel; on CPU use sdpa"
    if kernel in VARLEN_KERNELS and recipe.precision == "fp32":
        why = varlen_attention.dtype_refusal(torch.float32)
        return f"--packed-attention {kernel} with --precision fp32: {why}; train in bf16 or pack with sdpa"
    return None


def attention_implementation(recipe: TrainRecipe, device: torch.device) -> str | None:
    """The attn_implementation to build the model with (None: transformers' default for it).

    fa4 is the varlen implementation with flash-attn-4's kernels put under torch's flash-attention
    ops on `device` (refused with what to install or choose where they cannot run).
    """
    if not recipe.packing:
        return None
    if recipe.packed_attention == flash_attention_4.NAME:
        flash_attention_4.activate(device)
    if recipe.packed_attention in VARLEN_KERNELS:
        return varlen_attention.register()
    return recipe.packed_attention


def takes_boundaries(recipe: TrainRecipe) -> bool:
    """Whether the attention kernel takes the packs' row boundaries (cu_seq_lens) as inputs."""
    return recipe.packing and recipe.packed_attention in VARLEN_KERNELS


def pack_multiple(recipe: TrainRecipe) -> int | None:
    """FlexAttention compiles its block mask per shape: its packs keep one length. Elsewhere a pack
    ends soon after its last row (a multiple of PACK_MULTIPLE, so compiled blocks see few shapes)."""
    return None if recipe.packed_attention == "flex_attention" else PACK_MULTIPLE
