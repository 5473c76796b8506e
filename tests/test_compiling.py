"""Compiled blocks under activation checkpointing: they run compiled, and give the eager loss and gradients.

transformers checkpoints a block's forward inside the block's call, so compiling a block traces the
checkpoint; a Mamba-2 mixer left eager inside it made Dynamo give up on every block of the model
(they share nn.Module's call code), and the "compiled" full-scale runs were eager. On the tiny hybrid
Nemotron-H (Mamba-2, MoE, attention, MoE), float32 on CPU, with full checkpointing the MoE and
attention blocks must run as compiled graphs (their children compiled, the checkpoint eager around
them); with selective checkpointing every block stays eager (compiling.py says why). Both give the
eager loss and gradients.
"""

from __future__ import annotations

import pytest
import torch
from _training_fixtures import build_base, launch, metrics, train_args
from transformers import AutoModelForCausalLM

from lineage.families import eager_mixers
from lineage.modeling import CONFIG_CLASSES, SHAPES
from lineage.training.checkpointing import enable_activation_checkpointing
from lineage.training.compiling import VARIANTS_PER_KIND, compile_block, graphs_compiled, prepare_compile
from lineage.training.fsdp import blocks


def tiny_hybrid() -> torch.nn.Module:
    torch.manual_seed(3)
    config = CONFIG_CLASSES["nemotron_h"](**SHAPES[("nemotron_h", "tiny")], vocab_size=256, use_cache=False)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32, experts_implementation="grouped_mm").train()


def loss_and_grads(model) -> tuple[float, dict[str, torch.Tensor]]:
    ids = torch.randint(3, 256, (2, 40), generator=torch.Generator().manual_seed(0))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("mode", [True, "selective"])
def test_blocks_run_compiled_under_activation_checkpointing(mode):
    torch._dynamo.reset()  # no cache entries or skipped code from another test's compiles
    eager = tiny_hybrid()
    enable_activation_checkpointing(eager, mode)
    reference_loss, reference = loss_and_grads(eager)

    model = tiny_hybrid()
    enable_activation_checkpointing(model, mode)
    eager_parts = [compile_block(block, mode) for block in blocks(model)]
    assert eager_parts == ([["mixer"], [], [], []] if mode is True else [[""]] * 4)
    without_eager_mixer = [not any(isinstance(m, eager_mixers()) for m in b.modules()) for b in blocks(model)]
    loss_and_grads(model)  # compiles
    model.zero_grad(set_to_none=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        loss, grads = loss_and_grads(model)
    compiled_forwards = sum(e.count for e in prof.key_averages() if e.key == "CompiledFunction")
    if mode is True:
        assert compiled_forwards >= sum(without_eager_mixer), f"{compiled_forwards} compiled forwards"
    else:
        assert compiled_forwards == 0
    assert loss == pytest.approx(reference_loss, rel=1e-5)
    assert grads.keys() == reference.keys()
    for name, grad in grads.items():
        torch.testing.assert_close(grad, reference[name], rtol=1e-4, atol=1e-5, msg=f"{mode}: {name}")


def train_step(model, length: int, grad: bool = True) -> int:
    """Graphs Dynamo compiled for one forward (and backward) of a row of `length` tokens."""
    ids = torch.randint(3, 256, (1, length), generator=torch.Generator().manual_seed(length))
    before = graphs_compiled()
    with torch.set_grad_enabled(grad):
        loss = model(input_ids=ids, labels=ids).loss
        if grad:
            loss.backward()
    return graphs_compiled() - before


def job(workload: str, lengths: tuple[int, ...], validate: bool = False) -> list[int]:
    """A fresh process's compiles, as a training job makes them: its blocks compiled for `workload`, one step a
    length (then a validation pass); the graphs each compiled."""
    torch._dynamo.reset()  # what a new process starts from: no compiled frames, no profile read yet
    torch.compiler.config.job_id = None
    model = tiny_hybrid()
    prepare_compile(blocks(model), workload)
    for block in blocks(model):
        compile_block(block)
    counts = [train_step(model, length) for length in lengths]
    return counts + ([train_step(model, lengths[0], grad=False)] if validate else [])


def test_jobs_of_one_workload_compile_each_kind_once_with_room_for_every_variant(tmp_path, monkeypatch):
    """The hybrid's three block kinds share one forward: static and dynamic sizes, with and without gradients, are
    12 variants of it, past Dynamo's default 8 (a frame past them runs eager; here it would fail). A second job of
    the workload starts from the dynamic sizes the first found (its profile in the compile cache's folder): it
    compiles no block anew at its second length, where a job of another workload recompiles every kind."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(torch._dynamo.config, "fail_on_recompile_limit_hit", True)
    monkeypatch.setattr(torch._dynamo.config, "recompile_limit", 8)
    monkeypatch.setattr(torch.compiler.config, "job_id", None)
    kinds = 3  # Mamba-2, MoE, attention
    first = job("w", (40, 48), validate=True)
    assert torch._dynamo.config.recompile_limit == VARIANTS_PER_KIND * kinds
    assert first[0] >= kinds and first[1] >= kinds, first  # each kind compiled, then recompiled with dynamic sizes
    again = job("w", (44, 48))
    other = job("x", (44, 48))
    assert other[1] >= kinds, other
    assert again[1] < kinds, again  # at most the checkpointing wrapper's frame, none of the block's


@pytest.mark.slow
def test_a_later_training_job_compiles_only_its_first_step(tmp_path, monkeypatch):
    """The trainer as the rule launches it, twice on one machine's compile cache, each job its own data order: the
    first compiles its blocks at its first step and again when its rows' lengths change; the second (another order,
    so other first lengths) compiles them at its first step only, with the sizes the first found to vary. (What it
    may compile later is transformers' checkpointing wrapper, a frame that only calls the block and whose sizes the
    profile does not carry: 2 graphs against the first job's 10.)"""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.delenv("TORCH_COMPILE_JOB_ID", raising=False)
    base = build_base(tmp_path)
    compiled = []
    for seed in (0, 1):
        out = tmp_path / f"seed{seed}"
        launch(
            "train_sft",
            train_args(base["base"], base["sft"], out, seed=seed, compile=True, micro_batch_rows=8),
            processes=1,
        )
        compiled.append([row["graphs_compiled"] for row in metrics(out.parent / f"{out.name}.metrics.jsonl")])
    first, second = compiled
    assert first[0] > 0 and any(first[1:]), first
    assert second[0] > 0 and sum(second[1:]) < sum(first[1:]) / 2, (first, second)
