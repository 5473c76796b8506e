"""The GPU fast paths against their references (skipped without a CUDA GPU and the kernel packages).

- Nemotron-H packed through the Mamba-2 kernels with seq_idx: a row's logits and gradients do not
  move when the row before it changes (and do move without seq_idx: the check can fail), and the
  packed loss is the padded loss.
- Nemotron-H with its blocks compiled (the Mamba-2 mixers eager inside them) and the trainer's expert
  dispatch, with and without activation checkpointing: transformers' eager loss and gradients, in bf16
  (the experts' grouped GEMMs compile in bf16 only).
- The fused head losses (liger-kernel, cut-cross-entropy, the compiled one, the in-place one): the
  unfused loss and gradients; the in-place Triton kernel against its torch ops at vocabularies that
  do and do not fill its column blocks.
Run on a GPU machine as: python -m pytest tests/test_gpu_kernels.py (give it 10 minutes: compiling
the card-width blocks from a cold cache took longer than 200 s on an H200).
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoModelForCausalLM, NemotronHConfig

from lineage.chat import IGNORE_INDEX
from lineage.families.card import CARD_LAYERS
from lineage.families.nemotron_h import missing_mamba_kernels
from lineage.modeling import SHAPES
from lineage.training import head_loss
from lineage.training.checkpointing import enable_activation_checkpointing
from lineage.training.compiling import compile_block
from lineage.training.data import collate, collate_packed
from lineage.training.expert_parallel import expert_modules
from lineage.training.fsdp import blocks
from lineage.training.moe_dispatch import use_sorted_dispatch

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
mamba_kernels = pytest.mark.skipif(
    not torch.cuda.is_available() or bool(missing_mamba_kernels()),
    reason="needs a CUDA GPU with mamba-ssm and causal-conv1d",
)
VOCAB = 4096


def card_width_model(layers: str, dtype: torch.dtype = torch.float32, **options) -> torch.nn.Module:
    """The card Base's widths with the given layer pattern, on the GPU in train mode (fp32 unless given).

    fp32 keeps kernel rounding far below what a leak would move; FlashAttention's varlen kernel
    has no fp32, so attention keeps the rows apart by SDPA's mask from position_ids (the padded
    forward of the same model needs SDPA anyway).
    """
    shape = SHAPES[("nemotron_h", "30b_a3b")] | {"layers_block_type": [CARD_LAYERS[c] for c in layers]}
    torch.manual_seed(0)
    config = NemotronHConfig(**shape, vocab_size=VOCAB)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa", **options)
    return model.cuda().train()


def row(length: int, seed: int) -> SimpleNamespace:
    ids = torch.randint(3, VOCAB, (length,), generator=torch.Generator().manual_seed(seed)).tolist()
    return SimpleNamespace(input_ids=ids, labels=ids)


def packed_forward(model, rows, length: int, with_seq_idx: bool = True, labelled: int | None = None):
    """Logits of the pack and the loss of row `labelled` alone (all rows when None)."""
    batch = {
        k: v.cuda() for k, v in collate_packed(rows, pad_id=0, length=length).items() if isinstance(v, torch.Tensor)
    }
    labels = batch["labels"]
    if labelled is not None:
        start, end = (int(x) for x in batch["cu_seq_lens"][labelled : labelled + 2])
        keep = torch.zeros_like(labels, dtype=torch.bool)
        keep[:, start + 1 : end] = True
        labels = labels.masked_fill(~keep, IGNORE_INDEX)
    extra = dict(position_ids=batch["position_ids"])
    if with_seq_idx:
        extra["seq_idx"] = batch["seq_idx"]
    logits = model(input_ids=batch["input_ids"], use_cache=False, **extra).logits[0].float()
    targets = labels[0, 1:]
    loss = torch.nn.functional.cross_entropy(logits[:-1], targets, ignore_index=IGNORE_INDEX, reduction="sum")
    return logits, loss


def grads_of(model, loss) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm()).item()


@mamba_kernels
def test_a_packed_row_is_unchanged_when_the_row_before_it_changes():
    model = card_width_model("M*M")
    before, changed, own = row(300, 1), row(300, 2), row(500, 3)  # 300: the boundary falls inside a scan chunk
    span = slice(300, 800)
    logits, loss = packed_forward(model, [before, own], 1024, labelled=1)
    grads = grads_of(model, loss)
    logits2, loss2 = packed_forward(model, [changed, own], 1024, labelled=1)
    grads2 = grads_of(model, loss2)
    assert relative(logits2[span], logits[span]) < 1e-5 and abs(loss2.item() - loss.item()) < 1e-4 * loss.item()
    assert relative(grads2, grads) < 1e-4
    leaky, _ = packed_forward(model, [before, own], 1024, with_seq_idx=False)
    leaky2, _ = packed_forward(model, [changed, own], 1024, with_seq_idx=False)
    assert relative(leaky2[span], leaky[span]) > 1e-3  # without seq_idx the state crosses rows


@mamba_kernels
def test_packed_and_padded_losses_agree_on_the_card_widths():
    model = card_width_model("M*E")
    rows = [row(700, 4), row(333, 5), row(1200, 6)]
    _, packed = packed_forward(model, rows, 2304)
    padded = {k: v.cuda() for k, v in collate(rows, pad_id=0).items()}
    logits = model(input_ids=padded["input_ids"], use_cache=False).logits.float()
    reference = torch.nn.functional.cross_entropy(
        logits[:, :-1].flatten(0, 1), padded["labels"][:, 1:].flatten(), ignore_index=IGNORE_INDEX, reduction="sum"
    )
    assert abs(packed.item() - reference.item()) < 1e-3 * reference.item()


@mamba_kernels
@pytest.mark.parametrize("checkpointing", [False, True])
def test_compiled_blocks_give_the_eager_loss_and_gradients(checkpointing):
    rows = [row(700, 4), row(333, 5)]
    eager = card_width_model("M*E", torch.bfloat16, experts_implementation="grouped_mm")
    _, loss = packed_forward(eager, rows, 1152)
    grads = grads_of(eager, loss)
    del eager
    compiled = card_width_model("M*E", torch.bfloat16, experts_implementation="grouped_mm")  # same seed, weights
    assert use_sorted_dispatch(expert_modules(compiled)) == 1  # the trainer's dispatch, as fsdp.shard sets it
    if checkpointing:
        enable_activation_checkpointing(compiled, checkpointing)
    eager_parts = [compile_block(block, checkpointing) for block in blocks(compiled)]
    assert eager_parts == [["mixer"], [], []]  # the Mamba-2 mixer; attention and MoE compile (whole, or by child)
    _, loss2 = packed_forward(compiled, rows, 1152)
    grads2 = grads_of(compiled, loss2)
    assert abs(loss2.item() - loss.item()) < 2e-3 * loss.item()
    assert relative(grads2.float(), grads.float()) < 3e-2  # bf16: fused kernels round at other places


@cuda
@pytest.mark.parametrize(
    "fused",
    [name for name, package in head_loss.KERNEL_PACKAGES.items() if importlib.util.find_spec(package) is not None]
    + ["compiled", "inplace", "inplace_chunked"],  # 6,000 positions: chunks of 2,048 and a ragged last one
)
def test_a_fused_head_loss_gives_the_unfused_loss_and_gradients(fused):
    torch.manual_seed(0)
    tokens, hidden, vocab = 6000, 2048, 131072
    x = (torch.randn(tokens, hidden, device="cuda") / 8).bfloat16().requires_grad_()
    w = (torch.randn(vocab, hidden, device="cuda") / 64).bfloat16().requires_grad_()
    targets = torch.randint(0, vocab, (tokens,), device="cuda")
    results = {}
    for name in ("logits", head_loss.choose(fused, 0)):
        x.grad = w.grad = None
        loss = head_loss._FUNCTIONS[name](x, w, targets, 0)
        loss.backward()
        results[name] = (loss.detach().double(), x.grad.float(), w.grad.float())
    (ref, ref_dx, ref_dw), (got, dx, dw) = results["logits"], results[fused]
    assert abs(got.item() - ref.item()) < 1e-3 * ref.item()
    assert relative(dx, ref_dx) < 2e-2 and relative(dw, ref_dw) < 2e-2  # bf16 gradients, summed in other orders


@cuda
@pytest.mark.parametrize("vocab", [128256, 131072, 1000])  # a ragged last block, whole blocks, one short block
def test_the_in_place_kernel_gives_its_torch_ops_loss_and_gradient(vocab):
    from lineage.training import inplace_cross_entropy as inplace

    torch.manual_seed(0)
    logits = (torch.randn(3000, vocab, device="cuda") * 4).bfloat16()
    targets = torch.randint(0, vocab, (3000,), device="cuda")
    expected, got = logits.clone(), logits.clone()
    expected_losses = inplace._loss_and_softmax_grad_torch_(expected, targets)
    got_losses = inplace._loss_and_softmax_grad_triton_(got, targets)
    assert torch.allclose(got_losses, expected_losses.float(), rtol=1e-5, atol=1e-4)
    assert relative(got.float(), expected.float()) < 1e-2  # bf16 roundings of the same softmax
    assert (got.float().sum(dim=1).abs() < 0.05).all()  # a softmax minus a one-hot sums to zero


@cuda
@pytest.mark.parametrize("implementation", ["compiled", "inplace", "inplace_chunked"])
def test_per_position_log_probs_give_the_unfused_values_and_gradients(implementation):
    """DPO's head: each position's log-prob, backpropagated with a different weight per position."""
    torch.manual_seed(0)
    tokens, hidden, vocab = 5000, 2048, 131072
    x = (torch.randn(tokens, hidden, device="cuda") / 8).bfloat16().requires_grad_()
    w = (torch.randn(vocab, hidden, device="cuda") / 64).bfloat16().requires_grad_()
    targets = torch.randint(0, vocab, (tokens,), device="cuda")
    weights = torch.randn(tokens, device="cuda")  # what dL/dlogp looks like in DPO: a scale per sequence and sign
    results = {}
    for name in ("logits", implementation):
        x.grad = w.grad = None
        logprobs = head_loss._TOKEN_FUNCTIONS[name](x, w, targets, 0)
        (logprobs * weights).sum().backward()
        results[name] = (logprobs.detach(), x.grad.float(), w.grad.float())
    (ref, ref_dx, ref_dw), (got, dx, dw) = results["logits"], results[implementation]
    assert got.dtype == torch.float32 and relative(got.double(), ref.double()) < 1e-4  # fp32 log-probs, not bf16
    assert relative(dx, ref_dx) < 2e-2 and relative(dw, ref_dw) < 2e-2


@mamba_kernels
def test_packed_pairs_give_the_padded_dpo_sums_on_the_card_widths():
    """A pack of pairs (seq_idx, varlen-free SDPA from position_ids) sums each sequence as the padded batch does."""
    from lineage.training.packing import backbone_inputs
    from lineage.training.pairs import Pair, collate_pairs, sequence_sums

    model = card_width_model("M*E")
    head_loss.attach_logprobs(model, "logits")

    def side(length, seed, prompt):
        r = row(length, seed)
        return SimpleNamespace(input_ids=r.input_ids, labels=[IGNORE_INDEX] * prompt + r.labels[prompt:])

    pairs = [Pair(side(700, 1, 200), side(333, 2, 200), 0, "a"), Pair(side(1200, 3, 50), side(90, 4, 50), 1, "b")]
    sums = {}
    for packed in (True, False):
        batch = collate_pairs(pairs, 0, pack_length=4096 if packed else None)
        batch = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        boundaries = ("position_ids", "seq_idx") if packed else ()
        logprobs = model(
            **backbone_inputs(batch, boundaries, varlen=False), positions=batch["positions"], targets=batch["targets"]
        )
        sums[packed] = sequence_sums(logprobs, batch).double()
    assert relative(sums[True], sums[False]) < 1e-4, sums
