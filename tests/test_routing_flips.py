"""benchmarks/routing_flips.py reads the experts a MoE model really routes to, and on CPU a batch mate moves none."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from lineage.modeling import CONFIG_CLASSES, SHAPES

_spec = importlib.util.spec_from_file_location(
    "routing_flips", Path(__file__).resolve().parents[1] / "benchmarks" / "routing_flips.py"
)
routing_flips = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(routing_flips)


def _model():
    torch.manual_seed(0)
    config = CONFIG_CLASSES["nemotron_h"](**SHAPES[("nemotron_h", "tiny")], vocab_size=256, use_cache=False)
    model = AutoModelForCausalLM.from_config(config).eval()
    for router in routing_flips._routers(model):  # a spread of router scores, as training leaves them (init: zeros)
        router.weight.data.normal_(0, 0.5)
    return model


def test_router_choices_are_the_routed_expert_sets():
    model = _model()
    ids = torch.randint(3, 256, (2, 9))
    routers = routing_flips._routers(model)
    choices = routing_flips.router_choices(model, ids, torch.ones_like(ids))
    assert len(choices) == len(routers) > 0
    k, experts = model.config.num_experts_per_tok, routers[0].num_experts
    assert all(c.shape == (2, 9, experts) and bool((c.sum(-1) == k).all()) for c in choices)
    routers[0].e_score_correction_bias.fill_(0.0)[experts - 1] = 10.0  # one expert wins every position
    assert bool(routing_flips.router_choices(model, ids, torch.ones_like(ids))[0][..., experts - 1].all())
    assert not bool(choices[0][..., experts - 1].all())


def test_a_batch_mate_moves_no_routing_on_cpu():
    model = _model()
    row, mate = torch.randint(3, 256, (11,)).tolist(), torch.randint(3, 256, (17,)).tolist()
    moved, positions, layers = routing_flips.routing_flips(model, row, mate, pad_id=0)
    assert (moved, positions) == (0, 11) and layers > 0
