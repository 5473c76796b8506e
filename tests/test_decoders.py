"""The decoder interface: which cache runs which picker, and the one seeded draw both kinds of decoder make.

That every cache and picker gives the tokens of one-prompt-at-a-time decoding is checked on models by
tests/test_batched_inference.py, tests/test_graph_decoding.py and tests/test_verifier_pairs.py.
"""

import pytest
import torch

from lineage.evaluation.decoders import CACHES, SAMPLING_CACHES, decoder_kind
from lineage.evaluation.generation import generate
from lineage.evaluation.pickers import GREEDY
from lineage.evaluation.seeded_sampling import SeededSampler


def test_generate_and_the_static_decoders_draw_the_same_noise():
    """The logits processor generate() runs and the call a captured step makes are one computation."""
    sampler = SeededSampler(7, temperature=0.7, top_p=0.8, samples=2)
    logits = torch.randn(6, 50, generator=torch.Generator().manual_seed(0))
    keys = torch.tensor([6, 7, 8, 9])
    (processor,) = sampler.processors(keys, prompt_width=5)
    through_generate = processor(torch.zeros((4, 5 + 3), dtype=torch.long), logits[:4].clone())
    sampler.bind(6, torch.device("cpu"))  # a fixed batch of 6 rows, 2 of them filler
    sampler.set_keys(keys)
    in_a_step = sampler(logits.clone(), torch.tensor(3))
    assert torch.equal(through_generate, in_a_step[:4])
    filler = sampler(logits[3:4].expand(6, -1).clone(), 3)[4]
    assert torch.equal(filler, in_a_step[3]), "a batch's filler rows draw as its last row"
    assert GREEDY.processors(keys, 5) == [] and GREEDY(logits, 0) is logits


def test_each_cache_refuses_what_it_cannot_run():
    assert set(CACHES) == {"dynamic", "static", "graph", "continuous"}
    assert SAMPLING_CACHES == ("dynamic", "static", "graph")
    with pytest.raises(ValueError, match="sample with cache dynamic, static, graph"):
        decoder_kind("continuous", SeededSampler(1, 1.0, 1.0))
    with pytest.raises(ValueError, match="expected one of dynamic, static, graph, continuous"):
        decoder_kind("paged", GREEDY)
    with pytest.raises(ValueError, match="limits: one per prompt, with cache graph or continuous"):
        generate(None, [[1]], max_new_tokens=2, stop_ids=[], pad_id=0, limits=[1])
    with pytest.raises(ValueError, match=r"need >= 1, > 0, \(0, 1\]"):
        SeededSampler(1, temperature=0.0, top_p=1.0)
