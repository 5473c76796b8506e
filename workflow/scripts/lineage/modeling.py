"""Model shapes built from a config (no download), and the parameter counts that MFU needs.

The embedded scale uses a tiny model of the card's family: Nemotron-H, a hybrid of Mamba-2
mixers, attention and mixture-of-experts layers. The 1B Llama shape (hidden 2048, 16 layers,
32 heads / 8 kv heads, intermediate 8192, tied embeddings) is the dense model used to measure
GPU throughput. Vocabulary and special-token ids always come from the tokenizer the model
is built for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import torch
from transformers import LlamaConfig, NemotronHConfig, PreTrainedConfig

# layers_block_type names in transformers 5: linear_attention = Mamba-2 mixer, full_attention,
# moe (routed + shared experts), mlp.
SHAPES: dict[tuple[str, str], dict] = {
    ("nemotron_h", "tiny"): dict(
        hidden_size=64,
        layers_block_type=["linear_attention", "moe", "full_attention", "moe"],
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        mamba_num_heads=4,
        mamba_head_dim=16,
        n_groups=1,
        ssm_state_size=16,
        conv_kernel=4,
        chunk_size=64,
        n_routed_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=64,
        moe_shared_expert_intermediate_size=64,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
    # The card's Base shape, for planning only (built on the meta device, never trained here):
    # assumed from the public Nemotron-3 Nano 30B-A3B config, as the card names the Base but not its
    # sizes: 52 layers (23 Mamba-2, 23 MoE, 6 attention), 128 routed experts, top-6.
    ("nemotron_h", "30b_a3b"): dict(
        hidden_size=2688,
        layers_block_type=[
            {"M": "linear_attention", "E": "moe", "*": "full_attention"}[c]
            for c in "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
        ],
        num_attention_heads=32,
        num_key_value_heads=2,
        head_dim=128,
        intermediate_size=1856,
        mamba_num_heads=64,
        mamba_head_dim=64,
        n_groups=8,
        ssm_state_size=128,
        conv_kernel=4,
        chunk_size=128,
        n_routed_experts=128,
        num_experts_per_tok=6,
        moe_intermediate_size=1856,
        moe_shared_expert_intermediate_size=3712,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    ),
    ("llama", "tiny"): dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=256,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    ),
    ("llama", "1b"): dict(
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
CONFIG_CLASSES = {"nemotron_h": NemotronHConfig, "llama": LlamaConfig}


def build_config(family: str, size: str, tokenizer) -> PreTrainedConfig:
    """The config of a named shape, with the tokenizer's vocabulary and special-token ids."""
    if (family, size) not in SHAPES:
        known = ", ".join(f"{f}/{s}" for f, s in SHAPES)
        raise ValueError(f"no model shape {family}/{size}; known shapes: {known}")
    return CONFIG_CLASSES[family](
        **SHAPES[(family, size)],
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )


def tied_duplicates(model: torch.nn.Module) -> set[str]:
    """Names of parameters that are a second name for an earlier one (tied embeddings).

    safetensors refuses shared storage, and transformers re-ties these on load, so they are
    left out of saved state dicts.
    """
    seen: dict[int, str] = {}
    duplicates = set()
    for name, param in model.named_parameters(remove_duplicate=False):
        if id(param) in seen:
            duplicates.add(name)
        else:
            seen[id(param)] = name
    return duplicates


def count_params(model: torch.nn.Module) -> tuple[int, int]:
    """(total, active per token). Routed experts count only top-k of n toward the active share.

    Experts are recognised as 3-D parameters of a module whose class name ends in "Experts"
    (the fused layout of transformers 5); embeddings count once even when tied.
    """
    config = getattr(model, "config", None)
    routed = getattr(config, "n_routed_experts", None) or getattr(config, "num_local_experts", None)
    top_k = getattr(config, "num_experts_per_tok", None)
    total = active = 0
    for module in model.modules():
        is_experts = type(module).__name__.endswith("Experts") and routed and top_k
        for param in module.parameters(recurse=False):
            n = param.numel()
            total += n
            active += n * top_k // routed if is_experts and param.dim() == 3 else n
    return total, active


def state_fingerprint(state_dict: Mapping[str, torch.Tensor]) -> str:
    """sha256 over names, dtypes, shapes and bytes of every tensor, in name order."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().contiguous().cpu()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()
