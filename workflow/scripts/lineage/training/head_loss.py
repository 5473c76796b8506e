"""The LM head and the SFT loss as one step: summed next-token cross-entropy from the final hidden states.

With a 128k-256k vocabulary the logits are the largest tensor of a step (32k tokens x 131,072 x
4 bytes = 17 GiB in fp32), and most of the head's work is on prompt positions the loss never reads.
`attach` makes the causal LM's forward take the labels and return the loss sum: the backbone
runs as before, then only the labelled positions (the next token is a target) go through the head,
by one of these implementations, all the same sum over the same positions, the softmax in fp32:

- logits:  the head's bf16 logits of the labelled positions, then fp32 cross-entropy;
- chunked: the same, `chunk_tokens` positions at a time, each chunk recomputed in backward
  (only one chunk's fp32 logits alive); the fallback where no kernel library imports;
- liger:   liger-kernel's fused linear cross-entropy (Triton, CUDA): logits one chunk at a time,
  the gradients computed in the forward pass, no logits kept;
- compiled: the head's bf16 logits in one matrix product, then the fp32 cross-entropy compiled
  by torch.compile, which fuses the upcast, the log-softmax and the gather: no fp32 copy of the
  logits is kept, and the head's matrix products stay large (liger's chunks are a few hundred
  positions at a 131k vocabulary);
- cce:     cut-cross-entropy (Triton, CUDA): the loss without ever writing the logits to memory,
  gradients unfiltered (exact);
- inplace: the head's bf16 logits in one matrix product, then one Triton kernel that computes each
  position's loss and writes its gradient over its logits in the forward pass
  (lineage.training.inplace_cross_entropy; off CUDA the same steps in torch ops): the logits are
  read twice and written once, and the backward is the head's two matrix products.
- inplace_chunked: the same kernel over 2,048 positions at a time, each chunk's gradients finished
  in the forward pass (the head's summed in fp32) and its logits freed: no logits kept, as with
  liger, and unlike liger and cce nothing read back to the host.

The positions with a loss come from the host (`loss_positions`, computed where the batch is built)
when the caller passes them; otherwise they are found on the device, which waits for the forward.

`attach_logprobs` does the same for DPO, which needs each position's log-probability rather than
their sum: logits, chunked, compiled and inplace (its backward scaled per position), never
keeping more than the bf16 logits of the positions that count; inplace_chunked keeps none (the
incoming gradient differs per position, so its backward reruns each chunk's head product).

The forward is replaced on the instance, so FSDP2's hooks on the module still gather the head
and the embedding around it; the caller divides the sum by the global batch's trained tokens, as
before, so the curve stays world-size invariant.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from lineage.chat import IGNORE_INDEX

KERNEL_PACKAGES = {"liger": "liger_kernel", "cce": "cut_cross_entropy"}
# torch alone (the inplace ones: Triton, which CUDA builds of torch ship)
PACKAGE_FREE = ("none", "compiled", "inplace", "inplace_chunked")
# config attributes that change logits after the head: the fused kernels would skip them
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling", "output_multiplier_scale")


class HeadLossError(RuntimeError):
    """The requested head-loss implementation cannot run here; the message says what to install or set."""


def _logits_cross_entropy_sum(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.to(torch.promote_types(logits.dtype, torch.float32)), targets, reduction="sum")


def _cross_entropy_sum(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return _logits_cross_entropy_sum(F.linear(hidden, weight), targets)


def _logits(hidden, weight, targets, chunk_tokens):
    return _cross_entropy_sum(hidden, weight, targets)


def _chunked(hidden, weight, targets, chunk_tokens):
    total = hidden.new_zeros((), dtype=torch.promote_types(hidden.dtype, torch.float32))
    for start in range(0, targets.numel(), chunk_tokens):
        end = start + chunk_tokens
        total = total + checkpoint(
            _cross_entropy_sum, hidden[start:end], weight, targets[start:end], use_reentrant=False
        )
    return total


@functools.cache
def _liger_loss():
    from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss

    # fp32 accumulation of the head's gradient over the chunks (bf16 would round it at every chunk)
    return LigerFusedLinearCrossEntropyLoss(reduction="sum", accum_dtype=torch.float32)


def _liger(hidden, weight, targets, chunk_tokens):
    return _liger_loss()(weight, hidden, targets).float()


@functools.cache
def _compiled_cross_entropy() -> Callable:
    # dynamic: the count of trained positions changes with every micro-batch
    return torch.compile(_logits_cross_entropy_sum, dynamic=True)


def _compiled(hidden, weight, targets, chunk_tokens):
    return _compiled_cross_entropy()(F.linear(hidden, weight), targets)


def _cce(hidden, weight, targets, chunk_tokens):
    from cut_cross_entropy import linear_cross_entropy

    return linear_cross_entropy(hidden, weight, targets, reduction="sum", filter_eps=None).float()


def _inplace(hidden, weight, targets, chunk_tokens):
    from lineage.training.inplace_cross_entropy import head_cross_entropy_sum

    return head_cross_entropy_sum(hidden, weight, targets)


def _inplace_chunked(hidden, weight, targets, chunk_tokens):
    from lineage.training import inplace_cross_entropy

    return inplace_cross_entropy.head_cross_entropy_sum_chunked(
        hidden, weight, targets, inplace_cross_entropy.CHUNK_ROWS
    )


_FUNCTIONS: dict[str, Callable] = {
    "logits": _logits,
    "chunked": _chunked,
    "liger": _liger,
    "cce": _cce,
    "compiled": _compiled,
    "inplace": _inplace,
    "inplace_chunked": _inplace_chunked,
}
IMPLEMENTATIONS = tuple(_FUNCTIONS)


def check_available(fused_loss: str, device: torch.device) -> None:
    """Refuse a fused loss (none | liger | cce | compiled | inplace) that cannot run on `device`, saying what to install."""
    if fused_loss in PACKAGE_FREE:
        return
    if fused_loss not in KERNEL_PACKAGES:
        raise HeadLossError(f"unknown fused loss {fused_loss!r}; choose {', '.join((*PACKAGE_FREE, *KERNEL_PACKAGES))}")
    implementation, package = fused_loss, KERNEL_PACKAGES[fused_loss]
    if device.type != "cuda":
        raise HeadLossError(
            f"fused_loss {implementation} runs Triton kernels on CUDA GPUs; on {device.type} "
            "set train.speed.fused_loss to none (ce_chunk_tokens bounds the loss memory there)"
        )
    if importlib.util.find_spec(package) is None:
        distribution = package.replace("_", "-")
        raise HeadLossError(
            f"fused_loss {implementation} needs the {distribution} package: "
            f"pip install {distribution} (envs/train-gpu.yaml names it), or set fused_loss none"
        )


def choose(fused_loss: str, chunk_tokens: int) -> str:
    """The implementation for the recipe's fused_loss (none | liger | cce | compiled | inplace) and ce_chunk_tokens."""
    if fused_loss != "none":
        return fused_loss
    return "chunked" if chunk_tokens else "logits"


def plain_head(model: torch.nn.Module) -> torch.nn.Module:
    """The model's bias-free linear LM head, refused when the model transforms its logits after it."""
    config = model.config
    for name in _LOGIT_TRANSFORMS:
        value = getattr(config, name, None)
        if value not in (None, 0, 1, 1.0):
            raise HeadLossError(
                f"{type(model).__name__} transforms its logits ({name}={value}); "
                "the fused head loss does not, so train it with its own forward"
            )
    head = model.get_output_embeddings()
    if head is None or getattr(head, "bias", None) is not None:
        raise HeadLossError(f"{type(model).__name__}: the head loss needs a bias-free linear LM head")
    return head


def find_loss_positions(labels: torch.Tensor) -> torch.Tensor:
    """Flat indices of the positions whose next token is a target (labels unshifted, as the data gives them).

    On a GPU the count is data-dependent, so the host waits for the labels; batches built on the host
    pass these in (`loss_positions`) instead."""
    rows, columns = (labels[:, 1:] != IGNORE_INDEX).nonzero(as_tuple=True)
    return rows * labels.shape[1] + columns


def attach(model: torch.nn.Module, implementation: str, chunk_tokens: int = 0) -> None:
    """Make `model(input_ids=..., labels=..., **backbone_kwargs)` return the summed next-token loss.

    A micro-batch without a labelled position (an empty pack that keeps the ranks in step) still
    runs the head on one position with weight 0, so every rank's gradients cover the same parameters.
    """
    if implementation not in _FUNCTIONS:
        raise HeadLossError(f"unknown head loss {implementation!r}; choose one of {', '.join(IMPLEMENTATIONS)}")
    if implementation == "chunked" and chunk_tokens <= 0:
        raise HeadLossError("the chunked head loss needs chunk_tokens > 0")
    head = plain_head(model)
    backbone = model.get_decoder()
    function = _FUNCTIONS[implementation]

    def forward(
        input_ids: torch.Tensor, labels: torch.Tensor, loss_positions: torch.Tensor | None = None, **kwargs
    ) -> torch.Tensor:
        hidden = backbone(input_ids=input_ids, **kwargs).last_hidden_state
        positions = find_loss_positions(labels) if loss_positions is None else loss_positions
        scale = 1.0
        if positions.numel() == 0:
            positions, scale = positions.new_zeros(1), 0.0
        targets = labels.flatten().index_select(0, positions + 1)
        if scale == 0.0:
            targets = targets.clamp(min=0)
        picked = hidden.flatten(0, 1).index_select(0, positions)
        return function(picked, head.weight, targets, chunk_tokens) * scale

    model.forward = forward


# -- per-position log-probabilities (DPO) ---------------------------------------------------------


def _logits_token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    wide = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return -F.cross_entropy(wide, targets, reduction="none")


def _head_token_logprobs(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return _logits_token_logprobs(F.linear(hidden, weight), targets)


def _logits_tokens(hidden, weight, targets, chunk_tokens):
    return _head_token_logprobs(hidden, weight, targets)


def _chunked_tokens(hidden, weight, targets, chunk_tokens):
    return torch.cat(
        [
            checkpoint(
                _head_token_logprobs,
                hidden[start : start + chunk_tokens],
                weight,
                targets[start : start + chunk_tokens],
                use_reentrant=False,
            )
            for start in range(0, targets.numel(), chunk_tokens)
        ]
    )


@functools.cache
def _compiled_token_logprobs() -> Callable:
    return torch.compile(_logits_token_logprobs, dynamic=True)


def _compiled_tokens(hidden, weight, targets, chunk_tokens):
    return _compiled_token_logprobs()(F.linear(hidden, weight), targets)


def _inplace_tokens(hidden, weight, targets, chunk_tokens):
    from lineage.training.inplace_cross_entropy import head_token_logprobs

    return head_token_logprobs(hidden, weight, targets)


def _inplace_chunked_tokens(hidden, weight, targets, chunk_tokens):
    from lineage.training import inplace_cross_entropy

    return inplace_cross_entropy.head_token_logprobs_chunked(hidden, weight, targets, inplace_cross_entropy.CHUNK_ROWS)


_TOKEN_FUNCTIONS: dict[str, Callable] = {
    "logits": _logits_tokens,
    "chunked": _chunked_tokens,
    "compiled": _compiled_tokens,
    "inplace": _inplace_tokens,
    "inplace_chunked": _inplace_chunked_tokens,
}
TOKEN_IMPLEMENTATIONS = tuple(_TOKEN_FUNCTIONS)


def attach_logprobs(model: torch.nn.Module, implementation: str, chunk_tokens: int = 0) -> None:
    """Make `model(input_ids=..., positions=..., targets=..., **backbone_kwargs)` return log p(target | position).

    `positions` are flat indices into (rows x length) of the positions that predict `targets`;
    both are computed on the host with the batch (no device sync to find them). The result is
    one fp32 (or wider) log-probability per position, differentiable through the head and backbone.
    """
    if implementation not in _TOKEN_FUNCTIONS:
        raise HeadLossError(
            f"no per-position log-probabilities from {implementation!r}; choose one of "
            f"{', '.join(TOKEN_IMPLEMENTATIONS)}"
        )
    if implementation == "chunked" and chunk_tokens <= 0:
        raise HeadLossError("the chunked head needs chunk_tokens > 0")
    head = plain_head(model)
    backbone = model.get_decoder()
    function = _TOKEN_FUNCTIONS[implementation]

    def forward(input_ids: torch.Tensor, positions: torch.Tensor, targets: torch.Tensor, **kwargs) -> torch.Tensor:
        hidden = backbone(input_ids=input_ids, **kwargs).last_hidden_state
        return function(hidden.flatten(0, 1).index_select(0, positions), head.weight, targets, chunk_tokens)

    model.forward = forward
