"""Activation checkpointing, full and selective: the same gradients as keeping every activation.

Selective keeps the matrix products' and attention's outputs and recomputes the rest; on a pico
Llama and a pico hybrid Nemotron-H (Mamba-2, attention, MLP) in float32 on CPU the loss and every
gradient equal the run without checkpointing, and the policy did save products (a policy that
saved nothing would be full checkpointing under another name).
"""

from __future__ import annotations

import pytest
import torch
from _eval_fixtures import make_checkpoint
from transformers import AutoModelForCausalLM
from transformers.modeling_layers import GradientCheckpointingLayer

from lineage.training import checkpointing
from lineage.training.checkpointing import checkpoint_options, enable_activation_checkpointing
from lineage.training.dist import close, init_distributed
from lineage.training.fsdp import load_sharded_model


def loss_and_grads(directory, mode):
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    model.train()
    if mode is not False:
        enable_activation_checkpointing(model, mode)
    ids = torch.randint(3, 200, (2, 24), generator=torch.Generator().manual_seed(0))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("arch", ["llama", "nemotron_h"])
def test_full_and_selective_give_the_gradients_of_no_checkpointing(tmp_path, arch, monkeypatch):
    directory = make_checkpoint(tmp_path / arch, seed=5, arch=arch)
    saved = []
    original = checkpointing._saved
    monkeypatch.setattr(checkpointing, "_saved", lambda op: saved.append(str(op)) or original(op))
    reference_loss, reference = loss_and_grads(directory, False)
    for mode in (True, "selective"):
        saved.clear()
        loss, grads = loss_and_grads(directory, mode)
        assert loss == pytest.approx(reference_loss, abs=1e-6)
        assert grads.keys() == reference.keys()
        for name, grad in grads.items():
            torch.testing.assert_close(grad, reference[name], rtol=1e-5, atol=1e-6, msg=f"{mode}: {name}")
        if mode == "selective":
            assert any(checkpointing._saved(op) for op in saved), "selective saved no matrix product"
            assert not all(checkpointing._saved(op) for op in saved), "selective recomputes nothing"


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="expected true"):
        checkpoint_options("some")


@pytest.mark.parametrize("mode", [False, True, "selective"])
def test_the_sharded_loader_checkpoints_every_block_as_asked(tmp_path, mode):
    directory = make_checkpoint(tmp_path / "pico", seed=5, arch="nemotron_h")
    env = init_distributed("cpu")
    try:
        model = load_sharded_model(directory, env, precision="fp32", activation_checkpointing=mode)
        layers = [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer)]
        assert layers and [layer.gradient_checkpointing for layer in layers] == [bool(mode)] * len(layers)
    finally:
        close()
