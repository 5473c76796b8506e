"""The typed lineage (lineage/workflow/runs.py): what every rule file reads, built once from the config."""

import copy
import dataclasses
from pathlib import Path

import jsonschema
import pytest
import yaml

from lineage.canonical import canonical, numbers_by_schema
from lineage.evaluation.benchmarks import BENCHMARKS, PART_NAMES
from lineage.training.recipe import DpoRecipe, SftRecipe
from lineage.workflow.runs import ConfigError, SoupRecipe, build_lineage

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())


def lineage(config=CONFIG):
    config = numbers_by_schema(copy.deepcopy(config), SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(config)
    return build_lineage(config, base_dir=REPO)


def with_(config=CONFIG, **changes):
    config = copy.deepcopy(config)
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        node = config
        for key in path:
            node = node.setdefault(key, {})
        node[last] = value
    return config


def test_the_embedded_lineage_builds_stage1_by_the_chain():
    lin = lineage()
    assert lin.stage1 == "dpo4" and lin.model_dir("stage1") == "results/embedded/models/dpo4"
    assert {"base", "stage1_sft", "dpo1", "dpo4"} <= set(lin.in_lineage)
    assert lin.runs["base"].built and not lin.runs["stage1"].built
    assert lin.table_runs == ("stage1_sft", "dpo1", "dpo2", "dpo3", "stage1", "sftw2", "sftwF", "soup24", "soupF2")
    assert lin.verifier_rounds == ("verifier_dpo2", "verifier_dpo3", "verifier_dpo4")
    assert lin.datasets["verifier_dpo3"].sampler == "dpo2" and lin.datasets["verifier_dpo3"].trains == "dpo3"
    assert lin.stage1_tokenizer == "results/embedded/stage1/tokenizer"


def test_an_external_stage1_leaves_the_chain_out():
    lin = lineage(with_(scales__embedded__stage1={"from": "external", "path": "resources/bundle"}))
    assert lin.stage1 == "stage1" and lin.model_dir("stage1") == "resources/bundle"
    assert not {"base", "stage1_sft", "dpo1", "dpo4"} & set(lin.in_lineage)
    assert lin.verifier_rounds == () and lin.table_runs[0] == "stage1"
    assert lin.stage1_tokenizer == "resources/bundle"  # the tokenizer of the model that Stage 2 trains


def test_a_run_recipe_is_the_card_value_times_the_scale_and_every_field_is_given():
    lin = lineage()
    sftw2, dpo2 = lin.runs["sftw2"], lin.runs["dpo2"]
    assert isinstance(sftw2.recipe, SftRecipe) and isinstance(dpo2.recipe, DpoRecipe)
    assert sftw2.recipe.lr == 5e-6 * 100 and sftw2.recipe.steps == 24 and sftw2.recipe.warmup_steps == 1
    assert sftw2.recipe.adam_betas == (0.9, 0.95) and sftw2.recipe.seed == 1234
    assert sftw2.lineage_extra == {"card_lr": 5e-6, "lr_scale": 100.0}
    assert dpo2.recipe.steps == 8 and dpo2.recipe.beta == 0.1  # the embedded override, recipe.dpo_beta
    assert lin.runs["sftwFr6"].world_size == 2  # its override is for the full scale only
    full = lineage(
        with_(
            scale="full",
            scales__full__stage1__path="resources/bundle",
            scales__full__export__path="resources/sample/battles.jsonl",
            scales__full__eval__unlisted="sample",
            scales__full__eval__items={},
            scales__full__eval__sizes={},
            scales__full__resources__train__mem_mb=900000,
        )
    )
    assert (
        full.runs["sftwFr6"].world_size == 12
        and full.runs["sftwFr6"].processes_per_node == 6
        and full.runs["sftwFr6"].recipe.global_batch_rows == 504
    )
    assert full.runs["sftw2"].recipe.lr == 5e-6 and full.runs["sftw2"].device == "cuda"


def test_soups_weigh_their_parents_equally_unless_told():
    lin = lineage()
    assert lin.runs["soupFT3"].recipe == SoupRecipe("linear", (1 / 3, 1 / 3, 1 / 3))
    assert lin.runs["soupG"].recipe.weights == (0.75, 0.25)


def test_the_same_meaning_gives_the_same_lineage():
    def reordered(value):
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        return value

    respelled = with_(runs__sftw2__lr="5e-6", recipe__optimizer__grad_clip=1, scales__embedded__train__lr_scale="1e2")
    for config in (reordered(CONFIG), respelled):
        other = lineage(config)
        assert other == lineage()
        assert other.in_lineage == lineage().in_lineage and other.rejected_runs == lineage().rejected_runs
        assert {n: canonical(r.recipe) for n, r in other.runs.items()} == {
            n: canonical(r.recipe) for n, r in lineage().runs.items()
        }


def test_eval_parts_follow_the_registry_and_a_part_job_carries_only_its_own_settings():
    lin = lineage()
    assert [p.name for p in lin.eval.parts] == list(PART_NAMES)
    assert lin.eval.group_by == "run" and lin.eval.job_parts() == list(lin.eval.parts)
    margin = next(p for p in lin.eval.parts if p.benchmark == "margin")
    assert margin.items == "results/embedded/data/holdout_pairs.jsonl" and margin.sizes is None
    per_part = lineage(with_(scales__embedded__eval__group_by="part")).eval
    (mmlu_b,) = per_part.job_parts("mmlu_B")
    flags = per_part.flags([mmlu_b])
    assert "--sizes mmlu=40,40" in flags and "--parts mmlu_B" in flags and "max-new-tokens" not in flags
    assert "gsm8k" not in flags and "--max-new-tokens 48" in per_part.flags(per_part.job_parts("gsm8k_A"))
    # the packing budget reaches the scoring parts only: generated text does not depend on it
    packed = lineage(with_(scales__embedded__eval__group_by="part", scales__embedded__eval__pack_tokens=4096)).eval
    assert "--pack-tokens 4096" in packed.flags(packed.job_parts("margin_A"))
    assert "--pack-tokens 4096" in packed.flags(packed.job_parts("mmlu_B"))
    assert "pack-tokens" not in packed.flags(packed.job_parts("gsm8k_A"))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"runs__soupG__parents": ["sftwF", "sftwF"]}, "runs.soupG.parents: ['sftwF', 'sftwF'] names a parent twice"),
        ({"scales__embedded__eval__sizes__ifeval": [16, 24]}, "eval.sizes.ifeval: 2 sizes for the 3 parts"),
        ({"scales__embedded__eval__items__arc": "x.jsonl"}, "eval.items: unknown arc"),
        ({"scales__embedded__train__speed__pack_tokens": 512}, "runs.stage1_sft at scale embedded"),
        (
            {"scales__embedded__eval__items__gsm8k": "nowhere/gsm8k.jsonl"},
            "scales.embedded.eval.items.gsm8k: 'nowhere/gsm8k.jsonl' does not exist",
        ),
        (
            {"scales__embedded__general_mix__rows": 10**6},
            "scales.embedded.general_mix.rows: 1,000,000 rows asked for, but its sources hold",
        ),
    ],
)
def test_problems_known_before_any_job_are_refused_with_the_key(changes, message):
    with pytest.raises(ConfigError) as err:
        lineage(with_(**changes))
    assert message in str(err.value)


def test_every_benchmark_has_items_at_both_scales():
    """The full scale names each real item file; the embedded one reads the modules' shipped samples."""
    sized = {name for name, b in BENCHMARKS.items() if b.sized}
    full = CONFIG["scales"]["full"]["eval"]
    assert full["unlisted"] == "error" and set(full["sizes"]) == set(full["items"]) == sized
    assert CONFIG["scales"]["embedded"]["eval"]["unlisted"] == "sample"
    assert all((REPO / BENCHMARKS[name].sample.items).is_file() for name in sized)


def test_a_benchmark_the_full_scale_does_not_name_is_refused():
    with pytest.raises(ConfigError, match=r"eval.items: missing gsm8k \(lineage/evaluation/benchmarks/gsm8k.py\)"):
        lineage(
            with_(
                scale="full",
                scales__full__stage1__path="resources/bundle",
                scales__full__export__path="resources/sample/battles.jsonl",
                scales__full__eval__items={"mmlu": "x.jsonl"},
                scales__full__eval__sizes={"mmlu": [1, 1]},
                scales__full__resources__train__mem_mb=900000,
            )
        )


def test_the_lineage_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        lineage().runs["sftw2"].nodes = 3


def test_runs_that_validate_take_the_holdout_split_and_dpo_references_score_it():
    """SFT on winner rows validates on the held-out battles, DPO on battle pairs on the held-out pairs (which its
    reference job scores with its training pairs); the chain's runs, trained on other data, on nothing."""
    lin = lineage()
    data = "results/embedded/data"
    assert lin.validation_files("sftw2") == [f"{data}/holdout.jsonl"]
    assert lin.validation_files("dpo_lr1em6") == [f"{data}/holdout_pairs.jsonl"]
    assert lin.reference_data_files("dpo_lr1em6") == [f"{data}/pairs.jsonl", f"{data}/holdout_pairs.jsonl"]
    for chain_run in ("stage1_sft", "dpo1", "dpo2"):
        assert lin.validation_files(chain_run) == []
        assert lin.reference_data_files(chain_run) == lin.data_files(chain_run) or chain_run == "stage1_sft"
