"""Packed scoring gives the padded path's scores, keeps requests apart, and says where it cannot run.

On CPU a Llama's packed requests are kept apart by transformers' block-diagonal mask from the
restarting positions; the varlen kernel and the Mamba-2 kernels' seq_idx are checked on the GPU
(tests/test_gpu_decoding.py).
"""

import pytest
import torch
from _eval_fixtures import make_checkpoint, random_requests

from lineage.checkpoints.load import load_model
from lineage.evaluation.packed_scoring import (
    PAD_MULTIPLE,
    build_pack,
    first_fit,
    packed_loglikelihood,
    unpackable_reason,
)
from lineage.evaluation.scoring import loglikelihood, naive_loglikelihood, prepare_requests
from lineage.training.packing import PackingError


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    directory = make_checkpoint(tmp_path_factory.mktemp("llama") / "ckpt", seed=3, arch="llama")
    return load_model(directory, dtype=torch.float32).eval()


def _requests(n, seed):
    return random_requests(n, seed, context=(1, 30), continuation=(1, 12))


def test_first_fit_fills_bins_longest_first():
    assert first_fit([5, 9, 3, 7, 1], 10) == [[1, 4], [3, 2], [0]]
    assert first_fit([12, 2], 10) == [[0], [1]]  # a request over budget sits alone
    assert sorted(i for b in first_fit([4] * 7, 9) for i in b) == list(range(7))


def test_pack_marks_each_continuation_and_its_boundaries():
    prepared = prepare_requests([([7, 8], [9]), ([4, 5, 6], [1, 2])], None)
    pack = build_pack([1, 0], prepared, pad_id=0)
    assert pack.input_ids.shape == (1, PAD_MULTIPLE)
    assert pack.input_ids[0, :8].tolist() == [4, 5, 6, 1, 2, 7, 8, 9]
    assert pack.position_ids[0, :9].tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 0]  # the tail restarts too
    assert pack.cu_seq_lens.tolist() == [0, 5, 8, PAD_MULTIPLE]
    # position p predicts token p + 1: request 1's continuation from 2, request 0's from 6
    assert pack.scored.tolist() == [2, 3, 6]
    assert pack.targets.tolist() == [1, 2, 9]
    assert pack.longest == 5


@pytest.mark.parametrize("pack_tokens", [16, 64, 4096])
def test_packed_equals_padded_and_naive(llama, pack_tokens):
    requests = _requests(17, seed=1)
    naive = naive_loglikelihood(llama, requests)
    padded = loglikelihood(llama, requests, batch_size=4, pad_id=0)
    packed = packed_loglikelihood(llama, requests, pack_tokens=pack_tokens, pad_id=0)
    for p, b, n in zip(packed, padded, naive):
        assert p.logprob == pytest.approx(n.logprob, abs=1e-4)
        assert p.logprob == pytest.approx(b.logprob, abs=1e-4)
        assert (p.n_tokens, p.is_greedy, p.truncated) == (n.n_tokens, n.is_greedy, False)


def test_a_request_does_not_see_its_neighbours(llama):
    mine = ([5, 6, 7], [8, 9])  # the shortest: packed last, after every other request
    others = [(c + [4], k) for c, k in _requests(6, seed=4)]
    assert first_fit([5] + [len(c) + len(k) for c, k in others], 4096)[0][-1] == 0
    alone = packed_loglikelihood(llama, [mine], pack_tokens=4096)[0]
    for neighbours in (others, [(list(reversed(c)), k) for c, k in others]):
        together = packed_loglikelihood(llama, [mine] + neighbours, pack_tokens=4096)[0]
        assert together.logprob == pytest.approx(alone.logprob, abs=1e-5)


def test_packed_scores_are_the_same_on_every_run(llama):
    requests = _requests(9, seed=5)
    first = packed_loglikelihood(llama, requests, pack_tokens=64)
    assert packed_loglikelihood(llama, requests, pack_tokens=64) == first


def test_truncation_as_in_the_padded_path(llama):
    context, continuation = list(range(3, 40)), [5, 6, 7]
    (packed,) = packed_loglikelihood(llama, [(context, continuation)], pack_tokens=64, max_length=10)
    (padded,) = loglikelihood(llama, [(context, continuation)], max_length=10)
    assert packed.truncated and packed.logprob == pytest.approx(padded.logprob, abs=1e-5)


def test_mamba_model_on_cpu_is_refused_with_what_to_install(tmp_path):
    model = load_model(make_checkpoint(tmp_path / "ckpt", seed=3, arch="nemotron_h"), dtype=torch.float32).eval()
    reason = unpackable_reason(model)
    assert reason is not None and "mamba-ssm" in reason and "padded" in reason
    with pytest.raises(PackingError, match="causal-conv1d"):
        packed_loglikelihood(model, _requests(2, seed=0), pack_tokens=64)


def test_one_pass_logprobs_equal_log_softmax():
    from lineage.evaluation.token_logprobs import torch_logprobs

    torch.manual_seed(0)
    logits = torch.randn(6, 50).to(torch.bfloat16)
    logits[2, 7] = logits[2, 30] = logits[2].max() + 1  # a tie: the first index is the argmax
    targets = torch.tensor([0, 1, 30, 3, int(logits[4].float().argmax()), 49])
    logprobs, hits = torch_logprobs(logits, targets)
    reference = torch.log_softmax(logits.float(), dim=-1)
    assert torch.allclose(logprobs, reference[torch.arange(6), targets], atol=1e-6)
    assert hits.tolist() == [t == int(r.argmax()) for t, r in zip(targets.tolist(), logits.float())]
    assert not hits[2] and hits[4]
