"""Gradient clipping folded into the fused AdamW step trains as clipping the gradients first."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
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


def sharded_model(two_meshes: bool = False) -> torch.nn.Module:
    """Two sharded layers; with `two_meshes` the last one on a mesh of its own, as expert parallelism shards
    the experts (its norm and the other's do not stack, and one foreach op takes one mesh)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    fully_shard(model[0])
    fully_shard(model[2], mesh=init_device_mesh("cpu", (1,), mesh_dim_names=("ep",)) if two_meshes else None)
    fully_shard(model)
    return model


def train(fused: bool, max_norm: float, steps: int = 3, grad_size: float = 100.0, two_meshes: bool = False):
    """Weights and gradient norms after `steps` clipped steps (clip_grad_norm as the training loop calls it)."""
    model = sharded_model(two_meshes)
    assert len({p.device_mesh for p in model.parameters()}) == (2 if two_meshes else 1)
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


@pytest.mark.parametrize("two_meshes", [False, True], ids=["one mesh", "experts' mesh"])
@pytest.mark.parametrize("grad_size", [100.0, 1e-4], ids=["clipped", "below the limit"])
def test_folded_clip_trains_as_scaling_the_gradients(one_rank_group, grad_size, two_meshes):
    folded, folded_norms, scales = train(fused=True, max_norm=1.0, grad_size=grad_size, two_meshes=two_meshes)
    scaled, scaled_norms, plain_scales = train(fused=False, max_norm=1.0, grad_size=grad_size, two_meshes=two_meshes)
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


@pytest.mark.parametrize("two_meshes", [False, True], ids=["one mesh", "experts' mesh"])
def test_clipped_gradients_have_the_limit_norm(one_rank_group, two_meshes):
    """Without a fused step the gradients themselves are scaled, on every mesh (under expert parallelism
    too): afterwards their norm is the limit."""
    model = sharded_model(two_meshes)
    optimizer = build_optimizer(model, lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1, fused=False)
    (100.0 * model(torch.randn(8, 16)).square().sum()).backward()
    norm = clip_grad_norm(model, 0.5, optimizer)
    after = torch.linalg.vector_norm(torch.stack([p.grad.full_tensor().norm() for p in model.parameters()]))
    assert float(norm) > 10
    assert float(after) == pytest.approx(0.5, rel=1e-4)
