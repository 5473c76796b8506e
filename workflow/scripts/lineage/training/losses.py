"""Loss terms as sums, so the caller divides by the count of the whole global batch.

Logits are cast to fp32 before the softmax (one row at a time, to bound the memory of a large
vocabulary); labels are unshifted (IGNORE_INDEX where no loss is taken) and shifted here. The SFT
loss, the LM head fused with it, is lineage.training.head_loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lineage.chat import IGNORE_INDEX


def trained_token_count(labels: torch.Tensor) -> int:
    """Positions that take a loss: the labelled ones after the first of each row."""
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
