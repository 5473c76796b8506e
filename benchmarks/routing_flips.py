"""How many positions of a row a MoE model routes to other experts when the row runs beside a batch mate.

A batch's shapes pick the GPU's matrix kernels, and their last bits differ from one shape to the next. Where two
experts' router scores nearly tie, those bits decide the top-k, and a token sent to another expert moves its
log-probability by far more than rounding: the suspect where a batched score leaves lm-eval's on a GPU while the
generated text and greedy flags agree (benchmarks/eval_vs_lm_eval.py). On a CPU a row's results do not depend on its
batch mates, so nothing flips there.
"""

from __future__ import annotations

import torch


def _routers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The top-k routers: transformers' `*TopkRouter` / `*TopKRouter` modules, which return (..., expert indices)."""
    return [m for m in model.modules() if type(m).__name__.lower().endswith("topkrouter")]


@torch.inference_mode()
def router_choices(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
    """Each routed layer's chosen experts, as a bool [rows, positions, experts] (the order top-k returns them in does
    not matter: the expert set does)."""
    seen: list[torch.Tensor] = []

    def keep(module, _inputs, output):
        chosen = output[-1]
        experts = torch.zeros(chosen.shape[0], module.num_experts, dtype=torch.bool, device=chosen.device)
        seen.append(experts.scatter_(1, chosen, True).view(*ids.shape, -1).cpu())

    hooks = [r.register_forward_hook(keep) for r in _routers(model)]
    try:
        model(input_ids=ids, attention_mask=mask, use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    return seen


def routing_flips(model: torch.nn.Module, row: list[int], mate: list[int], pad_id: int) -> tuple[int, int, int]:
    """(positions of `row` routed to another expert set in some layer, positions, routed layers): `row` alone against
    `row` right-padded beside `mate` in one batch, as the scoring batches rows."""
    device = next(model.parameters()).device
    alone = router_choices(model, torch.tensor([row], device=device), torch.ones(1, len(row), device=device).long())
    width = max(len(row), len(mate))
    ids = torch.full((2, width), pad_id, dtype=torch.long)
    mask = torch.zeros(2, width, dtype=torch.long)
    for r, tokens in enumerate((row, mate)):
        ids[r, : len(tokens)] = torch.tensor(tokens)
        mask[r, : len(tokens)] = 1
    batched = router_choices(model, ids.to(device), mask.to(device))
    moved = torch.zeros(len(row), dtype=torch.bool)
    for one, two in zip(alone, batched, strict=True):
        moved |= (one[0] != two[0, : len(row)]).any(-1)
    return int(moved.sum()), len(row), len(alone)
