"""The training recipe: documented fields, checks in one place, an explicit resume key, and a
command line where a flag overrides the workflow's --recipe."""

import dataclasses
import json

import pytest

from lineage.training.cli import resume_hash, training_parser
from lineage.training.recipe import (
    RECIPES,
    RESUME_FIELDS,
    ROUNDING_FIELDS,
    DpoRecipe,
    RecipeError,
    SftRecipe,
    recipe_from_args,
)


@pytest.mark.parametrize("cls", list(RECIPES.values()))
def test_every_field_is_documented_and_in_exactly_one_resume_set(cls):
    for f in dataclasses.fields(cls):
        assert f.metadata.get("doc"), f"{cls.__name__}.{f.name} has no documentation"
        assert (f.name in RESUME_FIELDS) != (f.name in ROUNDING_FIELDS), f.name
    assert RESUME_FIELDS | ROUNDING_FIELDS == {f.name for c in RECIPES.values() for f in dataclasses.fields(c)}


def test_values_are_coerced_to_their_field_types():
    recipe = SftRecipe.from_mapping({"lr": 1, "steps": 3.0, "adam_betas": [0.9, "0.95"], "warmup_steps": 1})
    assert recipe.lr == 1.0 and type(recipe.lr) is float and recipe.steps == 3 and type(recipe.steps) is int
    assert recipe.adam_betas == (0.9, 0.95)
    assert SftRecipe.from_mapping(json.loads(recipe.to_json())) == recipe


def test_a_dpo_pack_holds_a_whole_pair_and_the_head_gives_token_logprobs():
    assert DpoRecipe(packing=True, max_length=256).tokens_per_pack == 512  # chosen + rejected
    with pytest.raises(RecipeError, match="below 512 tokens, the longest pair"):
        DpoRecipe(packing=True, pack_tokens=300, max_length=256)
    with pytest.raises(RecipeError, match="liger's fused loss does not return"):
        DpoRecipe(fused_loss="liger")


@pytest.mark.parametrize(
    "given, meant", [(True, True), ("full", True), ("none", False), (False, False), ("selective", "selective")]
)
def test_activation_checkpointing_is_a_switch_or_a_named_mode(given, meant):
    """true/false stay as they were written before selective existed, so existing recipes read the same."""
    assert SftRecipe.from_mapping({"activation_checkpointing": given}).activation_checkpointing == meant


def test_activation_checkpointing_flag_with_and_without_a_mode():
    import argparse

    from lineage.training.recipe import add_recipe_arguments, recipe_from_args

    parser = argparse.ArgumentParser()
    add_recipe_arguments(parser, SftRecipe)
    for argv, meant in (
        ([], False),
        (["--activation-checkpointing"], True),
        (["--activation-checkpointing", "selective"], "selective"),
    ):
        assert recipe_from_args(parser.parse_args(argv), SftRecipe).activation_checkpointing == meant


@pytest.mark.parametrize(
    "values, message",
    [
        ({"steps": 2.5}, "steps: expected a whole number"),
        ({"lr": "fast"}, "lr: expected a number"),
        ({"activation_checkpointing": "yes"}, "expected true, false or selective"),
        ({"schedule": "cyclic"}, "schedule: 'cyclic' is not one of"),
        ({"steps": 4, "warmup_steps": 5}, "warmup_steps must be in [0, steps=4]"),
        ({"pack_tokens": 8192}, "pack_tokens and packed_attention need packing"),
        ({"packing": True, "pack_tokens": 100, "max_length": 256}, "below 256 tokens, the longest row"),
        ({"adam_betas": [0.9, 1.0]}, "adam_betas must lie in (0, 1)"),
        ({"bogus": 1}, "has no field(s) bogus"),
    ],
)
def test_bad_values_are_refused_naming_the_field(values, message):
    with pytest.raises(RecipeError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        SftRecipe.from_mapping(values)


def test_a_complete_recipe_leaves_nothing_to_the_defaults():
    values = dataclasses.asdict(DpoRecipe())
    del values["beta"]
    with pytest.raises(RecipeError, match="no value for beta"):
        DpoRecipe.from_mapping(values, complete=True)


def test_a_flag_overrides_the_recipe_json_and_unset_flags_do_not():
    parser = training_parser("test", SftRecipe)
    given = SftRecipe(lr=3e-4, steps=10, warmup_steps=2, seed=7).to_json()
    args = parser.parse_args(
        ["--init", "i", "--data", "d", "--out", "o", "--recipe", given, "--steps", "12", "--packing"]
    )
    recipe = recipe_from_args(args, SftRecipe)
    assert (recipe.lr, recipe.steps, recipe.warmup_steps, recipe.seed, recipe.packing) == (3e-4, 12, 2, 7, True)


def test_the_resume_hash_follows_resume_fields_only():
    data, parent = [{"sha256": "d"}], {"files": {"model.safetensors": "p"}}
    base = SftRecipe(steps=10)
    same = [
        dataclasses.replace(
            base,
            micro_batch_rows=2,
            global_batch_rows=512,
            activation_checkpointing=True,
            ce_chunk_tokens=512,
            compile=True,
        )
    ]
    other = [dataclasses.replace(base, lr=1e-5), dataclasses.replace(base, seed=1), dataclasses.replace(base, steps=11)]
    assert all(resume_hash(r, data, parent) == resume_hash(base, data, parent) for r in same)
    assert all(resume_hash(r, data, parent) != resume_hash(base, data, parent) for r in other)
    assert resume_hash(base, [{"sha256": "e"}], parent) != resume_hash(base, data, parent)


def _full_scale(tmp_path, speed_edit=None):
    """The shipped config at its full scale (checked against the schema), `speed_edit` applied to train.speed."""
    import copy

    import jsonschema
    import yaml
    from workflow_helpers import REPO, write_checkpoint

    from lineage.canonical import numbers_by_schema
    from lineage.workflow.runs import build_lineage

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    config = copy.deepcopy(yaml.safe_load((REPO / "config.yaml").read_text()))
    config["scale"] = "full"
    full, sample = config["scales"]["full"], REPO / "resources/sample"
    full["export"]["path"] = str(sample / "battles.jsonl")  # the build checks the inputs exist
    stage1 = write_checkpoint(tmp_path / "stage1", {"w": (8, 8)})  # mem_mb: auto counts its parameters
    (stage1 / "config.json").write_text("{}")
    full["stage1"]["path"] = str(stage1)
    full["train"]["expert_parallel"] = 1  # this stand-in Stage-1 has no experts to split
    config["runs"]["sftwFr6"]["overrides"]["full"]["expert_parallel"] = 1
    names = {"mmlu": "mmlu", "gsm8k": "gsm8k", "ifeval": "ifeval", "degen": "gen_prompts"}
    full["eval"]["items"] = {bench: str(sample / "eval" / f"{name}.jsonl") for bench, name in names.items()}
    full["eval"]["sizes"] = {"mmlu": [8, 8], "gsm8k": [4, 4], "ifeval": [4, 4, 4], "degen": [4]}  # what they hold
    if speed_edit:
        speed_edit(config["scales"]["full"]["train"]["speed"])
    jsonschema.validate(config, schema)
    return build_lineage(numbers_by_schema(config, schema), base_dir=REPO)


def test_dpo_runs_take_their_own_speed_keys_at_full_scale(tmp_path):
    """SFT packs 16,384 tokens with the chunked in-place loss (no logits kept); speed.dpo gives DPO runs their own
    packs and loss (the same today, as rehearsed); a loss that gives no per-token log-probability (liger) reaching
    DPO without speed.dpo is refused by name."""
    runs = _full_scale(tmp_path).runs
    assert (runs["sftw2"].recipe.fused_loss, runs["sftw2"].recipe.pack_tokens) == ("inplace_chunked", 16384)
    assert (runs["dpo2"].recipe.fused_loss, runs["dpo2"].recipe.pack_tokens) == ("inplace_chunked", 16384)
    compiled = _full_scale(tmp_path, lambda speed: speed["dpo"].update(fused_loss="compiled", pack_tokens=8192)).runs
    assert (compiled["dpo2"].recipe.fused_loss, compiled["dpo2"].recipe.pack_tokens) == ("compiled", 8192)
    assert compiled["sftw2"].recipe.fused_loss == "inplace_chunked"  # DPO's keys stay DPO's
    without = _full_scale(tmp_path, lambda speed: speed.pop("dpo")).runs  # the chunked loss serves DPO too
    assert (without["dpo2"].recipe.fused_loss, without["dpo2"].recipe.pack_tokens) == ("inplace_chunked", 16384)
    from lineage.workflow.checks import ConfigError

    def liger_without_dpo_keys(speed):
        del speed["dpo"]
        speed["fused_loss"] = "liger"

    with pytest.raises(ConfigError, match=r"runs\.dpo1 at scale full .*liger.*speed\.dpo's keys first"):
        _full_scale(tmp_path, liger_without_dpo_keys)
