"""The device meshes of a training job, built from its degrees (lineage/parallel_dims.py) and nothing else."""

from __future__ import annotations

from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

from lineage.parallel_dims import EXPERT_MESH_DIM_NAMES, Keys, ParallelDims
from lineage.training.dist import DistEnv

# What a launched trainer's errors name: its ranks come from the launcher's environment, the rest from its flags.
LAUNCH_KEYS = Keys(
    nodes="WORLD_SIZE / LOCAL_WORLD_SIZE",
    processes="LOCAL_WORLD_SIZE",
    sharding="--sharding",
    expert_parallel="--expert-parallel",
)


def job_dims(env: DistEnv, sharding: str = "full", expert_parallel: int = 1, keys: Keys = LAUNCH_KEYS) -> ParallelDims:
    """The degrees of the job this rank belongs to: its world and node as launched, the sharding and E asked for."""
    return ParallelDims.from_ranks(env.world_size, env.local_world_size, sharding, expert_parallel, keys)


def device_mesh(env: DistEnv, dims: ParallelDims) -> DeviceMesh:
    """FSDP's mesh: every rank (full), or (replicate, shard) = (nodes, ranks a node) under hybrid sharding (HSDP),
    parameters sharded within a node and replicated across nodes, so only gradients cross the network."""
    return init_device_mesh(env.device.type, dims.mesh_shape, mesh_dim_names=dims.mesh_dim_names)


def expert_mesh(env: DistEnv, dims: ParallelDims) -> DeviceMesh:
    """(dp_mod_ep, ep): the ranks of an expert group are consecutive, so they share a node."""
    return init_device_mesh(env.device.type, dims.expert_mesh_shape, mesh_dim_names=EXPERT_MESH_DIM_NAMES)
