"""Batched scoring and generation give what one-item-at-a-time inference gives, on pico models.

Covers padding (prompts of different lengths in one batch), rows that stop at different
steps, the one-forward multiple-choice path, and the hybrid Mamba/attention family of the
card's base model as well as a plain Llama.
"""

import random

import pytest
import torch
from _eval_fixtures import make_checkpoint, random_prompts

from lineage.checkpoints.load import load_model
from lineage.evaluation.generation import Generation, generate_greedy, naive_generate, sequential_generate
from lineage.evaluation.scoring import choice_logprobs, loglikelihood, naive_loglikelihood

ARCHS = ["llama", "nemotron_h"]


@pytest.fixture(scope="module", params=ARCHS)
def model(request, tmp_path_factory):
    directory = make_checkpoint(tmp_path_factory.mktemp(request.param) / "ckpt", seed=3, arch=request.param)
    return load_model(directory, dtype=torch.float32).eval()


def _prompts(n=7, seed=0):
    return random_prompts(n, seed, lengths=(2, 24))


def test_loglikelihood_batched_equals_naive(model):
    rng = random.Random(1)
    requests = [(p, [rng.randrange(3, 300) for _ in range(rng.randrange(1, 9))]) for p in _prompts(9)]
    naive = naive_loglikelihood(model, requests)
    for batch_size, max_tokens in ((1, None), (4, None), (16, None), (16, 60)):
        batched = loglikelihood(model, requests, batch_size=batch_size, pad_id=0, max_batch_tokens=max_tokens)
        for b, n in zip(batched, naive):
            assert b.logprob == pytest.approx(n.logprob, abs=1e-4)
            assert (b.n_tokens, b.is_greedy) == (n.n_tokens, n.is_greedy)


def test_token_budget_shrinks_batches():
    from lineage.evaluation.scoring import batches

    lengths = [30, 25, 20, 10, 10, 5]
    assert batches(range(6), lengths, 4, None) == [[0, 1, 2, 3], [4, 5]]
    assert batches(range(6), lengths, 4, 60) == [[0, 1], [2, 3, 4], [5]]
    assert batches(range(6), lengths, 4, 10) == [[0], [1], [2], [3], [4], [5]]  # an over-budget row runs alone


def test_choice_path_equals_full_scoring(model):
    prompts = _prompts(6, seed=2)
    choices = [10, 11, 12, 13]
    fast = choice_logprobs(model, prompts, choices, batch_size=4, pad_id=0)
    naive = naive_loglikelihood(model, [(p, [c]) for p in prompts for c in choices])
    assert [x for row in fast for x in row] == pytest.approx([s.logprob for s in naive], abs=1e-4)


def test_choice_path_with_shared_tail(model):
    """The tokens lm-eval moves from the prompt into every continuation are scored once and added."""
    prompts = _prompts(5, seed=6)
    tails = [1, 2, 1, 3, 1]
    choices = [20, 21, 22, 23]
    fast = choice_logprobs(model, prompts, choices, scored_tail=tails, batch_size=2, pad_id=0)
    naive = naive_loglikelihood(model, [(p[:-t], p[-t:] + [c]) for p, t in zip(prompts, tails) for c in choices])
    assert [x for row in fast for x in row] == pytest.approx([s.logprob for s in naive], abs=1e-4)


def test_left_truncation_keeps_the_continuation(model):
    context, continuation = list(range(3, 40)), [5, 6, 7]
    (score,) = loglikelihood(model, [(context, continuation)], max_length=10, pad_id=0)
    (reference,) = naive_loglikelihood(model, [(context[-7:], continuation)])
    assert score.truncated and score.logprob == pytest.approx(reference.logprob, abs=1e-4)


def _stop_tokens_at_different_steps(reference: list[Generation]) -> list[int]:
    """Stop ids taken from the unconstrained outputs so that rows end at different steps."""
    stops = []
    for step, row in zip((1, 4, 7), reference):
        if len(row.token_ids) > step:
            stops.append(row.token_ids[step])
    return stops


def test_generation_batched_equals_naive_with_ragged_stops(model):
    prompts = _prompts(7, seed=4)
    free = naive_generate(model, prompts, max_new_tokens=12, stop_ids=[])
    stops = _stop_tokens_at_different_steps(free)
    reference = naive_generate(model, prompts, max_new_tokens=12, stop_ids=stops)
    lengths = {len(g.token_ids) for g in reference}
    assert len(lengths) > 1, "the chosen stop tokens should end rows at different steps"
    for batch_size in (3, 7):
        assert (
            generate_greedy(model, prompts, max_new_tokens=12, stop_ids=stops, pad_id=0, batch_size=batch_size)
            == reference
        )
    assert sequential_generate(model, prompts, max_new_tokens=12, stop_ids=stops, pad_id=0) == reference
    # a static cache and prompts padded to buckets of 16 (what lets a GPU compile few decode shapes)
    assert (
        generate_greedy(
            model, prompts, max_new_tokens=12, stop_ids=stops, pad_id=0, batch_size=3, cache="static", bucket=16
        )
        == reference
    )
    # the static cache decoded by our own step loop (a replayed CUDA graph on GPUs), with a partial last batch
    for batch_size, bucket in ((3, 16), (7, 1)):
        assert (
            generate_greedy(
                model,
                prompts,
                max_new_tokens=12,
                stop_ids=stops,
                pad_id=0,
                batch_size=batch_size,
                cache="graph",
                bucket=bucket,
            )
            == reference
        )


def test_continuous_batching_equals_naive_whatever_shares_the_batch(model):
    """Rows refilled as answers end (rows of 1, 2 and 3 for 9 prompts): every item's tokens are those of
    decoding it alone, with stops ending rows at different steps and rows finishing by length."""
    prompts = _prompts(9, seed=8)
    free = naive_generate(model, prompts, max_new_tokens=12, stop_ids=[])
    stops = _stop_tokens_at_different_steps(free)
    reference = naive_generate(model, prompts, max_new_tokens=12, stop_ids=stops)
    assert {g.finish_reason for g in reference} == {"stop", "length"}
    for batch_size in (1, 2, 3):
        got = generate_greedy(
            model, prompts, max_new_tokens=12, stop_ids=stops, pad_id=0, batch_size=batch_size, cache="continuous"
        )
        assert got == reference, f"batch_size {batch_size}"
    # a prompt that stops at its first token, and a length of one token
    first = [free[0].token_ids[0]]
    assert generate_greedy(
        model, prompts[:3], max_new_tokens=12, stop_ids=first, pad_id=0, batch_size=2, cache="continuous"
    ) == naive_generate(model, prompts[:3], max_new_tokens=12, stop_ids=first)
    assert generate_greedy(
        model, prompts[:3], max_new_tokens=1, stop_ids=[], pad_id=0, batch_size=2, cache="continuous"
    ) == naive_generate(model, prompts[:3], max_new_tokens=1, stop_ids=[])


def test_a_length_of_its_own_per_prompt(model):
    """Per-prompt lengths (what the throughput benchmark gives its items): each ends where decoding it
    alone with that length ends, in fixed batches and with rows refilled."""
    prompts = _prompts(7, seed=9)
    limits = [1, 9, 3, 12, 5, 2, 7]
    stops = [naive_generate(model, prompts[:1], max_new_tokens=12, stop_ids=[])[0].token_ids[4]]
    reference = [naive_generate(model, [p], max_new_tokens=n, stop_ids=stops)[0] for p, n in zip(prompts, limits)]
    for cache in ("graph", "continuous"):
        got = generate_greedy(
            model, prompts, max_new_tokens=12, stop_ids=stops, pad_id=0, batch_size=3, cache=cache, limits=limits
        )
        assert got == reference, cache


def test_generation_finish_reasons(model):
    prompts = _prompts(3, seed=5)
    free = naive_generate(model, prompts, max_new_tokens=5, stop_ids=[])
    stop = free[0].token_ids[0]
    out = generate_greedy(model, prompts, max_new_tokens=5, stop_ids=[stop], pad_id=0, batch_size=3)
    assert out[0] == Generation((), "stop", stop)
    for got, unconstrained in zip(out[1:], free[1:]):
        tokens = unconstrained.token_ids
        if stop in tokens:
            assert got == Generation(tokens[: tokens.index(stop)], "stop", stop)
        else:
            assert got == Generation(tokens, "length") and len(tokens) == 5
