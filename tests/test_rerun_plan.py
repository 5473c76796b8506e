"""Under full checkpointing the expert dispatch's rerun reuses its forward's counts and split sizes.

Reading split sizes on the host drains the GPU; the backward's rerun of a block routes the same tokens as its
forward, so it takes the forward's plan (expert_parallel._planned) instead of exchanging counts again. Here a
block reads a plan from its input, under torch.utils.checkpoint with the trainer's full-checkpointing options,
and a counting exchange tells how often the counts were really exchanged.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from lineage.training.checkpointing import checkpoint_options, checkpoint_phase
from lineage.training.expert_parallel import _planned


class CountingExchange:
    """Each rank receives what it sends (one rank's view of a balanced group); counts its calls."""

    def __init__(self):
        self.calls = 0

    def counts(self, sent_per_expert: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return sent_per_expert.clone()


class Experts:
    ep_degree = 2

    def __init__(self):
        self.exchange = CountingExchange()
        self.plans = []


def routed(x: torch.Tensor, experts: Experts, shift: list[int]) -> torch.Tensor:
    """A block that routes each row to expert (row sum > 0) + shift, records its plan, and saves x for backward."""
    chosen = (x.detach().sum(1) > 0).long() + shift[0]
    experts.plans.append((checkpoint_phase(), _planned(experts, torch.bincount(chosen, minlength=4))))
    return (x * x).sum()


def run(experts: Experts, x: torch.Tensor, shift: list[int], changed_in_rerun: int | None = None):
    def block(x):
        out = routed(x, experts, shift)
        if changed_in_rerun is not None:
            shift[0] = changed_in_rerun  # the rerun then routes otherwise
        return out

    return checkpoint(block, x, **checkpoint_options(True))


def test_the_rerun_takes_the_forwards_plan_and_exchanges_no_counts():
    experts, x = Experts(), torch.randn(8, 3, requires_grad=True)
    run(experts, x, [0]).backward()
    (phase_1, forward), (phase_2, rerun) = experts.plans
    assert (phase_1, phase_2) == ("forward", "rerun")
    assert rerun is forward and experts.exchange.calls == 1
    assert sum(forward.send) == sum(forward.receive) == 8
    assert x.grad == pytest.approx(2 * x.detach())
    assert "rerun_plan" not in vars(experts)  # consumed: nothing stale for the next micro-batch


def test_without_checkpointing_or_gradients_every_call_exchanges_and_nothing_is_kept():
    experts, x = Experts(), torch.randn(8, 3, requires_grad=True)
    routed(x, experts, [0]).backward()
    with torch.no_grad():
        run(experts, x, [0])
    assert experts.exchange.calls == 2
    assert "rerun_plan" not in vars(experts)


def test_a_rerun_that_routes_otherwise_fails_loudly():
    experts, x = Experts(), torch.randn(8, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="rerun routed other rows than its forward"):
        run(experts, x, [0], changed_in_rerun=1).backward()


def test_two_forwards_before_their_reruns_turn_the_reuse_off():
    """Reruns may come in any order then: none may take another forward's plan."""
    experts = Experts()
    first, second = torch.randn(8, 3, requires_grad=True), -torch.ones(8, 3, requires_grad=True)
    (run(experts, first, [0]) + run(experts, second, [0])).backward()
    assert experts.exchange.calls == 4 and experts.rerun_plans is False
    forward_plans = {p[1].send[0] for p in experts.plans if p[0] == "forward"}
    rerun_plans = {p[1].send[0] for p in experts.plans if p[0] == "rerun"}
    assert forward_plans == rerun_plans
