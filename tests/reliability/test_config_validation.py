"""config.yaml is validated before anything runs: the schema, then lineage-wide checks.

Each bad config must be refused with a message that names the offending key.
"""

import copy
import json

import jsonschema
import pytest
import yaml
from workflow_helpers import REPO, snakemake

from lineage.canonical import numbers_by_schema
from lineage.errors import EXIT_CODES
from lineage.evaluation.items import item_id, load_items
from lineage.io import load_jsonl
from lineage.workflow.runs import ConfigError, build_lineage

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())


def validate(config):
    """What rules/common.smk does: numbers by schema, the schema, then the lineage's own checks."""
    config = numbers_by_schema(config, SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(config)
    return build_lineage(config, base_dir=REPO)


def mutated(**changes):
    config = copy.deepcopy(CONFIG)
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        node = config
        for key in path:
            node = node.setdefault(key, {})  # a key the shipped config leaves to its default
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return config


DELETE = object()


def test_shipped_config_is_valid_and_every_key_is_commented():
    validate(CONFIG)
    text = (REPO / "config.yaml").read_text()
    assert "# not given by the card" in text


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"runs__sftwF__lr": 0}, "lr"),
        ({"runs__sftwF__lr": -1e-5}, "lr"),
        ({"runs__sftwF__steps": 0}, "steps"),
        ({"runs__sftwF__schedule": "cosine_with_restarts"}, "schedule"),
        ({"scale": "huge"}, "scale"),
        ({"runs__sftwF__kind": "ppo"}, "kind"),
        ({"runs__sftwF__data": DELETE}, "data"),
    ],
)
def test_schema_refuses_bad_values(changes, message):
    with pytest.raises(jsonschema.ValidationError) as err:
        validate(mutated(**changes))
    assert message in str(err.value.path) + err.value.message + str(err.value.schema_path)


def test_schema_refuses_unsafe_run_names():
    config = copy.deepcopy(CONFIG)
    config["runs"]["../evil"] = dict(config["runs"]["sftwF"])
    with pytest.raises(jsonschema.ValidationError, match="does not match"):
        validate(config)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"runs__sftwF__parents": ["nope"]}, "runs.sftwF.parents: 'nope' is not a run"),
        ({"runs__sftwF__parents": ["stage1", "sftw2"]}, "runs.sftwF.parents: a sft run starts from exactly one"),
        ({"runs__sftwF__data": ["missing_set"]}, "runs.sftwF.data: 'missing_set' is not a data set"),
        ({"runs__sftwF__data": ["battle_pairs"]}, "runs.sftwF.data: an sft run needs chat rows"),
        ({"runs__soupG__weights": [0.7, 0.7]}, "runs.soupG.weights: weights sum to 1.4"),
        ({"runs__soupG__weights": [1.0]}, "runs.soupG.weights: 1 weights for 2 parents"),
        ({"scales__embedded__train__micro_batch_rows": 3}, "global batch 16 rows cannot be split"),
        ({"scales__embedded__train__processes": 3}, "global batch 16 rows cannot be split"),
        ({"scales__embedded__export__path": "nowhere/battles.jsonl"}, "scales.embedded.export.path"),
        ({"eval_table__columns": ["stage1", "ghost"]}, "eval_table.columns: 'ghost'"),
        ({"eval_table__chain": ["ghost"]}, "eval_table.chain: 'ghost'"),
        ({"datasets__verifier_dpo2__model": "ghost"}, "datasets.verifier_dpo2.model: 'ghost' is not a run"),
        ({"runs__dpo2__data": ["winners"]}, "runs.dpo2.data: an dpo run needs preference pairs"),
        ({"scales__embedded__stage1__from": "soup24"}, "scales.embedded.stage1.from: 'soup24' must be 'external'"),
        ({"scales__embedded__stage1__from": "sftwF"}, "'sftwF' descends from the Stage-1 checkpoint itself"),
        ({"scales__embedded__verifier__prompts": "missing.jsonl"}, "scales.embedded.verifier.prompts"),
        ({"scales__embedded__eval__items__ifeval": "missing/if.jsonl"}, "scales.embedded.eval.items.ifeval"),
        ({"scales__embedded__general_mix__rows": 5000}, "general_mix.rows: 5,000 rows asked for, but its sources hold"),
        # the card's IF sizes against the 240 shipped items: refused at parse time, not inside a job
        (
            {"scales__embedded__eval__sizes__ifeval": [200, 400, 753]},
            "scales.embedded.eval.sizes.ifeval: its parts need 200 + 400 + 753 = 1,353 items, but "
            "resources/sample/eval/ifeval.jsonl holds 240",
        ),
        ({"scales__embedded__train__nodes": 3}, "cannot be split into micro-batches of 4 rows over 6 processes"),
        ({"scales__embedded__resources__train__mem_mb": "auto"}, "resources.train.mem_mb: auto plans host memory"),
        # the embedded Nemotron-H: 4 routed experts a layer, 2 processes a node
        (
            {"scales__embedded__train__expert_parallel": 4},
            "runs.stage1_sft: scales.embedded.train.expert_parallel: 4 does not divide the 2 processes of a node",
        ),
        # a run's own override is the key named (lineage/parallel_dims.py: one rule, the key it came from)
        (
            {"runs__dpo1__overrides__embedded__expert_parallel": 4},
            "runs.dpo1: runs.dpo1.overrides.embedded.expert_parallel: 4 does not divide the 2 processes of a node "
            "(scales.embedded.train.processes)",
        ),
        (
            {
                "scales__embedded__train__nodes": 2,
                "scales__embedded__train__sharding": "hybrid",
                "scales__embedded__train__expert_parallel": 2,
            },
            "expert_parallel: 2 with hybrid sharding across nodes (scales.embedded.train.sharding: hybrid, "
            "scales.embedded.train.nodes: 2) is not supported; set scales.embedded.train.sharding to full",
        ),
        (
            {
                "scales__embedded__train__expert_parallel": 3,
                "scales__embedded__train__processes": 3,
                "scales__embedded__train__global_batch_rows": 12,
            },
            "scales.embedded.train.expert_parallel: 3 does not divide the 4 routed experts",
        ),
    ],
)
def test_lineage_checks_name_the_key(changes, message):
    with pytest.raises(ConfigError) as err:
        validate(mutated(**changes))
    assert message in str(err.value)


@pytest.mark.parametrize(
    "section, row, message",
    [
        # StackExchange-paired's layout: no prompt turns, answers under other names
        ("preference_mix", {"question": "q", "response_j": "a", "response_k": "b"}, "no prompt: give 'messages'"),
        ("preference_mix", {"prompt": "q", "chosen": "a"}, "field 'rejected': expected the answer as text"),
        ("general_mix", {"text": "a pretraining document"}, "field 'messages': missing"),
        ("general_mix", {"conversations": [{"from": "bot", "value": "hi"}]}, "field 'conversations[0].from'"),
    ],
)
def test_a_source_in_a_layout_no_job_reads_is_refused_at_the_dry_run_naming_file_row_and_field(
    tmp_path, section, row, message
):
    source = tmp_path / "source.jsonl"
    source.write_text("not json\n" + json.dumps(row) + "\n")  # a bad line is the job's to quarantine; row 2 is read
    shipped = CONFIG["scales"]["embedded"][section]["sources"]
    config = mutated(**{f"scales__embedded__{section}__sources": [str(source), *shipped]})
    with pytest.raises(ConfigError) as err:
        validate(config)
    said = str(err.value)
    assert said.startswith(f"scales.embedded.{section}.sources[0]: {source}:2: ") and message in said, said


def test_sources_as_their_publishers_ship_them_pass_the_dry_run(tmp_path):
    """UltraFeedback (binarized) as a Parquet file, and a ShareGPT-layout SFT file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    turns = [{"role": "user", "content": "q"}]
    ultrafeedback = {
        "prompt": "q",
        "chosen": [*turns, {"role": "assistant", "content": "good"}],
        "rejected": [*turns, {"role": "assistant", "content": "bad"}],
        "messages": [*turns, {"role": "assistant", "content": "good"}],
    }
    pq.write_table(pa.Table.from_pylist([ultrafeedback] * 3), tmp_path / "uf.parquet")
    sharegpt = tmp_path / "sharegpt.jsonl"
    sharegpt.write_text(json.dumps({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}))
    validate(
        mutated(
            scales__embedded__preference_mix__sources=[str(tmp_path / "uf.parquet")],
            scales__embedded__general_mix__sources=["resources/sample/general_mix.jsonl", str(sharegpt)],
        )
    )


def test_cycle_is_refused():
    config = mutated(runs__sftw2__parents=["soup24"])
    with pytest.raises(ConfigError, match="cycle: .*sftw2 -> soup24 -> sftw2"):
        validate(config)


def test_a_verifier_round_sampled_by_its_own_descendant_is_a_cycle():
    config = mutated(datasets__verifier_dpo2__model="dpo3")
    with pytest.raises(ConfigError, match="cycle: .*dpo2 -> dpo3 -> dpo2"):
        validate(config)


def test_soup_of_different_initialisations_is_refused():
    config = copy.deepcopy(CONFIG)
    config["runs"]["other_base"] = {"kind": "external"}
    config["runs"]["other_sft"] = dict(config["runs"]["sftwF"], parents=["other_base"])
    config["runs"]["bad_soup"] = {"kind": "soup", "parents": ["sftwF", "other_sft"]}
    with pytest.raises(ConfigError, match="runs.bad_soup.parents: .*different roots"):
        validate(config)


def test_an_arena_export_without_our_model_is_refused_before_any_job():
    config = mutated(scales__embedded__export__format="arena", scales__embedded__export__our_model="")
    with pytest.raises(jsonschema.ValidationError, match="should be non-empty|is too short"):
        validate(config)
    del config["scales"]["embedded"]["export"]["our_model"]
    with pytest.raises(jsonschema.ValidationError, match="'our_model' is a required property"):
        validate(config)


def test_full_scale_needs_the_stage1_checkpoint(tmp_path):
    config = mutated(scale="full")
    config["scales"]["full"]["export"]["path"] = "resources/card_counts.json"  # exists
    with pytest.raises(ConfigError, match="scales.full.stage1.path: 'runs/dpo4/hf_step00124' does not exist"):
        validate(config)


def test_snakemake_refuses_a_bad_overlay_before_any_job(tmp_path):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("runs:\n  sftwF:\n    lr: -0.001\n")
    proc = snakemake("-n", "sftwF", "--configfile", str(overlay), check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"]
    assert (
        proc.stderr.strip().splitlines()[-1]
        == "config error: runs.sftwF.lr: -0.001 is less than or equal to the minimum of 0"
    )
    assert 'File "' not in proc.stderr + proc.stdout  # the reason alone, no stack of the workflow's files


def test_snakemake_refuses_a_lineage_error_with_its_reason_alone(tmp_path):
    overlay = tmp_path / "missing.yaml"
    overlay.write_text("scales:\n  embedded:\n    export:\n      path: no/such/export.jsonl\n")
    proc = snakemake("-n", "sftwF", "--configfile", str(overlay), check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"], proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("config error: scales.embedded.export.path: 'no/such/export.jsonl' does not exist"), last
    assert 'File "' not in proc.stderr + proc.stdout


def planted_prompts(tmp_path, question: str):
    """The shipped verifier prompts and one more whose question is `question`: the file, and that prompt's line."""
    shipped = (REPO / CONFIG["scales"]["embedded"]["verifier"]["prompts"]).read_text()
    planted = {"id": "vm-planted", "type": "math", "question": question, "answer": "#### 5"}
    path = tmp_path / "verifier_prompts.jsonl"
    path.write_text(shipped + json.dumps(planted) + "\n")
    return path, len(shipped.splitlines()) + 1


def test_snakemake_refuses_a_verifier_prompt_that_repeats_an_eval_item_before_any_job(tmp_path):
    """Checked at start-up (the item files are no input of the verifier rounds): one line naming the prompt's file
    and row and the item's file and id, in the normalized text verifier_pairs.py compares (case, punctuation)."""
    items = "resources/sample/eval/gsm8k.jsonl"
    item = load_jsonl(REPO / items)[2]
    prompts, line = planted_prompts(tmp_path, f"  {item['question'].upper()}?! ")
    overlay = tmp_path / "planted.yaml"
    overlay.write_text(f"scales:\n  embedded:\n    verifier:\n      prompts: {prompts}\n")
    proc = snakemake("-n", "soupF2_eval", "--configfile", str(overlay), check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"], proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"config error: scales.embedded.verifier.prompts: {prompts}:{line} (prompt 'vm-planted') repeats item "
        f"{item['id']!r} of {items} (row 3)"
    ), last
    assert last.endswith(f"remove the prompt from {prompts} or the item from {items}"), last
    assert 'File "' not in proc.stderr + proc.stdout  # the reason alone, no stack of the workflow's files


def test_a_repeated_item_published_without_an_id_is_named_by_the_id_its_evaluation_gives_it(tmp_path):
    """GSM8K as published has no ids: the refusal names the one eval_model.py derives (lineage/evaluation/items.py)."""
    rows = load_jsonl(REPO / "resources/sample/eval/gsm8k.jsonl")
    published = tmp_path / "gsm8k.jsonl"
    published.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "id"}) + "\n" for row in rows))
    prompts, line = planted_prompts(tmp_path, rows[5]["question"])
    config = mutated(
        scales__embedded__verifier__prompts=str(prompts), scales__embedded__eval__items={"gsm8k": str(published)}
    )
    with pytest.raises(ConfigError) as err:
        validate(config)
    evaluated = item_id("gsm8k", load_items("gsm8k", published)[5])
    assert f"{prompts}:{line} (prompt 'vm-planted') repeats item {evaluated!r} of {published} (row 6)" in str(err.value)


@pytest.mark.parametrize("name", ["general_mix", "evaluate", "data", "sftwF_eval"])
def test_a_run_named_like_a_rule_or_target_is_refused_before_any_job(tmp_path, name):
    overlay = tmp_path / "clash.yaml"
    overlay.write_text(f"runs:\n  {name}:\n    kind: soup\n    parents: [sftwF, soup24]\n    rejected: true\n")
    proc = snakemake("-n", "sftwF", "--configfile", str(overlay), check=False)
    assert proc.returncode == EXIT_CODES["ConfigError"], proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    run = name.removesuffix("_eval") if name == "sftwF_eval" else name
    assert last.startswith(f"config error: runs.{run}") and "rename the run" in last, proc.stderr[-2000:]
    assert 'File "' not in proc.stderr + proc.stdout  # the reason alone, no stack of the workflow's files


def _resolved(node):
    while "$ref" in node:
        target = SCHEMA
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _keys(node, path=""):
    """(config key, has a description) for every key the schema describes, nested ones included."""
    node = _resolved(node)
    for branch in [node, *map(_resolved, node.get("allOf", []))]:
        for key, sub in branch.get("properties", {}).items():
            full = _resolved(sub)
            yield path + key, "description" in full or any("description" in _resolved(b) for b in full.get("allOf", []))
            yield from _keys(sub, f"{path}{key}.")
        if isinstance(branch.get("additionalProperties"), dict):
            yield from _keys(branch["additionalProperties"], f"{path}*.")


def test_every_config_key_has_a_description_in_the_schema():
    keys = dict(_keys(SCHEMA))
    assert {"scales.embedded.train.speed.packing", "runs.*.overrides.full.steps", "recipe.optimizer.eps"} <= set(keys)
    assert [key for key, described in keys.items() if not described] == []
