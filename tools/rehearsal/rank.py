"""The model a rank holds: the trainer's own sharding of the run's shape, with weights drawn on the rank's shard.

The model is built on the meta device and sharded by lineage.training.fsdp (FSDP2 over the world, the experts
split over the expert group, blocks compiled and checkpointed as the recipe says), exactly as a training job
builds it; only the weights differ: instead of reading a checkpoint, each local shard is drawn here (matrices
from N(0, 0.02), norms and the Mamba D at one, biases, A_log and dt_bias at zero), so every value the step
computes is finite and its cost is the real one.
"""

from __future__ import annotations

import torch
from torch.distributed.tensor import DTensor

from lineage.modeling import CONFIG_CLASSES, SHAPES
from lineage.parallel_dims import ParallelDims
from lineage.training import packed_attention
from lineage.training.dist import DistEnv
from lineage.training.expert_parallel import expert_modules
from lineage.training.fsdp import sharded_model
from lineage.training.recipe import TrainRecipe

ONES = ("norm.weight", "norm_f.weight", "layernorm.weight", ".D")  # name endings of 1-D weights that start at one


def shape_config(family: str, size: str, vocab_size: int):
    """The config of a named shape (lineage.modeling.SHAPES) at `vocab_size` rows."""
    if (family, size) not in SHAPES:
        known = ", ".join(f"{f}/{s}" for f, s in SHAPES)
        raise SystemExit(f"no model shape {family}/{size}; known: {known}")
    return CONFIG_CLASSES[family](**SHAPES[(family, size)], vocab_size=vocab_size, pad_token_id=0)


def rank_model(config, env: DistEnv, recipe: TrainRecipe, *, dims: ParallelDims, accumulate: str):
    """This rank's shard of `config`'s model, sharded as the trainer shards it over `dims`, weights drawn (module
    docstring)."""
    model = sharded_model(
        config,
        env,
        precision=recipe.precision,
        activation_checkpointing=recipe.activation_checkpointing,
        attn_implementation=packed_attention.attention_implementation(recipe, env.device),
        compile_blocks=recipe.compile,
        experts_implementation=recipe.experts,
        dims=dims,
        accumulate=accumulate,
    )
    draw_weights(model, seed=1234 + env.rank)
    model.train()
    return model


@torch.no_grad()
def draw_weights(model: torch.nn.Module, seed: int) -> None:
    """Fill each parameter's local shard (module docstring); non-persistent buffers keep what the build set."""
    device = next(model.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    for name, param in model.named_parameters():
        local = param.to_local() if isinstance(param, DTensor) else param
        if local.dim() >= 2:
            local.normal_(0.0, 0.02, generator=generator)
        elif name.endswith(ONES):
            local.fill_(1.0)
        else:  # biases, the router's score correction, the Mamba A_log (A = -1) and dt_bias
            local.zero_()


def route_balanced(model: torch.nn.Module) -> int:
    """Every MoE layer's tokens routed by a fixed balanced rule: token t's slot s goes to expert (t*k + s) mod n,
    so each expert gets the same number of rows (a router's choices on drawn weights mean nothing). The router
    still runs: its cost is part of the step. Returns the experts modules routed."""
    modules = expert_modules(model)
    for experts in modules:
        forward, count = experts.forward, experts.num_experts

        def balanced(hidden_states, top_k_index, top_k_weights, forward=forward, count=count):
            tokens, top_k = top_k_index.shape
            choice = torch.arange(tokens * top_k, device=top_k_index.device, dtype=top_k_index.dtype)
            return forward(hidden_states, (choice % count).view(tokens, top_k), top_k_weights)

        experts.forward = balanced
    return len(modules)


def held_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """Bytes this rank holds of its fp32 weights, their gradients (as many) and the optimizer's moments."""

    def local(tensor):
        tensor = tensor.to_local() if isinstance(tensor, DTensor) else tensor
        return tensor.numel() * tensor.element_size()

    weights = sum(local(p) for p in model.parameters())
    moments = sum(local(v) for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v))
    return {"weights": weights, "gradients": weights, "optimizer": moments}
