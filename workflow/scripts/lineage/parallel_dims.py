"""A training job's mesh degrees in one place: nodes, processes a node, the sharding, the expert-parallel degree.

The config checks (lineage/workflow/runs.py), the trainers (lineage/training/mesh.py builds the DeviceMesh from
it), the planner (workflow/scripts/planning/) and the rehearsal (tools/rehearsal/) all read these degrees and
their rules here, so a layout the trainer refuses is refused the same way, in the same words, before any job.
It imports nothing heavy: Snakemake reads it at start-up.

The layouts:
- full: FSDP shards over every rank, a mesh of one dimension (world_size);
- hybrid across nodes (HSDP): shards within a node, replicates across nodes, a (replicate, shard) mesh of
  (nodes, processes_per_node); on one node hybrid is full, there is nothing to replicate across;
- expert parallel E > 1: each MoE layer's routed experts split over E consecutive ranks, so within a node, on
  a (dp_mod_ep, ep) mesh of (world_size / E, E); everything else is sharded as above.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

SHARDINGS = ("full", "hybrid")
EXPERT_MESH_DIM_NAMES = ("dp_mod_ep", "ep")


class MeshError(ValueError):
    """Degrees that cannot lay out the job's ranks; the message names the setting and how to fix it."""


@dataclass(frozen=True)
class Keys:
    """Where each degree was set, as an error names it: config keys (the defaults: a scale's train keys) or flags."""

    nodes: str = "nodes"
    processes: str = "processes"
    sharding: str = "sharding"
    expert_parallel: str = "expert_parallel"

    @classmethod
    def of_config(cls, section: str, overrides: str = "", overridden: Collection[str] = ()) -> Keys:
        """Each key under `section` (scales.<scale>.train), or under `overrides` where the run overrides it."""
        return cls(
            **{f.name: f"{overrides if f.name in overridden else section}.{f.name}" for f in dataclasses.fields(cls)}
        )


@dataclass(frozen=True)
class ParallelDims:
    """The degrees as configured (nodes, processes_per_node, sharding, expert) and the mesh they make."""

    nodes: int = 1
    processes_per_node: int = 1
    sharding: str = "full"
    expert: int = 1  # routed experts split over this many ranks of a node (1: FSDP shards them with the rest)
    keys: Keys = dataclasses.field(default=Keys(), compare=False, repr=False)

    @classmethod
    def from_train(cls, train: Mapping[str, Any], keys: Keys = Keys()) -> ParallelDims:
        """A run's degrees from a scale's train settings (its overrides already merged)."""
        return cls(
            nodes=train["nodes"],
            processes_per_node=train["processes"],
            sharding=train["sharding"],
            expert=train.get("expert_parallel", 1),
            keys=keys,
        )

    @classmethod
    def from_ranks(
        cls, world_size: int, ranks_per_node: int, sharding: str = "full", expert: int = 1, keys: Keys = Keys()
    ) -> ParallelDims:
        """A launched job's degrees: its ranks as the launcher started them, the rest from its command line."""
        check_even_nodes(world_size, ranks_per_node, keys)
        return cls(world_size // ranks_per_node, ranks_per_node, sharding, expert, keys)

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node

    @property
    def hybrid(self) -> bool:
        """Replicated across nodes: hybrid sharding asked for, and more than one node to replicate over."""
        return self.sharding == "hybrid" and self.nodes > 1

    @property
    def effective_sharding(self) -> str:
        """On one node hybrid sharding is full sharding."""
        return "hybrid" if self.hybrid else "full"

    @property
    def replicate(self) -> int:
        """Copies of the training state: one a node under hybrid sharding, else one."""
        return self.nodes if self.hybrid else 1

    @property
    def shard(self) -> int:
        """The ranks that share one copy of the training state: a node (hybrid) or all of them."""
        return self.processes_per_node if self.hybrid else self.world_size

    @property
    def expert_data(self) -> int:
        """The ranks each expert's share is sharded over (the `dp_mod_ep` dimension)."""
        return self.world_size // self.expert

    @property
    def mesh_shape(self) -> tuple[int, ...]:
        """FSDP's mesh: (replicate, shard) under hybrid sharding, else (world_size,)."""
        return (self.replicate, self.shard) if self.hybrid else (self.world_size,)

    @property
    def mesh_dim_names(self) -> tuple[str, ...] | None:
        return ("replicate", "shard") if self.hybrid else None

    @property
    def expert_mesh_shape(self) -> tuple[int, int]:
        """(dp_mod_ep, ep): ep the inner dimension, so an expert group's ranks are consecutive, on one node."""
        return (self.expert_data, self.expert)


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


def check_degrees(dims: ParallelDims) -> None:
    """Every degree is a count of at least one."""
    k = dims.keys
    for key, value in ((k.nodes, dims.nodes), (k.processes, dims.processes_per_node), (k.expert_parallel, dims.expert)):
        if value < 1:
            raise MeshError(f"{key}: {value}; it must be at least 1")


def check_sharding(dims: ParallelDims) -> None:
    """A sharding the trainer knows."""
    if dims.sharding not in SHARDINGS:
        raise MeshError(
            f"{dims.keys.sharding}: {dims.sharding!r} is not a sharding; use full (shard over every rank) "
            "or hybrid (shard within a node, replicate across nodes)"
        )


def check_even_nodes(world_size: int, ranks_per_node: int, keys: Keys = Keys()) -> None:
    """Every node runs as many ranks as the others, or no mesh of nodes lays them out."""
    if ranks_per_node < 1 or world_size % ranks_per_node:
        raise MeshError(
            f"{world_size} ranks do not split into nodes of {ranks_per_node} ({keys.processes}); every node runs "
            f"the same number of processes: give one of {_divisors(world_size)}"
        )


def check_expert_in_node(dims: ParallelDims) -> None:
    """E divides a node's processes (so the world): an expert group's all-to-all stays within a node."""
    k, degree, per_node = dims.keys, dims.expert, dims.processes_per_node
    if per_node % degree:
        raise MeshError(
            f"{k.expert_parallel}: {degree} does not divide the {per_node} processes of a node ({k.processes}); "
            f"experts are split within a node: set {k.expert_parallel} to one of {_divisors(per_node)}"
        )


def check_expert_count(dims: ParallelDims, experts: int | None) -> None:
    """E > 1 needs routed experts, and divides each MoE layer's `experts` (None: nothing says how many)."""
    k, degree = dims.keys, dims.expert
    if degree == 1 or experts is None:
        return
    if not experts:
        raise MeshError(f"{k.expert_parallel}: {degree}, but the model has no routed experts; set it to 1")
    if experts % degree:
        both = [d for d in range(1, experts + 1) if experts % d == 0 and dims.processes_per_node % d == 0]
        raise MeshError(
            f"{k.expert_parallel}: {degree} does not divide the {experts} routed experts of a layer; set it to a "
            f"divisor of both the experts and the {dims.processes_per_node} processes of a node: "
            f"{', '.join(map(str, both))}"
        )


def check_expert_sharding(dims: ParallelDims) -> None:
    """Expert groups are laid out over the whole world, which hybrid sharding across nodes does not shard."""
    k = dims.keys
    if dims.expert > 1 and dims.hybrid:
        raise MeshError(
            f"{k.expert_parallel}: {dims.expert} with hybrid sharding across nodes ({k.sharding}: hybrid, "
            f"{k.nodes}: {dims.nodes}) is not supported; set {k.sharding} to full, or {k.expert_parallel} to 1"
        )


def check(dims: ParallelDims, experts: int | None = None) -> None:
    """Every rule above, in order: what a trainer checks before it builds a mesh (`experts`: check_expert_count)."""
    check_degrees(dims)
    check_sharding(dims)
    check_expert_in_node(dims)
    check_expert_count(dims, experts)
    check_expert_sharding(dims)
