"""Loss terms as sums, so the caller divides by the count of the whole global batch.

Logits are cast to fp32 before the softmax (one row at a time, to bound the memory of a large
vocabulary); labels are unshifted (IGNORE_INDEX where no loss is taken) and shifted here.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from lineage.chat import IGNORE_INDEX


def token_loss_sum(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Sum of next-token cross-entropies over labelled positions."""
    logits, labels = logits[:, :-1], labels[:, 1:]
    total = logits.new_zeros((), dtype=torch.float32)
    for row_logits, row_labels in zip(logits, labels, strict=True):
        total = total + F.cross_entropy(row_logits.float(), row_labels, ignore_index=IGNORE_INDEX, reduction="sum")
    return total


def _cross_entropy_sum(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.float(), labels, reduction="sum")


def chunked_token_loss_sum(logits: torch.Tensor, labels: torch.Tensor, chunk_tokens: int) -> torch.Tensor:
    """token_loss_sum over labelled positions only, `chunk_tokens` at a time.

    Only one chunk's fp32 logits and softmax exist at once: each chunk is recomputed in backward
    instead of being kept, so memory no longer grows with sequence length x vocabulary in fp32.
    """
    logits, labels = logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten()
    keep = (labels != IGNORE_INDEX).nonzero().squeeze(-1)
    logits, labels = logits.index_select(0, keep), labels.index_select(0, keep)
    total = logits.new_zeros((), dtype=torch.float32)
    for start in range(0, labels.numel(), chunk_tokens):
        end = start + chunk_tokens
        total = total + checkpoint(_cross_entropy_sum, logits[start:end], labels[start:end], use_reentrant=False)
    return total


def trained_token_count(labels: torch.Tensor) -> int:
    """Positions that token_loss_sum takes a loss on."""
    return int((labels[:, 1:] != IGNORE_INDEX).sum())


def sequence_logprobs(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Summed log-probability of the labelled tokens of each row, shape (rows,)."""
    logits, labels = logits[:, :-1], labels[:, 1:]
    sums = []
    for row_logits, row_labels in zip(logits, labels, strict=True):
        mask = row_labels != IGNORE_INDEX
        logp = row_logits.float().log_softmax(-1).gather(-1, row_labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        sums.append((logp * mask).sum())
    return torch.stack(sums)


def dpo_sigmoid(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-pair sigmoid DPO loss and the implicit rewards beta·(log π − log π_ref) of each side."""
    chosen_reward = beta * (policy_chosen - ref_chosen)
    rejected_reward = beta * (policy_rejected - ref_rejected)
    loss = -F.logsigmoid(chosen_reward - rejected_reward)
    return loss, chosen_reward.detach(), rejected_reward.detach()
