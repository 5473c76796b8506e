"""Packed scoring on a GPU (skipped without one): the varlen kernel and the Mamba-2 kernels'
seq_idx keep packed requests apart, and the scores equal the padded path's.

The hybrid model has the card Base's widths (one Mamba-2, one attention and one MoE layer,
vocabulary 4,096), as in tests/test_gpu_decoding.py; its case needs mamba-ssm and causal-conv1d.
Run on a GPU machine as: python -m pytest tests/test_gpu_scoring.py
"""

from __future__ import annotations

import importlib.util

import pytest
import torch
from _eval_fixtures import cuda_model, random_requests

from lineage.evaluation.generation import generate_greedy
from lineage.evaluation.packed_scoring import attention_for_packing, first_fit, packed_loglikelihood, unpackable_reason
from lineage.evaluation.scoring import loglikelihood
from lineage.training.packing import PackingError

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
ARCHS = [
    "llama",
    pytest.param(
        "nemotron_h",
        marks=pytest.mark.skipif(importlib.util.find_spec("mamba_ssm") is None, reason="needs the Mamba-2 kernels"),
    ),
]


def _requests(n, seed):
    return random_requests(n, seed, context=(8, 300), continuation=(1, 200))


@pytest.fixture(scope="module", params=ARCHS)
def model(request, tmp_path_factory):
    return cuda_model(tmp_path_factory.mktemp(request.param), request.param, torch.float16)


def test_packable_through_the_varlen_kernel(model):
    assert unpackable_reason(model) is None
    with attention_for_packing(model) as varlen:
        assert varlen and model.config._attn_implementation == "varlen"
    assert model.config._attn_implementation != "varlen"  # restored for generation


def test_generation_after_packed_scoring_is_unchanged(model):
    """One eval job scores (packed) and then generates (graph decoder) with the same loaded model."""
    prompts = [context for context, _ in _requests(6, seed=2)]
    before = generate_greedy(model, prompts, max_new_tokens=12, stop_ids=[], pad_id=0, batch_size=3, cache="graph")
    packed_loglikelihood(model, _requests(6, seed=3), pack_tokens=2048)
    after = generate_greedy(model, prompts, max_new_tokens=12, stop_ids=[], pad_id=0, batch_size=3, cache="graph")
    assert after == before


def test_float32_is_scored_padded_with_a_reason(tmp_path):
    model = cuda_model(tmp_path, "llama", torch.float32)
    assert "bfloat16 or float16" in unpackable_reason(model)
    with pytest.raises(PackingError, match="score padded"):
        packed_loglikelihood(model, _requests(2, seed=0), pack_tokens=2048)


def test_packed_equals_padded(model):
    """float16, a varlen dtype with float32's exponent range and finer rounding than bfloat16."""
    requests = _requests(24, seed=1)
    padded = loglikelihood(model, requests, batch_size=8, pad_id=0)
    packed = packed_loglikelihood(model, requests, pack_tokens=2048, pad_id=0)
    worst = max(abs(p.logprob - b.logprob) / p.n_tokens for p, b in zip(packed, padded))
    # Llama: under 1e-3; Nemotron-H's scan splits a request into chunks at other offsets when packed (1.5e-3)
    assert worst < 3e-3, f"packed and padded differ by {worst:.1e} per token"
    assert [p.n_tokens for p in packed] == [b.n_tokens for b in padded]


def test_a_request_does_not_see_its_neighbours(model):
    mine = ([5, 6, 7, 8], [9, 10, 11])  # the shortest: packed after every other request
    others = _requests(8, seed=4)
    assert first_fit([7] + [len(c) + len(k) for c, k in others], 4096)[0][-1] == 0
    alone = packed_loglikelihood(model, [mine], pack_tokens=4096)[0].logprob
    moved = [
        abs(packed_loglikelihood(model, [mine] + neighbours, pack_tokens=4096)[0].logprob - alone)
        for neighbours in (others, [(list(reversed(c)), k) for c, k in others])
    ]
    # what a leak would do: the same neighbours as visible context
    prefix = [token for context, continuation in others for token in context + continuation]
    leaked = abs(loglikelihood(model, [(prefix + mine[0], mine[1])])[0].logprob - alone)
    assert max(moved) < 2e-3 < leaked / 3, f"packed score moved by {moved}; seeing the neighbours moves it {leaked:.1e}"


def test_triton_logprobs_equal_torch_at_a_real_vocabulary():
    from lineage.evaluation.token_logprobs import _kernel, target_logprobs, torch_logprobs

    assert _kernel() is not None, "triton does not import: the one-pass kernel is not used"
    torch.manual_seed(0)
    logits = (torch.randn(1000, 128_256, device="cuda") * 3).to(torch.bfloat16)
    logits[5, 9] = logits[5, 70_000] = logits[5].max() + 1  # a tie across blocks: the first index wins
    targets = torch.randint(0, 128_256, (1000,), device="cuda")
    targets[:100] = logits[:100].float().argmax(-1)
    targets[5] = 70_000
    ours, ours_hits = target_logprobs(logits, targets)
    theirs, their_hits = torch_logprobs(logits, targets)
    assert (ours - theirs).abs().max() < 1e-4
    assert torch.equal(ours_hits, their_hits) and int(ours_hits.sum()) >= 99 and not ours_hits[5]
