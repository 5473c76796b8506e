"""An attention-only MoE (Qwen3-MoE, fused 3-D experts) trains through train_sft.py like the other families:
its experts are sharded with the blocks, count top-k of n toward the active parameters, and the loss falls.
Its whole description is lineage/families/qwen3_moe.py: the trained model also evaluates through eval_model.py."""

from __future__ import annotations

import json

import eval_model
import pytest
from _eval_fixtures import write_items
from _training_fixtures import build_base, launch, losses, run_in_process, train_args
from transformers import AutoModelForCausalLM

from lineage import families
from lineage.modeling import count_params


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("moe"), family="qwen3_moe")


def test_routed_experts_count_top_k_of_n_toward_the_active_parameters(base):
    model = AutoModelForCausalLM.from_pretrained(base["base"])
    config = model.config
    experts = [p for name, p in model.named_parameters() if ".experts." in name]
    assert experts and all(p.dim() == 3 and p.shape[0] == config.num_experts for p in experts)
    counts = count_params(model)
    total, active = counts.total, counts.active
    routed = sum(p.numel() for p in experts)
    assert total == sum(p.numel() for p in model.parameters())
    assert active == total - routed + routed * config.num_experts_per_tok // config.num_experts


@pytest.fixture(scope="module")
def sft(base):
    """One packed SFT job from the Base: its output checkpoint."""
    out = base["base"].parent / "sft"
    run_in_process("train_sft", train_args(base["base"], base["sft"], out, packing=True))
    return out


def test_the_family_is_read_from_its_module(base):
    model = AutoModelForCausalLM.from_pretrained(base["base"])
    family = families.of_config(model.config)
    assert family.name == "qwen3_moe" and families.get("qwen3_moe") is family
    assert len(families.expert_modules(model)) == model.config.num_hidden_layers
    assert family.layer_kinds(model.config) == ["attention_moe"] * model.config.num_hidden_layers


def test_loss_falls_and_lineage_records_the_active_share(base, sft):
    curve = losses(sft.parent / "sft.metrics.jsonl")
    assert curve[-1] < curve[0] - 0.3, curve
    lineage = json.loads((base["base"] / "lineage.json").read_text())
    assert lineage["params_active"] < lineage["params_total"]


def test_the_trained_model_evaluates_with_graph_decoding(sft, tmp_path):
    items = write_items(tmp_path / "items")
    out = tmp_path / "eval"
    argv = ["--model", str(sft), "--items", f"gsm8k={items['gsm8k']}", "--sizes", "gsm8k=2,2", "--parts", "gsm8k_A"]
    assert (
        eval_model.main(
            [*argv, "--batch-size", "2", "--max-new-tokens", "6", "--cache", "graph", "--out-dir", str(out)]
        )
        == 0
    )
    result = json.loads((out / "gsm8k_A.json").read_text())
    records = (out / "gsm8k_A.records.jsonl").read_text().splitlines()
    assert result["n"] == len(records) == 2 and 0.0 <= result["score"] <= 1.0


@pytest.mark.slow  # three interpreters start (launcher + 2 ranks): ~30 s on 2 shared cores
def test_two_processes_shard_the_experts_and_the_loss_falls(base):
    out = base["base"].parent / "two"
    proc = launch("train_sft", train_args(base["base"], base["sft"], out), processes=2)
    assert "4 micro × 1 accumulation × 2 ranks" in proc.stdout
    curve = losses(out.parent / "two.metrics.jsonl")
    assert curve[-1] < curve[0] - 0.3, curve
