"""The LM head's loss with its gradient computed in the forward pass, written over the logits (CUDA, Triton).

At a 128k vocabulary the cross-entropy is memory-bound: each trained position's logits row is
256 KB of bf16, and a compiled log-softmax with an autograd backward reads and writes the logits
four to five times over the step. Here one Triton program per row reads its logits twice (the
running max and sum of exponentials, then the softmax) and writes `softmax - onehot` over them;
the logits buffer becomes the gradient buffer, so no second copy is ever alive. The backward is
then the head's two matrix products, scaled by the incoming gradient on their (small) outputs.

The result is the same summed fp32 cross-entropy as head_loss's other implementations. Off CUDA
(or without Triton) the same two steps run as torch ops, which is what the CPU tests check the
autograd wiring with; the GPU tests hold the kernel to them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except ImportError:  # CPU builds of torch ship without Triton
    triton = None

BLOCK = 32768  # columns per loop iteration: 64 KB of bf16 per program, 32 warps
WARPS = 32
CHUNK_ROWS = 2048  # positions whose bf16 logits are alive at once in the chunked loss (512 MiB at 131k)


def _loss_and_softmax_grad_torch_(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    wide = logits.to(torch.promote_types(logits.dtype, torch.float32))
    log_normalizer = wide.logsumexp(dim=1)
    losses = log_normalizer - wide.gather(1, targets[:, None]).squeeze(1)
    grad = (wide - log_normalizer[:, None]).exp_()
    grad[torch.arange(len(targets), device=logits.device), targets] -= 1
    logits.copy_(grad)
    return losses


def _loss_and_softmax_grad_triton_(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    rows, vocab = logits.shape
    losses = torch.empty(rows, dtype=torch.float32, device=logits.device)
    if rows:
        _loss_and_softmax_grad[(rows,)](
            logits, logits.stride(0), targets.contiguous(), losses, vocab, BLOCK=BLOCK, num_warps=WARPS
        )
    return losses


def loss_and_grad_(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each row's cross-entropy (fp32 or wider); `logits` (rows x vocab) is overwritten by its gradient."""
    if logits.stride(1) != 1:
        raise ValueError("the logits' rows must be contiguous")
    if logits.is_cuda and triton is not None:
        return _loss_and_softmax_grad_triton_(logits, targets)
    return _loss_and_softmax_grad_torch_(logits, targets)


def _jit(function):
    return triton.jit(function) if triton is not None else function


@_jit
def _loss_and_softmax_grad(logits, row_stride, targets, losses, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    start = logits + row * row_stride
    target = tl.load(targets + row)
    running_max = float("-inf")
    running_sum = 0.0
    for first in range(0, vocab, BLOCK):
        columns = first + tl.arange(0, BLOCK)
        x = tl.load(start + columns, mask=columns < vocab, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    log_normalizer = running_max + tl.log(running_sum)
    target_logit = tl.load(start + target).to(tl.float32)
    tl.store(losses + row, log_normalizer - target_logit)
    for first in range(0, vocab, BLOCK):
        columns = first + tl.arange(0, BLOCK)
        inside = columns < vocab
        x = tl.load(start + columns, mask=inside, other=0.0).to(tl.float32)
        grad = tl.exp(x - log_normalizer) - tl.where(columns == target, 1.0, 0.0)
        tl.store(start + columns, grad.to(logits.dtype.element_ty), mask=inside)


class HeadCrossEntropy(torch.autograd.Function):
    """sum_i CE(hidden_i @ weight.T, target_i), its gradient prepared in the forward pass."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = F.linear(hidden, weight)  # bf16 under autocast: the buffer that becomes the gradient
        loss = loss_and_grad_(logits, targets).sum()
        ctx.save_for_backward(logits, hidden, weight)
        return loss

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad_loss: torch.Tensor):
        grad_logits, hidden, weight = ctx.saved_tensors
        grad_hidden = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_hidden = (grad_logits @ weight.to(grad_logits.dtype)).mul_(grad_loss)
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_logits.t() @ hidden.to(grad_logits.dtype)).mul_(grad_loss)
        return grad_hidden, grad_weight, None


def head_cross_entropy_sum(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The summed fp32 cross-entropy of the head's logits at these positions."""
    return HeadCrossEntropy.apply(hidden, weight, targets)


def _accumulate_product_(total: torch.Tensor, left: torch.Tensor, right: torch.Tensor) -> None:
    """total += left @ right in `total`'s type (fp32 sums of bf16 operands on CUDA: one kernel, no temporary)."""
    if total.is_cuda and total.dtype == torch.float32 and left.dtype in (torch.bfloat16, torch.float16):
        torch.addmm(total, left, right, out_dtype=torch.float32, out=total)
    else:
        total.add_(left @ right)


def _chunks(length: int, size: int):
    """Slices of `size` positions covering `length` (the last one ragged)."""
    return (slice(start, start + size) for start in range(0, length, size))


def _empty_gradients(needs_input_grad, hidden: torch.Tensor, weight: torch.Tensor):
    """The hidden states' gradient (their type) and the head's (zeros: summed over chunks in fp32, or wider), as needed."""
    grad_hidden = torch.empty_like(hidden) if needs_input_grad[0] else None
    wide = torch.promote_types(weight.dtype, torch.float32)
    grad_weight = torch.zeros(weight.shape, dtype=wide, device=weight.device) if needs_input_grad[1] else None
    return grad_hidden, grad_weight


class HeadCrossEntropyChunked(torch.autograd.Function):
    """sum_i CE(hidden_i @ weight.T, target_i), its gradients finished in the forward pass, chunk by chunk.

    The loss is a sum, so its incoming gradient is one number: each chunk's logits become their
    gradient in place and go straight into the head's two products (the hidden states' gradient,
    the weight's summed in fp32 over the chunks), then are freed; the backward only scales. No
    logits outlive their chunk, and nothing is read back to the host (kernel libraries count the
    trained positions with `.item()`, which holds the host until the GPU has run the whole forward,
    so the backward starts with no queued work to hide its launches behind).
    """

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk_rows: int):
        grad_hidden, grad_weight = _empty_gradients(ctx.needs_input_grad, hidden, weight)
        total = hidden.new_zeros((), dtype=torch.promote_types(weight.dtype, torch.float32))
        for rows in _chunks(len(targets), chunk_rows):
            logits = F.linear(hidden[rows], weight)  # bf16 under autocast: the chunk's gradient buffer next
            total = total + loss_and_grad_(logits, targets[rows]).sum()
            if grad_hidden is not None:
                grad_hidden[rows] = logits @ weight.to(logits.dtype)
            if grad_weight is not None:
                _accumulate_product_(grad_weight, logits.t(), hidden[rows].to(logits.dtype))
        ctx.weight_dtype = weight.dtype
        ctx.save_for_backward(grad_hidden, grad_weight)
        return total

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad_loss: torch.Tensor):
        grad_hidden, grad_weight = ctx.saved_tensors  # scaled in place: no second fp32 copy of the head's size
        if grad_hidden is not None:
            grad_hidden = grad_hidden.mul_(grad_loss.to(grad_hidden.dtype))
        if grad_weight is not None:
            grad_weight = grad_weight.mul_(grad_loss).to(ctx.weight_dtype)
        return grad_hidden, grad_weight, None, None


def head_cross_entropy_sum_chunked(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk_rows: int
) -> torch.Tensor:
    """The summed fp32 cross-entropy of the head's logits at these positions, `chunk_rows` positions at a time."""
    return HeadCrossEntropyChunked.apply(hidden, weight, targets, chunk_rows)


class HeadTokenLogprobs(torch.autograd.Function):
    """log p(target_i | hidden_i) per position, for DPO: the same kernel, the backward scaled per row.

    d logp_i / d logits_i = onehot - softmax = -(the buffer the kernel wrote), so with g_i the
    incoming gradient of position i: grad hidden = -(G @ W) * g[:, None] and grad W = -G^T @ (hidden * g[:, None]),
    both scaled on the small side of the product.
    """

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = F.linear(hidden, weight)
        logprobs = loss_and_grad_(logits, targets).neg_()
        ctx.save_for_backward(logits, hidden, weight)
        return logprobs

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad_logprobs: torch.Tensor):
        grad_logits, hidden, weight = ctx.saved_tensors
        scale = grad_logprobs.neg().to(grad_logits.dtype)[:, None]
        grad_hidden = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_hidden = (grad_logits @ weight.to(grad_logits.dtype)).mul_(scale)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_logits.t() @ (hidden.to(grad_logits.dtype) * scale)
        return grad_hidden, grad_weight, None


def head_token_logprobs(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each position's fp32 log-probability of its target under the head's logits."""
    return HeadTokenLogprobs.apply(hidden, weight, targets)


class HeadTokenLogprobsChunked(torch.autograd.Function):
    """HeadTokenLogprobs chunk by chunk, no logits kept: DPO's incoming gradient differs per position and is
    known only in the backward, so the forward keeps the log-probs alone and the backward reruns each chunk's
    head product and kernel (one more product of the head: about 1% of a step's FLOPs at the card's widths) before the
    two products of its gradient, scaled on their small sides as in HeadTokenLogprobs."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk_rows: int):
        wide = torch.promote_types(hidden.dtype, torch.float32)
        logprobs = torch.empty(len(targets), dtype=wide, device=hidden.device)
        for rows in _chunks(len(targets), chunk_rows):
            logprobs[rows] = loss_and_grad_(F.linear(hidden[rows], weight), targets[rows]).neg_()
        ctx.chunk_rows = chunk_rows
        ctx.save_for_backward(hidden, weight, targets)
        return logprobs

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad_logprobs: torch.Tensor):
        hidden, weight, targets = ctx.saved_tensors
        grad_hidden, grad_weight = _empty_gradients(ctx.needs_input_grad, hidden, weight)
        for rows in _chunks(len(targets), ctx.chunk_rows):
            buffer = F.linear(hidden[rows], weight)
            loss_and_grad_(buffer, targets[rows])  # softmax - onehot = -(d logp / d logits), over the logits
            scale = grad_logprobs[rows].neg().to(buffer.dtype)[:, None]
            if grad_hidden is not None:
                grad_hidden[rows] = (buffer @ weight.to(buffer.dtype)).mul_(scale)
            if grad_weight is not None:
                _accumulate_product_(grad_weight, buffer.t(), hidden[rows].to(buffer.dtype) * scale)
        if grad_weight is not None:
            grad_weight = grad_weight.to(weight.dtype)
        return grad_hidden, grad_weight, None, None


def head_token_logprobs_chunked(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk_rows: int
) -> torch.Tensor:
    """Each position's fp32 log-probability of its target, `chunk_rows` positions' logits alive at a time."""
    return HeadTokenLogprobsChunked.apply(hidden, weight, targets, chunk_rows)
