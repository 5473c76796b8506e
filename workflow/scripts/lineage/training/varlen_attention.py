"""Packed rows kept apart by FlashAttention's variable-length kernel (`torch.nn.attention.varlen`).

With SDPA, packed rows need a dense block-diagonal mask, which rules out the flash kernel and
computes every masked block. The varlen kernel takes the row boundaries instead (cumulative
lengths, `cu_seq_lens`) and never touches a block across two rows. It is registered with
transformers as the attention implementation "varlen"; the trainer passes the boundaries of each
packed micro-batch as keyword arguments of the forward call, which transformers hands to every
attention layer unchanged. CUDA only (the kernel is FlashAttention's).
"""

from __future__ import annotations

import functools
import inspect
import math

import torch

NAME = "varlen"
DTYPES = (torch.bfloat16, torch.float16)  # the only dtypes FlashAttention computes in
TILE = 128  # positions per block of FlashAttention's grid: queries forward, keys backward (head dims 64, 128)


def grid_length(longest: int) -> int:
    """The max_length to give the kernel for a pack whose longest row has `longest` tokens.

    The kernel launches ceil(max_length / TILE) blocks for every row and head, and the blocks past
    a row's end only exit: a bound of --max-length (4,096) for chat rows of 400 tokens launches 8x
    the blocks that work. Rounded up to whole tiles the grid is the one of the exact length, and
    compiled blocks see few distinct values (Dynamo makes the int dynamic at the second one).
    """
    return max(TILE, -(-longest // TILE) * TILE)


def dtype_refusal(dtype: torch.dtype) -> str | None:
    """Why the varlen kernel cannot compute in `dtype` (None when it can)."""
    if dtype in DTYPES:
        return None
    name = str(dtype).removeprefix("torch.")
    return f"FlashAttention's varlen kernel computes in bfloat16 or float16, not {name}"


@functools.cache  # looked up once, not in every attention layer of every micro-batch
def _kernel():
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError as error:  # torch < 2.9
        raise RuntimeError(
            f"--packed-attention varlen needs torch >= 2.9 (torch.nn.attention.varlen); this is torch {torch.__version__}"
        ) from error
    return varlen_attn, frozenset(inspect.signature(varlen_attn).parameters)


def varlen_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention-function contract: (batch 1, heads, tokens, dim) in, (1, tokens, heads, dim) out."""
    if query.shape[0] != 1:
        raise ValueError(f"varlen attention takes one packed sequence per micro-batch, got a batch of {query.shape[0]}")
    if dropout:
        raise ValueError("varlen attention is for training without attention dropout")
    if problem := dtype_refusal(query.dtype):
        raise ValueError(f"{problem}: run the model in bf16 or use sdpa")
    cu_seq_lens, max_length = kwargs.get("cu_seq_lens_q"), kwargs.get("max_length_q")
    if cu_seq_lens is None or max_length is None:
        raise ValueError("varlen attention needs cu_seq_lens_q and max_length_q in the forward call (packed rows)")
    varlen_attn, params = _kernel()
    q, k, v = (t[0].transpose(0, 1).contiguous() for t in (query, key, value))  # (tokens, heads, dim)
    options = {}
    if q.shape[1] != k.shape[1]:  # grouped-query attention
        if "enable_gqa" in params:
            options["enable_gqa"] = True
        else:
            groups = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    if "is_causal" in params:  # torch 2.9
        options["is_causal"] = True
    else:
        options["window_size"] = (-1, 0)  # causal
    if scaling is not None:
        if "scale" in params:
            options["scale"] = scaling
        elif not math.isclose(scaling, q.shape[-1] ** -0.5):
            raise ValueError(f"this torch's varlen kernel has no scale argument; the model scales by {scaling}")
    out = varlen_attn(q, k, v, cu_seq_lens, cu_seq_lens, max_length, max_length, **options)
    return out.unsqueeze(0), None


def register() -> str:
    """Make "varlen" a valid attn_implementation for transformers models (idempotent)."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, varlen_attention)
    return NAME
