"""The card's Base as the shapes take it: its layer pattern, its widths and its Mamba-2 and expert sizes.

Nemotron-H's shapes are the card's at other depths or widths; Qwen3-MoE's stand-in keeps its attention
and routed experts. Assumed from the public Nemotron-3 Nano 30B-A3B config, as the card names the Base but
not its sizes.
"""

from __future__ import annotations

# layers_block_type names in transformers 5: linear_attention = Mamba-2 mixer, full_attention,
# moe (routed + shared experts), mlp.
CARD_LAYERS = {"M": "linear_attention", "E": "moe", "*": "full_attention"}
# The card Base's 52 layers (23 Mamba-2, 23 MoE, 6 attention), by the letters above
CARD_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
# The card Base's widths, heads and experts, shared by its reduced-depth variants.
CARD_WIDTHS = dict(
    hidden_size=2688,
    num_attention_heads=32,
    num_key_value_heads=2,
    head_dim=128,
    intermediate_size=1856,
    num_experts_per_tok=6,
    moe_intermediate_size=1856,
    max_position_embeddings=4096,
    tie_word_embeddings=False,
)
CARD_MAMBA = dict(
    mamba_num_heads=64,
    mamba_head_dim=64,
    n_groups=8,
    ssm_state_size=128,
    conv_kernel=4,
    chunk_size=128,
    n_routed_experts=128,
    moe_shared_expert_intermediate_size=3712,
)
