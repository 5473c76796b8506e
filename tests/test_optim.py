"""Gradient clipping folded into the fused AdamW step trains as clipping the gradients first."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from lineage.training.optim import build_optimizer, clip_grad_norm


@pytest.fixture(scope="module")
def one_rank_group():
    created = not dist.is_initialized()
    if created:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    if created:
        dist.destroy_process_group()


def sharded_model() -> torch.nn.Module:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    for layer in (model[0], model[2]):
        fully_shard(layer)
    fully_shard(model)
    return model


def train(fused: bool, max_norm: float, steps: int = 3, grad_size: float = 100.0):
    """Weights and gradient norms after `steps` clipped steps (clip_grad_norm as the training loop calls it)."""
    model = sharded_model()
    optimizer = build_optimizer(model, lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1, fused=fused)
    norms, scales = [], []
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(8, 16, generator=generator)
        (grad_size * model(x).square().sum()).backward()
        norms.append(float(clip_grad_norm(model, max_norm, optimizer)))
        scales.append(optimizer.grad_scale)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return [p.full_tensor().detach().clone() for p in model.parameters()], norms, scales


@pytest.mark.parametrize("grad_size", [100.0, 1e-4], ids=["clipped", "below the limit"])
def test_folded_clip_trains_as_scaling_the_gradients(one_rank_group, grad_size):
    folded, folded_norms, scales = train(fused=True, max_norm=1.0, grad_size=grad_size)
    scaled, scaled_norms, plain_scales = train(fused=False, max_norm=1.0, grad_size=grad_size)
    assert all(isinstance(s, torch.Tensor) for s in scales)  # the fused step took the clip
    assert plain_scales == [None] * 3  # the other path rewrites the gradients itself
    assert folded_norms == pytest.approx(scaled_norms, rel=1e-6)
    if grad_size > 1:
        assert min(folded_norms) > 10 and all(float(s) > 10 for s in scales)  # the clip did act
    else:
        assert max(folded_norms) < 1 and all(float(s) == 1.0 for s in scales)
    for a, b in zip(folded, scaled, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_clipping_changes_the_update(one_rank_group):
    """The comparison above can fail: without the clip the same gradients move the weights elsewhere."""
    clipped, _, _ = train(fused=True, max_norm=1.0, grad_size=100.0)
    unclipped, _, scales = train(fused=True, max_norm=0.0, grad_size=100.0)
    assert scales == [None] * 3  # max_norm 0: no clip, nothing folded
    assert any(not torch.allclose(a, b, rtol=1e-3) for a, b in zip(clipped, unclipped, strict=True))
