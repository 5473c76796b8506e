"""build_tokenizer.py and init_model.py: deterministic outputs that carry the bundle."""

from __future__ import annotations

import json

import build_tokenizer
import init_model
from _training_fixtures import REPO, chat_rows, one_thread, write_jsonl
from transformers import AutoConfig, AutoTokenizer

from lineage.checkpoints.verify import verify_checkpoint

BUNDLE = REPO / "resources" / "bundle"


def build(tmp_path, name, corpus):
    build_tokenizer.main(
        build_tokenizer.parse_args(
            ["--corpus", str(corpus), "--vocab-size", "400", "--bundle", str(BUNDLE), "--out", str(tmp_path / name)]
        )
    )
    return tmp_path / name


def test_tokenizer_is_deterministic_and_carries_the_bundle(tmp_path):
    corpus = write_jsonl(tmp_path / "rows.jsonl", chat_rows(40))
    first, second = build(tmp_path, "a", corpus), build(tmp_path, "b", corpus)
    assert (first / "tokenizer.json").read_bytes() == (second / "tokenizer.json").read_bytes()
    tok = AutoTokenizer.from_pretrained(first)
    assert tok.convert_tokens_to_ids(["<|endoftext|>", "<|im_start|>", "<|im_end|>"]) == [0, 1, 2]
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert (
        tok("plain text", add_special_tokens=True)["input_ids"]
        == tok("plain text", add_special_tokens=False)["input_ids"]
    )
    assert (first / "chat_template.jinja").read_text() == (BUNDLE / "chat_template.jinja").read_text()
    assert (first / "system_prompt.txt").read_text() == (BUNDLE / "system_prompt.txt").read_text()
    generation = json.loads((first / "generation_config.json").read_text())
    assert generation["eos_token_id"] == 2 and generation["do_sample"] is False


def test_init_model_builds_a_tiny_hybrid_with_a_reproducible_root(tmp_path):
    tokenizer = build(tmp_path, "tok", write_jsonl(tmp_path / "rows.jsonl", chat_rows(40)))
    roots = []
    for name in ("x", "y"):
        with one_thread():
            init_model.main(
                init_model.parse_args(
                    ["--tokenizer", str(tokenizer), "--seed", "3", "--run", "base", "--out", str(tmp_path / name)]
                )
            )
        roots.append(verify_checkpoint(tmp_path / name)["root"])
    assert roots[0] == roots[1] and roots[0]["run"] == "base"
    config = AutoConfig.from_pretrained(tmp_path / "x")
    assert {"linear_attention", "full_attention", "moe"} <= set(config.layers_block_type)
    assert config.vocab_size == len(AutoTokenizer.from_pretrained(tokenizer))
    lineage = verify_checkpoint(tmp_path / "x")
    assert lineage["kind"] == "base" and 100_000 < lineage["params_total"] < 5_000_000
    assert lineage["params_active"] < lineage["params_total"]  # routed experts count top-k of n
