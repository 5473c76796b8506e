"""The static-cache decoder behind `eval.cache: graph`, on CPU (its steps run eagerly there).

What the GPU adds, capture and replay, is checked by tests/test_gpu_decoding.py; here: the
decoder's own bookkeeping (fixed batch, stop checks, refusals) against generate's output.
"""

from types import SimpleNamespace

import pytest
import torch
from _eval_fixtures import make_checkpoint, random_prompts

from lineage.checkpoints.load import load_model
from lineage.evaluation.decoders import left_padded
from lineage.evaluation.generation import generate_greedy, naive_generate
from lineage.evaluation.graph_decoding import GraphDecoder, unsupported_reason


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    directory = make_checkpoint(tmp_path_factory.mktemp("llama") / "ckpt", seed=5, arch="llama")
    return load_model(directory, dtype=torch.float32).eval()


def _prompts(n, seed):
    return random_prompts(n, seed, lengths=(2, 20))


def test_decoding_stops_once_every_row_has_stopped(model):
    """With every row's first new token as a stop token, the host check ends the batch early."""
    prompts = _prompts(4, seed=1)
    first = [g.token_ids[0] for g in naive_generate(model, prompts, max_new_tokens=1, stop_ids=[])]
    decoder = GraphDecoder(model, batch_size=4, cache_len=64, max_new_tokens=40, stop_ids=first, check_every=2)
    ids, mask = left_padded(prompts, 0)
    new = decoder.decode(ids, mask)
    assert new.shape == (4, 2), "decoding should stop at the first check after every row stopped"
    assert new[:, 0].tolist() == first


def test_rows_do_not_see_the_batch_filler_or_each_other(model):
    """A prompt decodes the same alone (the batch filled with copies) and among others."""
    prompts = _prompts(5, seed=2)
    decoder = GraphDecoder(model, batch_size=5, cache_len=60, max_new_tokens=20, stop_ids=[])
    together = decoder.decode(*left_padded(prompts, 0))
    for row, prompt in enumerate(prompts):
        alone = decoder.decode(*left_padded([prompt], 0))
        assert alone[0].tolist() == together[row].tolist()


def test_matches_generate_across_batches_of_one_decoder(model):
    prompts = _prompts(9, seed=3)
    reference = generate_greedy(model, prompts, max_new_tokens=15, stop_ids=[7, 11], pad_id=0, batch_size=4)
    assert (
        generate_greedy(
            model, prompts, max_new_tokens=15, stop_ids=[7, 11], pad_id=0, batch_size=4, cache="graph", bucket=8
        )
        == reference
    )


def test_a_batch_longer_than_the_cache_is_refused(model):
    decoder = GraphDecoder(model, batch_size=2, cache_len=16, max_new_tokens=8, stop_ids=[])
    with pytest.raises(ValueError, match="does not fit"):
        decoder.decode(*left_padded([[5] * 9], 0))


def test_models_it_cannot_mask_are_refused_with_the_setting_to_change():
    flash = SimpleNamespace(
        config=SimpleNamespace(_attn_implementation="flash_attention_2", layer_types=["full_attention"])
    )
    assert "flash_attention_2" in unsupported_reason(flash)
    sliding = SimpleNamespace(
        config=SimpleNamespace(_attn_implementation="sdpa", layer_types=["sliding_attention", "full_attention"])
    )
    assert "sliding_attention" in unsupported_reason(sliding)
    with pytest.raises(ValueError, match="eval.cache"):
        GraphDecoder(sliding, batch_size=1, cache_len=8, max_new_tokens=2, stop_ids=[])
