"""Evaluation and verifier sampling over several ranks: the records of one rank, byte for byte.

Real processes under the workflow's launcher (gloo on CPU). The items are the shipped sample files,
in their sources' formats; the models are the embedded tiny Nemotron-H (Mamba-2, attention and MoE
layers, built as the workflow builds it) and an attention-only pico model, whose log-likelihoods
also take the packed path on a CPU.
"""

from __future__ import annotations

import json

import pytest
from _eval_fixtures import make_checkpoint, write_items
from _training_fixtures import REPO, build_base, launch
from test_verifier_pairs import LOWER

from lineage.evaluation.replicas import Replicas

SAMPLE = REPO / "resources" / "sample" / "eval"


def test_batches_are_dealt_round_robin_and_every_result_comes_back():
    batches = [[0, 1], [2], [3, 4], [5]]
    assert Replicas(0, 3).mine(batches) == [(0, [0, 1]), (3, [5])]
    assert Replicas(2, 3).mine(batches) == [(2, [3, 4])]
    assert Replicas(1, 8).mine([[0]]) == []  # more ranks than batches
    assert Replicas().merge([None, None], {1: "b", 0: "a"}) == ["a", "b"]
    with pytest.raises(RuntimeError, match="1 requests were computed by no rank"):
        Replicas().merge([None, None], {0: "a"})
    with pytest.raises(ValueError):
        Replicas(2, 2)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("replicas")
    (root / "nemotron").mkdir()
    nemotron = build_base(root / "nemotron")["base"]
    return {"nemotron_h": nemotron, "llama": make_checkpoint(root / "pico" / "ckpt")}, root


def evaluate(model, out, ranks: int, *extra: str) -> dict[str, bytes]:
    """eval_model.py on `ranks` processes; {file name: bytes} of the records it wrote."""
    items = write_items(out.parent / "items")
    argv = [
        "--model",
        str(model),
        "--items",
        f"mmlu={SAMPLE / 'mmlu.jsonl'}",
        "--sizes",
        "mmlu=8",
        "--items",
        f"gsm8k={SAMPLE / 'gsm8k.jsonl'}",
        "--sizes",
        "gsm8k=5",
        "--items",
        f"ifeval={SAMPLE / 'ifeval.jsonl'}",
        "--sizes",
        "ifeval=4",
        "--items",
        f"margin={items['margin']}",
        "--batch-size",
        "3",
        "--max-new-tokens",
        "8",
        "--out-dir",
        str(out),
        *extra,
    ]
    launch("eval_model", argv, processes=ranks, timeout=600)
    results = {p.name: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert results and all(r["ranks"] == ranks for r in results.values())
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.records.jsonl"))}


@pytest.mark.parametrize(
    "family, extra",
    [("nemotron_h", ()), ("llama", ("--pack-tokens", "256", "--cache", "continuous"))],
    ids=["nemotron-h padded, fixed batches", "llama packed, continuous batching"],
)
def test_two_ranks_write_the_records_of_one_byte_for_byte(models, family, extra):
    checkpoints, root = models
    case = root / family / "-".join(extra)
    one = evaluate(checkpoints[family], case / "one", 1, *extra)
    two = evaluate(checkpoints[family], case / "two", 2, *extra)
    assert sorted(one) == [f"{p}.records.jsonl" for p in ("gsm8k_A", "ifeval_A", "margin_A", "mmlu_A")]
    assert two == one
    gsm8k = [json.loads(line) for line in one["gsm8k_A.records.jsonl"].splitlines()]
    assert len(gsm8k) == 5 and len({r["output"] for r in gsm8k}) > 1  # 2 batches of distinct answers


def test_two_ranks_sample_the_pairs_of_one(models):
    checkpoints, root = models
    prompts = root / "verifier_prompts.jsonl"
    prompts.write_text(
        "".join(json.dumps(dict(LOWER, id=f"vi-{i}", prompt=f"Topic {i}. Lowercase.")) + "\n" for i in range(7))
    )

    def sample(ranks: int) -> tuple[bytes, dict]:
        out, stats = root / f"pairs{ranks}.jsonl", root / f"stats{ranks}.json"
        argv = ["--model", str(checkpoints["llama"]), "--round", "dpo2", "--prompts", str(prompts)]
        argv += ["--samples", "6", "--max-new-tokens", "8", "--batch-size", "2", "--seed", "7"]
        launch("verifier_pairs", [*argv, "--out", str(out), "--stats", str(stats)], processes=ranks, timeout=600)
        return out.read_bytes(), json.loads(stats.read_text())

    (pairs_one, stats_one), (pairs_two, stats_two) = sample(1), sample(2)
    assert pairs_one and pairs_two == pairs_one
    assert stats_two["total"] == stats_one["total"] and stats_two["ranks"] == 2
