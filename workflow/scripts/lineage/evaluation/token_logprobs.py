"""Each scored position's log-probability of its target token, and whether the target is the argmax.

From a chunk of bf16 logits, torch needs five passes over a (positions x vocabulary) tensor: the
float32 copy, log-softmax's max and sum, the gather and the argmax. At a 128k vocabulary that is
most of a packed scoring pass's non-matrix time. On CUDA one Triton kernel reads each row once,
keeping a running max, the float32 sum of exponentials and the first index of the max (torch's
argmax picks the first of tied values too, as lm-eval's greedy check does). Elsewhere, or where
Triton does not import, the same quantities come from torch.
"""

from __future__ import annotations

import functools
import importlib.util

import torch

BLOCK = 4096  # vocabulary entries a program reads per step


def target_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(float32 (float64 for float64 logits) log-softmax at each row's target, whether the target is the
    row's first argmax)."""
    if logits.is_cuda and logits.stride(-1) == 1 and _kernel() is not None:
        return _triton_logprobs(logits, targets)
    return torch_logprobs(logits, targets)


def torch_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    values = logits.to(torch.promote_types(logits.dtype, torch.float32))
    target_values = values.gather(-1, targets[:, None]).squeeze(-1)
    return target_values - torch.logsumexp(values, dim=-1), values.argmax(-1) == targets


@functools.cache
def _kernel():
    if importlib.util.find_spec("triton") is None:
        return None
    import triton
    import triton.language as tl

    @triton.jit
    def row_logprob(logits, row_stride, targets, logprobs, hits, vocab, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        start = logits + row * row_stride
        running_max = tl.full((), float("-inf"), tl.float32)
        exp_sum = tl.zeros((), tl.float32)
        best = tl.full((), float("-inf"), tl.float32)
        best_at = tl.zeros((), tl.int64)
        for offset in range(0, vocab, BLOCK):
            columns = offset + tl.arange(0, BLOCK)
            x = tl.load(start + columns, mask=columns < vocab, other=float("-inf")).to(tl.float32)
            block_max = tl.max(x, 0)
            block_at = offset + tl.argmax(x, 0).to(tl.int64)
            best_at = tl.where(block_max > best, block_at, best_at)  # strict: the first maximum wins
            best = tl.maximum(best, block_max)
            new_max = tl.maximum(running_max, block_max)
            exp_sum = exp_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), 0)
            running_max = new_max
        target = tl.load(targets + row)
        target_value = tl.load(start + target).to(tl.float32)
        tl.store(logprobs + row, target_value - running_max - tl.log(exp_sum))
        tl.store(hits + row, best_at == target)

    return row_logprob


def _triton_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, vocab = logits.shape
    logprobs = torch.empty(rows, dtype=torch.float32, device=logits.device)
    hits = torch.empty(rows, dtype=torch.bool, device=logits.device)
    if rows:
        _kernel()[(rows,)](logits, logits.stride(0), targets.contiguous(), logprobs, hits, vocab, BLOCK=BLOCK)
    return logprobs, hits
