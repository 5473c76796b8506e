"""The CUDA-graph decoder on a GPU (skipped without one): it captures, and replaying the captured
step gives exactly the tokens of running the same step eagerly.

- Llama in float32: the replayed decode also equals transformers' generate (same scores as the
  dynamic cache, which tests/test_batched_inference.py ties to one-prompt-at-a-time decoding).
- Llama and the hybrid Mamba-2/attention/MoE family in bfloat16: replay equals the eager steps
  bit for bit (the same kernels run; rounding does not depend on how they were launched). The
  hybrid model has the card Base's widths (one Mamba-2, one attention and one MoE layer, vocabulary
  4,096): the Mamba kernels, where installed, refuse the pico model's narrow channels.
Run on a GPU machine as: python -m pytest tests/test_gpu_decoding.py
"""

from __future__ import annotations

import random

import pytest
import torch
from _eval_fixtures import cuda_model, random_prompts

from lineage.evaluation.continuous_decoding import ContinuousDecoder
from lineage.evaluation.decoders import left_padded
from lineage.evaluation.generation import generate, generate_greedy
from lineage.evaluation.graph_decoding import GraphDecoder

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _prompts(n=10, seed=0):
    return random_prompts(n, seed, lengths=(4, 40))


def _decode(model, prompts, *, capture: bool):
    decoder = GraphDecoder(model, batch_size=4, cache_len=48 + 40, max_new_tokens=40, stop_ids=[])
    decoder.advance.capture = capture
    out = [decoder.decode(*left_padded(prompts[i : i + 4], 0, 16)) for i in range(0, len(prompts), 4)]
    return decoder, torch.cat(out).tolist()


def test_float32_graph_decoding_equals_generate(tmp_path):
    model = cuda_model(tmp_path, "llama", torch.float32)
    prompts = _prompts()
    reference = generate_greedy(model, prompts, max_new_tokens=40, stop_ids=[], pad_id=0, batch_size=4)
    decoder, replayed = _decode(model, prompts, capture=True)
    assert decoder.advance.graph is not None, "the decode step was not captured"
    assert replayed == [list(g.token_ids) for g in reference]


@pytest.mark.parametrize("arch", ["llama", "nemotron_h"])
def test_bfloat16_replay_equals_eager_steps(tmp_path, arch):
    model = cuda_model(tmp_path, arch, torch.bfloat16)
    prompts = _prompts(seed=1)
    decoder, replayed = _decode(model, prompts, capture=True)
    assert decoder.advance.graph is not None, "the decode step was not captured"
    _, eager = _decode(model, prompts, capture=False)
    assert replayed == eager


def _continuous(model, prompts, limits, *, capture: bool):
    decoder = ContinuousDecoder(model, batch_size=4, cache_len=40 + 40, max_new_tokens=40, stop_ids=[])
    decoder.advance.capture = capture
    return decoder, decoder.decode(prompts, limits)


@pytest.mark.parametrize("arch", ["llama", "nemotron_h"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_continuous_batching_replay_equals_eager_steps(tmp_path, arch, dtype):
    """Rows refilled as their answers end (10 prompts through 4 rows): the captured step equals the eager
    one bit for bit. In float32 the MoE's experts are captured too (batched_mm for the step)."""
    model = cuda_model(tmp_path, arch, dtype)
    prompts = _prompts(seed=2)
    limits = [random.Random(3).randrange(1, 41) for _ in prompts]
    decoder, replayed = _continuous(model, prompts, limits, capture=True)
    assert decoder.advance.graph is not None, "the decode step was not captured"
    _, eager = _continuous(model, prompts, limits, capture=False)
    assert replayed == eager
    assert [len(tokens) for tokens in replayed] == limits


def test_float32_continuous_batching_equals_generate(tmp_path):
    model = cuda_model(tmp_path, "llama", torch.float32)
    prompts = _prompts(seed=4)
    reference = generate_greedy(model, prompts, max_new_tokens=40, stop_ids=[], pad_id=0, batch_size=4)
    _, replayed = _continuous(model, prompts, [40] * len(prompts), capture=True)
    assert replayed == [list(g.token_ids) for g in reference]


@pytest.mark.parametrize("arch", ["llama", "nemotron_h"])
def test_float32_sampling_replayed_equals_generate(tmp_path, arch, capsys):
    """The verifier rounds' seeded draws (temperature, top-p, per-prompt noise) inside the captured step
    are generate()'s draws for the same seed."""
    from lineage.evaluation.seeded_sampling import SeededSampler

    model = cuda_model(tmp_path, arch, torch.float32)
    prompts = _prompts(n=6, seed=2)
    draws = {}
    for cache in ("dynamic", "graph"):
        out = generate(
            model, prompts, SeededSampler(5, temperature=0.8, top_p=0.9, samples=4), max_new_tokens=24,
            stop_ids=[], pad_id=0, batch_size=3, cache=cache,
        )  # fmt: skip
        draws[cache] = [[g.token_ids for g in row] for row in out]
    assert "capture failed" not in capsys.readouterr().err, "the sampling step was not captured"
    assert draws["graph"] == draws["dynamic"]
    assert len({answer for row in draws["graph"] for answer in row}) > 12, "the draws differ"
