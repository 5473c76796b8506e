"""flash-attn-4's kernels under torch's flash-attention ops, for --packed-attention fa4 (Hopper, Blackwell).

flash-attn-4 (the CuTe DSL rewrite of FlashAttention, with FA3's Hopper kernels) is registered as
the CUDA implementation of aten's `_flash_attention_forward` and `_flash_attention_backward`, the
two ops behind torch's varlen attention. The ops keep their schema and meta kernels, so the varlen
entry (lineage.training.varlen_attention) and compiled blocks run unchanged: only the kernel is
another. On the chat rows it is faster than torch's FlashAttention 2 (benchmarks/RESULTS.md).

torch ships a prototype of this registration (torch.nn.attention's "FA4"); with torch 2.11 it
unpacks two values from a forward that flash-attn-4 4.0.0b19 and later extend, and refuses the
causal window that varlen attention passes, hence this adapter of our own.
"""

from __future__ import annotations

import importlib.util

import torch

NAME = "fa4"
PACKAGE = "flash-attn-4"
ARCHITECTURES = (9, 10)  # compute capability majors of its kernels: Hopper, Blackwell

_library = None  # the dispatcher registration, alive for the rest of the process once made


class FlashAttention4Error(RuntimeError):
    """flash-attn-4 cannot run here; the message says what to install or choose instead."""


def installed() -> bool:
    """Whether flash-attn-4 imports here (its kernels live in flash_attn.cute; flash-attn 2 has none)."""
    return (
        importlib.util.find_spec("flash_attn") is not None and importlib.util.find_spec("flash_attn.cute") is not None
    )


def refusal(device: torch.device) -> str | None:
    """Why flash-attn-4 cannot run on `device` (None when it can)."""
    if device.type != "cuda":
        return f"--packed-attention fa4 runs flash-attn-4's CUDA kernels; on {device.type} use sdpa"
    if not installed():
        return f"--packed-attention fa4 needs the {PACKAGE} package: pip install {PACKAGE} (or use varlen)"
    if not torch.cuda.is_available():
        return "--packed-attention fa4 needs a CUDA GPU, and torch sees none here"
    major = torch.cuda.get_device_capability(device)[0]
    if major not in ARCHITECTURES:
        return (
            f"flash-attn-4 has kernels for Hopper and Blackwell GPUs (compute capability 9.x, 10.x), not "
            f"{major}.x: use --packed-attention varlen"
        )
    return None


def window(left: int | None, right: int | None, is_causal: bool) -> tuple[bool, int | None, int | None]:
    """aten's attention window (-1 = unbounded; causal may arrive as right = 0) as flash-attn-4's arguments."""
    causal = bool(is_causal) or (right == 0 and left in (None, -1))
    return causal, None if left in (None, -1) else left, None if right in (None, -1) or causal else right


def _forward(
    query,
    key,
    value,
    cum_seq_q,
    cum_seq_k,
    max_q,
    max_k,
    dropout_p,
    is_causal,
    return_debug_mask,
    *,
    scale=None,
    window_size_left=None,
    window_size_right=None,
    **others,
):
    """aten._flash_attention_forward for ragged q, k, v of (tokens, heads, dim): (out, lse, rng, unused, mask)."""
    from flash_attn.cute.interface import _flash_attn_fwd

    if dropout_p or return_debug_mask or cum_seq_q is None or any(v is not None for v in others.values()):
        raise RuntimeError(
            "flash-attn-4 here runs varlen attention without dropout, debug masks, paging or "
            "per-row key lengths; use --packed-attention varlen for those"
        )
    causal, left, right = window(window_size_left, window_size_right, is_causal)
    out, lse, *_ = _flash_attn_fwd(
        query,
        key,
        value,
        cu_seqlens_q=cum_seq_q,
        cu_seqlens_k=cum_seq_k,
        max_seqlen_q=max_q,
        max_seqlen_k=max_k,
        softmax_scale=scale,
        causal=causal,
        window_size_left=left,
        window_size_right=right,
        return_lse=True,
    )
    empty = query.new_empty(0)
    return out, lse.contiguous(), torch.zeros(2, dtype=torch.uint64, device=query.device), empty, empty


def _backward(
    grad_out,
    query,
    key,
    value,
    out,
    logsumexp,
    cum_seq_q,
    cum_seq_k,
    max_q,
    max_k,
    dropout_p,
    is_causal,
    rng_state,
    unused,
    *,
    scale=None,
    window_size_left=None,
    window_size_right=None,
):
    from flash_attn.cute.interface import _flash_attn_bwd

    causal, left, right = window(window_size_left, window_size_right, is_causal)
    dq, dk, dv, *_ = _flash_attn_bwd(
        query,
        key,
        value,
        out,
        grad_out.contiguous(),
        logsumexp.contiguous(),
        softmax_scale=scale,
        causal=causal,
        window_size_left=left,
        window_size_right=right,
        cu_seqlens_q=cum_seq_q,
        cu_seqlens_k=cum_seq_k,
        max_seqlen_q=max_q,
        max_seqlen_k=max_k,
    )
    return dq, dk, dv


def activate(device: torch.device) -> None:
    """Route this process's flash-attention ops to flash-attn-4 (idempotent); refuses where it cannot run."""
    global _library
    if problem := refusal(device):
        raise FlashAttention4Error(problem)
    if _library is None:
        _library = torch.library.Library("aten", "IMPL", "CUDA")
        _library.impl("_flash_attention_forward", _forward, "CUDA")
        _library.impl("_flash_attention_backward", _backward, "CUDA")


def deactivate() -> None:
    """Give torch's flash-attention ops back their own kernels (dropping the library drops its registrations)."""
    global _library
    _library = None
