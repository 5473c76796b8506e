"""DPO's fast path computes what the naive path computes, in float64.

The naive path (the trainer before reference log-probs had a job of their own): chosen and
rejected rows padded into one batch, the policy and a live copy of the reference over the full
vocabulary, a log-softmax per row. The fast path: the reference's scores from the eval's
log-likelihood (reference_logprobs.py's call), the policy's pairs padded or packed, the LM head
only on the completion positions, per-sequence sums on a dense grid. Loss, rewards, margins
and every parameter's gradient must agree, for a tiny Llama and the embedded Nemotron-H.
"""

from __future__ import annotations

import copy
import json

import pytest
import torch
from _training_fixtures import build_base
from transformers import AutoModelForCausalLM, AutoTokenizer

from lineage.chat import IGNORE_INDEX, load_bundle
from lineage.evaluation.packed_scoring import packed_loglikelihood, unpackable_reason
from lineage.evaluation.scoring import loglikelihood
from lineage.training import head_loss
from lineage.training.data import collate
from lineage.training.losses import dpo_sigmoid
from lineage.training.packing import backbone_inputs
from lineage.training.pairs import collate_pairs, scoring_request, sequence_sums, tokenize_pairs

BETA = 0.5
# float64 throughout, but Nemotron-H's Mamba-2 reference path computes in float32 inside: the reference
# scores, padded in other batches than the naive pass, differ by up to ~1.3e-9 (8.7e-9 relative on a margin,
# the embedded shape's 8 Mamba heads); a wrong mask or a lost token moves them by orders of magnitude more.
TOLERANCE = dict(rtol=2e-8, atol=5e-9)
# Gradients through Mamba-2's float32 internals: inputs that differ by that 1e-9 flip float32 roundings there
# (seen: 9.4e-6 relative, 1.2e-7 absolute); Llama stays float64 throughout and keeps TOLERANCE.
MAMBA_GRAD_TOLERANCE = dict(rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module", params=["llama", "nemotron_h"])
def models(request, tmp_path_factory):
    """The pairs, a float64 reference and a policy a little away from it (so rewards are not zero)."""
    paths = build_base(tmp_path_factory.mktemp(f"dpo_{request.param}"), family=request.param)
    tokenizer = AutoTokenizer.from_pretrained(paths["base"])
    bundle = load_bundle(paths["base"])
    tokenizer.chat_template = bundle.chat_template
    raw = [json.loads(line) for line in paths["pairs"].read_text().splitlines()]
    pairs, _, _ = tokenize_pairs(tokenizer, raw, bundle.system_prompt, 256, "drop")
    options = {"experts_implementation": "eager"} if request.param == "nemotron_h" else {}  # grouped_mm: no float64
    reference = AutoModelForCausalLM.from_pretrained(paths["base"], dtype=torch.float64, **options).eval()
    policy = copy.deepcopy(reference)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator, dtype=torch.float64))
    return {
        "family": request.param,
        "pairs": pairs,
        "pad": tokenizer.pad_token_id,
        "reference": reference,
        "policy": policy,
    }


def sequence_logprobs(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each row's summed log-prob of its labelled tokens, from the full logits (the naive path)."""
    logits, labels = logits[:, :-1], labels[:, 1:]
    logp = logits.log_softmax(-1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * (labels != IGNORE_INDEX)).sum(1)


def full_logits(model, input_ids: torch.Tensor) -> torch.Tensor:
    """Every position's logits, in the model's dtype (Nemotron-H's own forward returns them in float32)."""
    return model.get_output_embeddings()(model.get_decoder()(input_ids=input_ids).last_hidden_state)


def naive(models):
    """Loss, rewards and gradients the way the trainer computed them with a live reference."""
    pairs, policy = models["pairs"], copy.deepcopy(models["policy"])
    # chosen, rejected, chosen, ...: the fast path's row order (Nemotron-H's Mamba-2 reference code
    # computes in float32 inside, where another order of the rows would round the gradients differently)
    batch = collate([side for p in pairs for side in (p.chosen, p.rejected)], models["pad"])
    policy_sums = sequence_logprobs(full_logits(policy, batch["input_ids"]), batch["labels"])
    chosen, rejected = policy_sums[0::2], policy_sums[1::2]
    with torch.no_grad():
        reference_sums = sequence_logprobs(full_logits(models["reference"], batch["input_ids"]), batch["labels"])
    ref_chosen, ref_rejected = reference_sums[0::2], reference_sums[1::2]
    loss, reward_chosen, reward_rejected = dpo_sigmoid(chosen, rejected, ref_chosen, ref_rejected, BETA)
    loss.sum().backward()
    return loss.detach(), reward_chosen, reward_rejected, {n: p.grad for n, p in policy.named_parameters()}


def reference_scores(models) -> torch.Tensor:
    """(pairs, 2) as reference_logprobs.py scores them: packed where the model packs here, else padded."""
    requests = [scoring_request(side) for p in models["pairs"] for side in (p.chosen, p.rejected)]
    reference = models["reference"]
    if unpackable_reason(reference) is None:
        scores = packed_loglikelihood(reference, requests, pack_tokens=1024, pad_id=models["pad"], max_length=256)
    else:
        scores = loglikelihood(reference, requests, batch_size=3, pad_id=models["pad"], max_length=256)
    return torch.tensor([s.logprob for s in scores], dtype=torch.float64).view(-1, 2)


def fast(models, implementation: str, packed: bool):
    pairs, policy = models["pairs"], copy.deepcopy(models["policy"])
    head_loss.attach_logprobs(policy, implementation, chunk_tokens=7)
    batch = collate_pairs(pairs, models["pad"], pack_length=4096 if packed else None)
    boundaries = ("position_ids",) if packed else ()
    logprobs = policy(
        **backbone_inputs(batch, boundaries, varlen=False), positions=batch["positions"], targets=batch["targets"]
    )
    sums = sequence_sums(logprobs, batch)
    reference = reference_scores(models)
    loss, reward_chosen, reward_rejected = dpo_sigmoid(sums[0::2], sums[1::2], reference[:, 0], reference[:, 1], BETA)
    loss.sum().backward()
    return loss.detach(), reward_chosen, reward_rejected, {n: p.grad for n, p in policy.named_parameters()}


@pytest.mark.parametrize("implementation", ["logits", "chunked", "inplace", "inplace_chunked"])
def test_fast_path_equals_naive_padded(models, implementation):
    _assert_same(naive(models), fast(models, implementation, packed=False), models["family"])


def test_fast_path_equals_naive_packed(models):
    if models["family"] == "nemotron_h":
        pytest.skip("packed Mamba-2 rows need the CUDA kernels (test_gpu_kernels holds them)")
    _assert_same(naive(models), fast(models, "inplace", packed=True), models["family"])


def _assert_same(expected, actual, family: str):
    (loss, chosen, rejected, grads), (loss2, chosen2, rejected2, grads2) = expected, actual
    assert float(loss.abs().sum()) > 0 and float((chosen - rejected).abs().sum()) > 1e-3  # a non-trivial point
    torch.testing.assert_close(loss2, loss, **TOLERANCE)
    torch.testing.assert_close(chosen2, chosen, **TOLERANCE)
    torch.testing.assert_close(rejected2, rejected, **TOLERANCE)
    torch.testing.assert_close(chosen2 - rejected2, chosen - rejected, **TOLERANCE)  # the margins
    assert grads2.keys() == grads.keys()
    tolerance = MAMBA_GRAD_TOLERANCE if family == "nemotron_h" else TOLERANCE
    for name, grad in grads.items():
        torch.testing.assert_close(grads2[name], grad, **tolerance, msg=lambda m, n=name: f"{n}: {m}")


def test_packed_pairs_do_not_see_each_other(models):
    """Changing one pair's tokens changes no other pair's log-probs in the pack."""
    if models["family"] == "nemotron_h":
        pytest.skip("packed Mamba-2 rows need the CUDA kernels (test_gpu_kernels holds them)")
    pairs, policy = models["pairs"][:3], copy.deepcopy(models["policy"])
    head_loss.attach_logprobs(policy, "logits")

    def sums(batch_pairs):
        batch = collate_pairs(batch_pairs, models["pad"], pack_length=1024)
        with torch.no_grad():
            logprobs = policy(
                **backbone_inputs(batch, ("position_ids",), varlen=False),
                positions=batch["positions"],
                targets=batch["targets"],
            )
        return sequence_sums(logprobs, batch)

    before = sums(pairs)
    first = pairs[0]
    changed_ids = [
        (t + 1) % policy.config.vocab_size for t in first.chosen.input_ids
    ]  # every token of pair 0's chosen side
    changed = type(first)(type(first.chosen)(changed_ids, first.chosen.labels), first.rejected, 0, "changed")
    after = sums([changed, *pairs[1:]])
    assert not torch.allclose(after[0], before[0])  # the change is seen where it should be
    torch.testing.assert_close(after[1:], before[1:], rtol=0, atol=1e-12)
