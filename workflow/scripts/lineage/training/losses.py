"""Loss terms as sums, so the caller divides by the count of the whole global batch.

Labels are unshifted (IGNORE_INDEX where no loss is taken). The token log-probs themselves come
from the LM head fused with them (lineage.training.head_loss; DPO's per sequence through
lineage.training.pairs).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


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
