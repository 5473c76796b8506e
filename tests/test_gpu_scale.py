"""The `gpu` scale: the embedded lineage on one local GPU through the full scale's code paths (config.yaml
scales.gpu). What runs on CPU is checked here: the plan (same runs as embedded, each on cuda at world size 1
with packing, compiled blocks, the chunked head loss, graph decoding), the Base it builds (the card's layer
pattern, its vocabulary padded to the card's 131,072 rows), its memory plan against a GPU, and the planner
reading the scale by name. The lineage itself runs on a GPU (README "One GPU").
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from transformers import AutoConfig
from workflow_helpers import REPO, planned_jobs

from lineage.errors import EXIT_CODES, run_cli
from lineage.families.nemotron_h import mamba_kernel_misfit
from lineage.modeling import SHAPES
from lineage.workflow.config_file import read_config
from lineage.workflow.runs import ConfigError, build_lineage

CARD_VOCAB = 131072


def lineage(scale: str, config: dict | None = None, check_files: bool = False):
    return build_lineage(config or read_config(scale=scale), base_dir=REPO, check_files=check_files)


def test_it_builds_the_embedded_runs_each_on_one_gpu_through_the_full_scale_paths():
    gpu, embedded = lineage("gpu"), lineage("embedded")
    assert set(gpu.runs) == set(embedded.runs) and gpu.in_lineage == embedded.in_lineage
    trained = [run for run in gpu.runs.values() if run.kind in ("sft", "dpo") and run.built]
    assert len(trained) >= 8
    for run in trained:
        recipe = run.recipe
        assert (run.device, run.world_size, recipe.precision) == ("cuda", 1, "bf16"), run.name
        assert recipe.packing and recipe.compile and recipe.packed_attention == "varlen", run.name
        assert recipe.fused_loss == "inplace_chunked", run.name
    # the chain's steps are the scale's own, not the card's 4,780 / 234
    assert gpu.runs["stage1_sft"].recipe.steps == 100 and gpu.runs["dpo1"].recipe.steps == 24
    assert gpu.eval.device == "cuda" and gpu.eval.cache == "graph"


def test_its_base_is_the_card_pattern_and_kernel_shaped():
    config = read_config(scale="gpu")["scales"]["gpu"]["base"]
    shape = SHAPES[(config["family"], config["model_size"])]
    card = SHAPES[("nemotron_h", "30b_a3b")]
    assert shape["layers_block_type"] == card["layers_block_type"]  # 52 layers: Mamba-2, MoE, attention
    assert config["vocab_size"] == CARD_VOCAB > config["tokenizer_vocab"]
    from transformers import NemotronHConfig

    assert mamba_kernel_misfit(NemotronHConfig(**shape, vocab_size=CARD_VOCAB)) is None


def test_the_base_script_pads_the_vocabulary_and_refuses_too_few_rows(tmp_path, tokenizer_dir, capsys):
    import init_model

    def init(out, vocab):
        args = ["--family", "nemotron_h", "--size", "tiny", "--tokenizer", tokenizer_dir, "--out", str(out)]
        return run_cli(
            lambda: init_model.main(init_model.parse_args([*args, "--vocab-size", str(vocab)])), "init_model"
        )

    assert init(tmp_path / "padded", 512) == 0
    assert AutoConfig.from_pretrained(tmp_path / "padded").vocab_size == 512
    assert json.loads((tmp_path / "padded/lineage.json").read_text())["recipe"]["vocab_size"] == 512
    capsys.readouterr()
    assert init(tmp_path / "short", 3) == EXIT_CODES["ModelShapeError"]  # the tokenizer has 5 ids
    said = capsys.readouterr().err.strip()
    assert said == "init_model: config error: vocab_size 3 is below the tokenizer's 5 ids: give at least that many rows"
    assert not (tmp_path / "short").exists()


def test_its_memory_plan_fits_an_h100_and_a_small_gpu_is_refused_by_name():
    lineage("gpu", check_files=True)  # the shipped scale: every run planned under 79.18 GiB
    config = read_config(scale="gpu")
    small = copy.deepcopy(config)
    small["scales"]["gpu"]["train"]["gpu_gib"] = 12.0
    with pytest.raises(ConfigError, match=r"runs\.\w+: plans \d+\.\d GiB a GPU at scale gpu .* gpu_gib"):
        lineage("gpu", small, check_files=True)


def test_a_dry_run_plans_the_whole_published_lineage_here_without_a_gpu():
    embedded = planned_jobs("soupF2_eval")
    assert planned_jobs("soupF2_eval", "--config", "scale=gpu") == embedded


def test_the_planner_reads_the_scale_it_is_given(capsys):
    import plan

    assert plan.main(["--lineage", "--scale", "gpu", "--nodes-list", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nemotron_h/card_pattern_small (0.4B, 0.2B active") and "1 x 79.18 GiB" in out
    stage1_sft = next(line for line in out.splitlines() if line.startswith("| stage1_sft |"))
    assert "| 100 |" in stage1_sft  # the scale's steps, not the card's 4,780
    with pytest.raises(ValueError, match="--scale laptop: config.yaml has scales embedded, gpu, full"):
        plan.main(["--lineage", "--scale", "laptop"])


@pytest.mark.parametrize("overlay", sorted((REPO / "benchmarks" / "overlays").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_benchmark_overlay_still_builds_a_lineage(overlay):
    """The benchmarks' config overlays (benchmarks/overlays) pass the schema and plan at each scale they set."""
    for scale in yaml.safe_load(overlay.read_text())["scales"]:
        assert lineage(scale, read_config(overlays=[overlay], scale=scale)).runs, scale


def test_the_short_gpu_overlay_drops_the_dpo_chain_and_keeps_the_scale_paths():
    overlay = REPO / "benchmarks" / "overlays" / "gpu-stage1-sft.yaml"
    short, gpu = lineage("gpu", read_config(overlays=[overlay], scale="gpu")), lineage("gpu")
    assert not {"dpo1", "dpo4"} & set(short.in_lineage) and {"dpo1", "dpo4"} <= set(gpu.in_lineage)
    assert {"stage1_sft", "sftw2", "sftw4", "sftwF", "soup24", "soupF2"} <= set(short.in_lineage)
    for name in ("stage1_sft", "sftw4"):
        kept, full = short.runs[name].recipe, gpu.runs[name].recipe
        assert kept.steps < full.steps
        assert (kept.packing, kept.compile, kept.fused_loss) == (full.packing, full.compile, full.fused_loss)
