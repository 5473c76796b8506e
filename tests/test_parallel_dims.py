"""lineage/parallel_dims.py: the mesh a job's degrees lay out, and each rule refusing a layout in words that name
the setting and the fix. The rules' callers (config checks, trainer, planner, rehearsal) are tested where they are."""

from __future__ import annotations

import pytest

from lineage.parallel_dims import (
    Keys,
    MeshError,
    ParallelDims,
    check,
    check_degrees,
    check_even_nodes,
    check_expert_count,
    check_expert_in_node,
    check_expert_sharding,
    check_sharding,
)


def test_full_sharding_is_one_dimension_over_every_rank():
    dims = ParallelDims(nodes=2, processes_per_node=8)
    assert dims.world_size == 16 and not dims.hybrid and dims.effective_sharding == "full"
    assert (dims.replicate, dims.shard) == (1, 16)
    assert dims.mesh_shape == (16,) and dims.mesh_dim_names is None


def test_hybrid_across_nodes_replicates_over_nodes_and_shards_within_one():
    dims = ParallelDims(nodes=2, processes_per_node=8, sharding="hybrid")
    assert dims.hybrid and (dims.replicate, dims.shard) == (2, 8)
    assert dims.mesh_shape == (2, 8) and dims.mesh_dim_names == ("replicate", "shard")


def test_hybrid_on_one_node_is_full_sharding():
    dims = ParallelDims(nodes=1, processes_per_node=8, sharding="hybrid")
    assert not dims.hybrid and dims.effective_sharding == "full" and dims.mesh_shape == (8,)


def test_the_expert_mesh_keeps_a_group_s_ranks_consecutive():
    dims = ParallelDims(nodes=2, processes_per_node=6, expert=2)
    assert dims.expert_mesh_shape == (6, 2) and dims.expert_data == 6


def test_from_train_reads_a_scale_s_train_keys():
    dims = ParallelDims.from_train({"nodes": 2, "processes": 6, "sharding": "full", "expert_parallel": 2})
    assert dims == ParallelDims(2, 6, "full", 2)
    assert ParallelDims.from_train({"nodes": 1, "processes": 2, "sharding": "full"}).expert == 1


def test_from_ranks_needs_the_same_ranks_on_every_node():
    assert ParallelDims.from_ranks(16, 8, "hybrid") == ParallelDims(2, 8, "hybrid")
    with pytest.raises(MeshError, match=r"6 ranks do not split into nodes of 4 \(LOCAL\); .* one of 1, 2, 3, 6"):
        ParallelDims.from_ranks(6, 4, keys=Keys(processes="LOCAL"))
    with pytest.raises(MeshError, match="do not split"):
        check_even_nodes(4, 0)


def test_config_keys_name_the_run_s_override_where_it_set_one():
    keys = Keys.of_config("scales.full.train", "runs.x.overrides.full", {"processes": 6})
    assert keys.processes == "runs.x.overrides.full.processes" and keys.nodes == "scales.full.train.nodes"


@pytest.mark.parametrize(
    "rule, dims, message",
    [
        (check_degrees, ParallelDims(expert=0), "expert_parallel: 0; it must be at least 1"),
        (check_sharding, ParallelDims(sharding="ring"), "sharding: 'ring' is not a sharding; use full"),
        (
            check_expert_in_node,
            ParallelDims(2, 6, expert=4),
            "expert_parallel: 4 does not divide the 6 processes of a node (processes); "
            "experts are split within a node: set expert_parallel to one of 1, 2, 3, 6",
        ),
        (
            check_expert_sharding,
            ParallelDims(2, 8, "hybrid", expert=8),
            "expert_parallel: 8 with hybrid sharding across nodes (sharding: hybrid, nodes: 2) is not supported; "
            "set sharding to full, or expert_parallel to 1",
        ),
    ],
)
def test_each_rule_refuses_naming_the_key_and_the_fix(rule, dims, message):
    with pytest.raises(MeshError) as err:
        rule(dims)
    assert message in str(err.value)


def test_the_expert_count_rule_needs_experts_that_split():
    check_expert_count(ParallelDims(1, 8, expert=8), 128)
    check_expert_count(ParallelDims(1, 8, expert=8), None)  # nothing says how many: nothing refused
    check_expert_count(ParallelDims(1, 8), 0)  # E = 1 on a dense model
    with pytest.raises(MeshError, match="expert_parallel: 2, but the model has no routed experts; set it to 1"):
        check_expert_count(ParallelDims(1, 8, expert=2), 0)
    with pytest.raises(MeshError, match="does not divide the 4 routed experts of a layer; .*: 1, 2$"):
        check_expert_count(ParallelDims(1, 6, expert=3), 4)


def test_check_runs_every_rule_and_passes_the_card_s_layouts():
    check(ParallelDims(1, 8, expert=8), 128)  # the full scale
    check(ParallelDims(2, 6, expert=2), 128)  # sftwFr6
    check(ParallelDims(2, 8, "hybrid"), 128)
    with pytest.raises(MeshError, match="hybrid sharding across nodes"):
        check(ParallelDims(2, 8, "hybrid", expert=8), 128)


def test_the_workflow_reads_it_without_torch():
    """The rule files import the lineage at start-up; the degrees and their rules must not pull torch in."""
    import subprocess
    import sys

    from workflow_helpers import REPO

    code = "import sys, lineage.parallel_dims; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(REPO / "workflow" / "scripts")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"
