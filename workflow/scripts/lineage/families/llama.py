"""Llama: the dense attention-only decoder used to measure GPU throughput, and the small shapes of the tests.

The decoders that share its layer layout (attention, then a dense SwiGLU MLP whose down_proj comes last:
Mistral, Qwen2, Qwen3) are read as Llama is: their checkpoints pack and checkpoint the same way.
"""

from __future__ import annotations

from transformers import LlamaConfig

from lineage.families.family import Family

SHAPES = {
    "tiny": dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=256,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    ),
    # The ~100M dense shape of benchmarks/eval.py (124.7M there with its 32,000 vocabulary), for
    # benchmarks that need a real checkpoint directory (benchmarks/eval_vs_lm_eval.py).
    "100m": dict(
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        num_key_value_heads=4,
        intermediate_size=2048,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    ),
    # The 1B shape (hidden 2048, 16 layers, 32 heads / 8 kv heads, intermediate 8192, tied embeddings): the
    # dense model used to measure GPU throughput.
    "1b": dict(
        hidden_size=2048,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=8192,
        max_position_embeddings=4096,
        rope_parameters={"rope_theta": 500000.0, "rope_type": "default"},
        tie_word_embeddings=True,
    ),
}


def block_types() -> tuple[type, ...]:
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    from transformers.models.mistral.modeling_mistral import MistralDecoderLayer
    from transformers.models.qwen2.modeling_qwen2 import Qwen2DecoderLayer
    from transformers.models.qwen3.modeling_qwen3 import Qwen3DecoderLayer

    return (LlamaDecoderLayer, MistralDecoderLayer, Qwen2DecoderLayer, Qwen3DecoderLayer)


def layer_kinds(config) -> list[str]:
    """Every layer is attention, then a SwiGLU MLP."""
    return ["attention_mlp"] * config.num_hidden_layers


FAMILY = Family(
    name="llama",
    model_types=("llama", "mistral", "qwen2", "qwen3"),
    config_class=LlamaConfig,
    shapes=SHAPES,
    block_types=block_types,
    layer_kinds=layer_kinds,
)
