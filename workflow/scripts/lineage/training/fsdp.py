"""A model sharded with FSDP2 (`fully_shard` on each block, then the root), loaded from a checkpoint.

Every rank builds the model on the meta device, shards it, allocates only its own shard, and
reads only that shard's bytes from the checkpoint (lineage.checkpoints.distributed), whatever
layout the checkpoint is in: no rank holds the whole model, and the node reads it once. Parameters are fp32 (the optimizer's master weights);
at bf16 the forward and backward run in bf16 and gradients are reduced in fp32.

Gradients are summed across ranks, not averaged: the loss of each rank is already divided by
the trained-token count of the whole global batch, which is what makes the loss curve
independent of the world size.
"""

from __future__ import annotations

import dataclasses
import os

import torch
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from transformers import AutoConfig, AutoModelForCausalLM

from lineage.checkpoints.distributed import load_into
from lineage.checkpoints.load import tied_aliases
from lineage.modeling import prepare_kernels, routed_experts
from lineage.parallel_dims import ParallelDims, check
from lineage.training.checkpointing import enable_activation_checkpointing
from lineage.training.compiling import compile_block, prepare_compile
from lineage.training.dist import DistEnv
from lineage.training.expert_parallel import expert_modules, split_experts
from lineage.training.last_product import leave_out_of_recompute
from lineage.training.mesh import device_mesh, expert_mesh, job_dims
from lineage.training.moe_dispatch import use_sorted_dispatch

PRECISIONS = {"bf16": torch.bfloat16, "fp32": torch.float32}


def blocks(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks to shard one by one (transformers names them in `_no_split_modules`)."""
    names = set(getattr(model, "_no_split_modules", None) or [])
    found = [m for m in model.modules() if type(m).__name__ in names]
    if not found:
        raise RuntimeError(f"{type(model).__name__}: no blocks named in _no_split_modules={sorted(names)} to shard")
    return found


ACCUMULATIONS = ("sharded", "unsharded")


def shard(
    model: torch.nn.Module,
    env: DistEnv,
    precision: str,
    compile_blocks: bool = False,
    dims: ParallelDims | None = None,
    accumulate: str = "sharded",
    activation_checkpointing: bool | str = False,
    compile_workload: str | None = None,
) -> torch.nn.Module:
    """Checkpoint activations (lineage.training.checkpointing), fully_shard every block, then the root;
    reduce by sum.

    accumulate unsharded keeps each block's gathered weights from its forward to its backward
    (the loop keeps them, and the gradients, across micro-batches: see accumulate_unsharded).

    With compile_blocks each block is compiled on its own before sharding (compiling.py: blocks of
    one kind share a graph, and FSDP's all-gathers stay outside it), as its checkpointing allows; the jobs
    of one compile_workload (compiling.prepare_compile) start from the sizes an earlier one found to vary.

    `dims` lays out the meshes (lineage/parallel_dims.py; default: full sharding over the launched ranks, E = 1),
    refused here, before anything runs, where it cannot split this model on these ranks.
    """
    dims = dims or job_dims(env)
    check(dims, routed_experts(model.config))
    if activation_checkpointing:
        enable_activation_checkpointing(model, activation_checkpointing)
    mesh = device_mesh(env, dims)
    if precision == "bf16":
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    else:
        policy = MixedPrecisionPolicy()
    if accumulate not in ACCUMULATIONS:
        raise ValueError(f"accumulate {accumulate!r}: expected one of {', '.join(ACCUMULATIONS)}")
    if dims.expert > 1:  # lineage/training/expert_parallel.py: experts split over ep, sharded over the rest
        ep_mesh = expert_mesh(env, dims)
        split_experts(model, ep_mesh["ep"])
        # the block already cast its inputs; cast here, the router's fp32 weights would reach the experts in bf16 in
        # the forward but in fp32 in a checkpoint's rerun (FSDP casts no inputs while it recomputes): the rerun's
        # saved tensors would then differ from the forward's, and the weights from the E = 1 run's
        experts_policy = dataclasses.replace(policy, cast_forward_inputs=False)
        for experts in expert_modules(model):
            fully_shard(
                experts,
                mesh=ep_mesh["dp_mod_ep"],
                mp_policy=experts_policy,
                reshard_after_forward=accumulate == "sharded",
            )
            sum_gradients(experts, ep_mesh["dp_mod_ep"])
    else:  # lineage/training/moe_dispatch.py: the copies sorted by expert and summed back by gathers
        use_sorted_dispatch(expert_modules(model))
    if compile_blocks:
        prepare_compile(blocks(model), compile_workload)
    for block in blocks(model):
        if activation_checkpointing is True:  # full: the rerun stops before the block's last product
            leave_out_of_recompute(block)
        if compile_blocks:
            compile_block(block, activation_checkpointing)
        fully_shard(block, mesh=mesh, mp_policy=policy, reshard_after_forward=accumulate == "sharded")
        sum_gradients(block, mesh)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    sum_gradients(model, mesh)
    return model


def sum_gradients(module: FSDPModule, mesh) -> None:
    """Reduce `module`'s gradients by sum over `mesh`, not FSDP's mean (each rank's loss is already its
    share of the global batch). A mesh of one rank reduces nothing and FSDP copies its gradients as they
    are; a divide factor there, even 1.0, costs a division over every gradient each micro-batch (3.5% of
    a step of the card's experts on one GPU, benchmarks/RESULTS.md), so none is set."""
    if mesh.size() > 1:
        module.set_gradient_divide_factor(1.0)
        module.set_force_sum_reduction_for_comms(True)


def accumulate_unsharded(model: torch.nn.Module, last: bool) -> None:
    """Before a micro-batch: unless it is the step's last, keep weights gathered and gradients unreduced.

    FSDP2 then accumulates each rank's full gradients in the reduce dtype (fp32) and reduces them
    once after the last backward: the same sum as reducing every micro-batch, in another order.
    """
    model.set_requires_gradient_sync(last)
    model.set_reshard_after_backward(last)


def build_options(config, attn_implementation: str | None, experts_implementation: str | None) -> dict:
    """from_config keyword arguments for the attention and (MoE models only) experts implementations."""
    options = {} if attn_implementation is None else {"attn_implementation": attn_implementation}
    if routed_experts(config) and experts_implementation is not None:
        options["experts_implementation"] = experts_implementation
    return options


def sharded_model(
    config,
    env: DistEnv,
    *,
    precision: str,
    activation_checkpointing: bool | str = False,
    attn_implementation: str | None = None,
    compile_blocks: bool = False,
    experts_implementation: str | None = None,
    dims: ParallelDims | None = None,
    accumulate: str = "sharded",
    compile_workload: str | None = None,
) -> torch.nn.Module:
    """The model of `config` built on the meta device, sharded, and given this rank's storage (unset, but for
    the non-persistent buffers such as rotary frequencies, which checkpoints do not hold); fp32 parameters.

    attn_implementation None keeps transformers' default for the model (sdpa where supported);
    experts_implementation applies to MoE models only (transformers' grouped_mm or eager); dims and
    compile_workload: shard's.
    """
    prepare_kernels(config, env.device)
    config.use_cache = False
    options = build_options(config, attn_implementation, experts_implementation)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, **options)
    shard(model, env, precision, compile_blocks, dims, accumulate, activation_checkpointing, compile_workload)
    model.to_empty(device=env.device)
    for module in model.modules():
        if module._non_persistent_buffers_set:
            model._init_weights(module)
    return model


def load_sharded_model(directory: str | os.PathLike, env: DistEnv, *, trainable: bool = True, **settings):
    """A checkpoint's model on every rank: sharded_model(`settings`), each rank reading only its shard's bytes."""
    model = sharded_model(AutoConfig.from_pretrained(directory), env, **settings)
    # the layout the checkpoint came in: a child is written in it (lineage.training.output)
    model.checkpoint_layout, _ = load_into(model, directory, env, skip=list(tied_aliases(model)))
    model.requires_grad_(trainable)
    model.train(trainable)
    return model
