"""Qwen3-MoE: an attention-only mixture of experts, for measuring MoE training where the Mamba kernels are missing.

Its blocks are attention, then a sparse MoE (router and fused SwiGLU experts, no shared expert) or, in
`mlp_only_layers`, a dense MLP whose down_proj comes last. Packed rows need only their positions.
"""

from __future__ import annotations

from transformers import Qwen3MoeConfig

from lineage.families.card import CARD_WIDTHS
from lineage.families.family import Family

SHAPES = {
    # The card's attention and routed experts (128 of 1856 wide, top-6; no shared expert). Its experts are gated
    # (SwiGLU: 3 matrices, Nemotron-H's have 2), so a layer holds 1.9B parameters; 4 layers (7.8B) is what fits
    # 2 GPUs of 139 GiB at 16 bytes per parameter with room for activations.
    "card_experts_4l": dict(
        num_hidden_layers=4,
        num_experts=128,
        norm_topk_prob=True,
        **CARD_WIDTHS,
    ),
    "tiny": dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        norm_topk_prob=True,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
}


def block_types() -> tuple[type, ...]:
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeDecoderLayer

    return (Qwen3MoeDecoderLayer,)


def expert_types() -> tuple[type, ...]:
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeExperts

    return (Qwen3MoeExperts,)


def layer_kinds(config) -> list[str]:
    """Sparse layers where transformers builds them (every `decoder_sparse_step`-th, less `mlp_only_layers`)."""
    return [
        "attention_moe"
        if i not in config.mlp_only_layers and (i + 1) % config.decoder_sparse_step == 0
        else "attention_mlp"
        for i in range(config.num_hidden_layers)
    ]


FAMILY = Family(
    name="qwen3_moe",
    model_types=("qwen3_moe",),
    config_class=Qwen3MoeConfig,
    shapes=SHAPES,
    block_types=block_types,
    layer_kinds=layer_kinds,
    expert_types=expert_types,
    expert_count_key="num_experts",
)
