"""The fused head loss: the model's own logits' loss and gradients, from the labelled positions only."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, LlamaConfig, NemotronHConfig

from lineage.chat import IGNORE_INDEX
from lineage.modeling import SHAPES, causal_pairs, count_params
from lineage.training import head_loss

VOCAB = 97


def tiny(family: str, **overrides) -> torch.nn.Module:
    config_class = {"llama": LlamaConfig, "nemotron_h": NemotronHConfig}[family]
    torch.manual_seed(0)
    config = config_class(**SHAPES[(family, "tiny")] | overrides, vocab_size=VOCAB)
    options = {"experts_implementation": "eager"} if family == "nemotron_h" else {}  # grouped_mm has no float64
    return AutoModelForCausalLM.from_config(config, dtype=torch.float64, **options).train()


def batch(rows: int = 3, length: int = 13):
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, VOCAB, (rows, length), generator=generator)
    labels = input_ids.clone()
    labels[0, :5] = IGNORE_INDEX  # a prompt
    labels[2, 9:] = IGNORE_INDEX  # padding
    return input_ids, labels


def reference_loss(model, input_ids, labels) -> torch.Tensor:
    """The loss from the model's own forward: every position's logits, shifted, fp32-or-better CE."""
    logits = model(input_ids=input_ids, use_cache=False).logits
    return F.cross_entropy(
        logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(), ignore_index=IGNORE_INDEX, reduction="sum"
    )


def small_head():
    """7 positions' float64 hidden states, an 11-token head and their targets."""
    torch.manual_seed(0)
    hidden = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(11, 5, dtype=torch.float64, requires_grad=True)
    return hidden, weight, torch.randint(0, 11, (7,))


def grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("family", ["llama", "nemotron_h"])  # tied and untied heads
@pytest.mark.parametrize(
    "implementation,chunk", [("logits", 0), ("chunked", 4), ("compiled", 0), ("inplace", 0), ("inplace_chunked", 0)]
)
def test_the_attached_forward_gives_the_models_loss_and_gradients(family, implementation, chunk):
    model = tiny(family)
    input_ids, labels = batch()
    expected = reference_loss(model, input_ids, labels)
    expected.backward()
    expected_grads = grads(model)
    model.zero_grad(set_to_none=True)

    head_loss.attach(model, implementation, chunk)
    loss = model(input_ids=input_ids, labels=labels, use_cache=False)
    loss.backward()
    # float64 weights; Nemotron-H's own forward rounds its logits to float32, hence the tolerances
    assert loss.shape == () and torch.allclose(loss, expected.double(), rtol=1e-6)
    got = grads(model)
    assert got.keys() == expected_grads.keys()
    for name, grad in expected_grads.items():
        assert (got[name] - grad).norm() <= 1e-6 * grad.norm(), name


@pytest.mark.parametrize(
    "implementation,chunk_rows",
    # the chunked loss: one position a chunk, a ragged last chunk, exactly one chunk, its default
    [("compiled", None), ("inplace", None)] + [("inplace_chunked", rows) for rows in (1, 3, 7, None)],
)
def test_a_scaled_loss_scales_the_head_gradients(implementation, chunk_rows, monkeypatch):
    """The trainer backpropagates loss_sum / trained tokens: a gradient prepared in the forward must take that factor."""
    from lineage.training import inplace_cross_entropy

    if chunk_rows is not None:
        monkeypatch.setattr(inplace_cross_entropy, "CHUNK_ROWS", chunk_rows)
    hidden, weight, targets = small_head()
    expected = F.cross_entropy(hidden @ weight.T, targets, reduction="sum")
    expected_grads = torch.autograd.grad(expected * 0.37, (hidden, weight))
    loss = head_loss._FUNCTIONS[implementation](hidden, weight, targets, 0)
    grads = torch.autograd.grad(loss * 0.37, (hidden, weight))
    assert torch.allclose(loss, expected, rtol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        assert torch.allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("chunk_rows", [1, 3, 7, None])
def test_chunked_per_position_log_probs_rerun_each_chunk_for_their_gradients(chunk_rows, monkeypatch):
    """DPO's head without kept logits: each position's log-prob, then a different weight per position
    (what dL/dlogp is in DPO) through the backward's rerun of every chunk."""
    from lineage.training import inplace_cross_entropy

    if chunk_rows is not None:
        monkeypatch.setattr(inplace_cross_entropy, "CHUNK_ROWS", chunk_rows)
    hidden, weight, targets = small_head()
    per_position = torch.randn(7, dtype=torch.float64)
    results = []
    for name in ("logits", "inplace_chunked"):
        logprobs = head_loss._TOKEN_FUNCTIONS[name](hidden, weight, targets, 0)
        results.append((logprobs, *torch.autograd.grad((logprobs * per_position).sum(), (hidden, weight))))
    for got, want in zip(results[1], results[0], strict=True):
        assert torch.allclose(got, want, rtol=1e-10, atol=1e-12)


def test_positions_found_on_the_host_are_used_as_given(monkeypatch):
    """The trainer passes the labelled positions it found while building the batch: the head must not search again
    (on a GPU that search holds the host until the forward has run)."""
    model = tiny("llama")
    input_ids, labels = batch()
    expected = reference_loss(model, input_ids, labels)
    head_loss.attach(model, "inplace_chunked")
    positions = head_loss.find_loss_positions(labels)
    monkeypatch.setattr(head_loss, "find_loss_positions", lambda labels: pytest.fail("searched the labels again"))
    loss = model(input_ids=input_ids, labels=labels, loss_positions=positions, use_cache=False)
    assert torch.allclose(loss.double(), expected, rtol=1e-6)


def test_only_labelled_positions_reach_the_head():
    labels = torch.full((2, 6), IGNORE_INDEX)
    labels[0, 2:4] = 5  # targets at 2, 3: predicted from positions 1, 2
    labels[1, 5] = 7  # predicted from position 5 of row 1 = flat index 6 + 4
    assert head_loss.find_loss_positions(labels).tolist() == [1, 2, 10]


def test_a_micro_batch_without_targets_gives_zero_and_still_touches_the_head():
    model = tiny("nemotron_h")
    head_loss.attach(model, "logits")
    input_ids, _ = batch()
    loss = model(input_ids=input_ids, labels=torch.full_like(input_ids, IGNORE_INDEX), use_cache=False)
    loss.backward()
    assert loss.item() == 0.0
    head = model.get_output_embeddings().weight
    assert head.grad is not None and torch.count_nonzero(head.grad) == 0  # same parameters as on the other ranks


def test_kernel_libraries_are_refused_where_they_cannot_run(monkeypatch):
    with pytest.raises(head_loss.HeadLossError, match="CUDA GPUs; on cpu set train.speed.fused_loss to none"):
        head_loss.check_available("liger", torch.device("cpu"))
    monkeypatch.setitem(head_loss.KERNEL_PACKAGES, "cce", "cut_cross_entropy_not_installed")
    with pytest.raises(head_loss.HeadLossError, match="pip install cut-cross-entropy-not-installed"):
        head_loss.check_available("cce", torch.device("cuda"))
    with pytest.raises(head_loss.HeadLossError, match="unknown fused loss"):
        head_loss.check_available("apex", torch.device("cuda"))
    head_loss.check_available("none", torch.device("cpu"))
    assert head_loss.choose("none", 0) == "logits" and head_loss.choose("none", 512) == "chunked"
    assert head_loss.choose("liger", 0) == "liger"
    head_loss.check_available("compiled", torch.device("cpu"))
    assert head_loss.choose("compiled", 0) == "compiled"
    head_loss.check_available("inplace", torch.device("cpu"))  # torch ops where Triton does not run
    head_loss.check_available("inplace_chunked", torch.device("cpu"))


def test_a_model_that_rescales_its_logits_is_refused():
    model = tiny("llama")
    model.config.final_logit_softcapping = 30.0
    with pytest.raises(head_loss.HeadLossError, match="transforms its logits"):
        head_loss.attach(model, "logits")


def test_flop_counts_take_a_tied_head_once_and_no_embedding_lookup():
    tied, untied = tiny("llama"), tiny("nemotron_h")
    counts = count_params(tied)
    assert counts.total == sum(p.numel() for p in tied.parameters())  # named twice, counted once
    assert counts.embedding == 0 and counts.head == VOCAB * tied.config.hidden_size
    assert counts.step_flops(10, 4) == 6 * (counts.body * 10 + counts.head * 4)
    # two attention layers of 4 heads x 16; a causal row of 3 tokens attends 3 + 2 + 1 pairs
    assert counts.attention_width == 2 * 4 * 16 and causal_pairs([3, 1]) == 7
    assert counts.step_flops(10, 4, 7) - counts.step_flops(10, 4) == 12 * 128 * 7
    moe = count_params(untied)
    assert moe.embedding == moe.head == VOCAB * untied.config.hidden_size
    experts = sum(p.numel() for n, p in untied.named_parameters() if ".experts." in n)
    top_k, routed = untied.config.num_experts_per_tok, untied.config.n_routed_experts
    assert moe.active == moe.total - experts + experts * top_k // routed
    assert moe.body == moe.active - 2 * VOCAB * untied.config.hidden_size
    pattern = untied.config.layers_block_type
    assert moe.attention_width == pattern.count("full_attention") * 4 * 16  # not its Mamba-2 layers
