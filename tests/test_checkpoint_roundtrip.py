"""Trained checkpoints are ordinary Hugging Face directories: from_pretrained loads them and
generate() works with the bundle's chat template; the sharded loader reads them exactly."""

from __future__ import annotations

import json

import pytest
import torch
from _training_fixtures import build_base, one_thread, run_in_process, train_args, weights
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

from lineage.checkpoints.verify import verify_checkpoint
from lineage.training.dist import close, init_distributed
from lineage.training.fsdp import load_sharded_model


@pytest.fixture(scope="module", params=["nemotron_h", "llama"])
def trained(request, tmp_path_factory):
    """A 2-step SFT of each family: Nemotron-H in fp32, Llama (tied embeddings) in bf16."""
    paths = build_base(tmp_path_factory.mktemp(request.param), family=request.param)
    out = paths["base"].parent / "sft"
    precision = "fp32" if request.param == "nemotron_h" else "bf16"
    run_in_process("train_sft", train_args(paths["base"], paths["sft"], out, steps=2, precision=precision))
    return {**paths, "out": out, "precision": precision, "family": request.param}


def test_from_pretrained_loads_and_generates_with_the_chat_template(trained):
    out = trained["out"]
    verify_checkpoint(out)
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    generation = GenerationConfig.from_pretrained(out)
    assert generation.do_sample is False and generation.eos_token_id == tok.convert_tokens_to_ids("<|im_end|>")
    messages = [
        {"role": "system", "content": (out / "system_prompt.txt").read_text().strip()},
        {"role": "user", "content": "What is 2 plus 3?"},
    ]
    inputs = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
    assert tok.decode(inputs["input_ids"][0]).endswith("<|im_start|>assistant\n")
    with one_thread():
        output = model.generate(**inputs, max_new_tokens=8)
    assert output.shape[1] > inputs["input_ids"].shape[1]
    assert isinstance(tok.decode(output[0, inputs["input_ids"].shape[1] :]), str)


def test_saved_dtype_and_tied_weights(trained):
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[trained["precision"]]
    saved = weights(trained["out"])
    assert {t.dtype for t in saved.values() if t.is_floating_point()} == {dtype}
    config = json.loads((trained["out"] / "config.json").read_text())
    if config.get("tie_word_embeddings"):
        assert "lm_head.weight" not in saved
        model = AutoModelForCausalLM.from_pretrained(trained["out"])
        assert model.lm_head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()


def test_sharded_loader_matches_from_pretrained(trained):
    """Meta-device build + rank-0 broadcast reproduces the checkpoint (incl. rotary buffers)."""
    ids = torch.randint(3, 300, (2, 24), generator=torch.Generator().manual_seed(0))
    with one_thread():
        reference = AutoModelForCausalLM.from_pretrained(trained["base"], dtype=torch.float32)
        with torch.no_grad():
            expected = reference(input_ids=ids).logits
        env = init_distributed("cpu")
        try:
            model = load_sharded_model(trained["base"], env, precision="fp32", trainable=False)
            with torch.no_grad():
                actual = model(input_ids=ids).logits
        finally:
            close()
    assert torch.allclose(actual, expected, atol=1e-5), (actual - expected).abs().max()
