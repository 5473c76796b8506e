"""A pico checkpoint and small item files for the evaluation tests; built in a second, offline.

The checkpoint has everything a lineage checkpoint has: a byte-level BPE tokenizer with the
ChatML special tokens, `chat_template.jinja`, `system_prompt.txt`, a greedy
`generation_config.json`, sharded safetensors and `lineage.json` (via save_checkpoint).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SYSTEM_PROMPT = "You are a careful assistant.\n"
CORPUS = [
    "The quick brown fox jumps over the lazy dog. Answer: A, B, C or D.",
    "Question: Tom has 3 apples and buys 4 more. How many apples? 3 + 4 = 7. #### 7",
    "Write a short poem about the sea. Use at least 3 sentences. Dr. Smith left at 3 p.m.",
    "system user assistant You are a careful assistant. The following are multiple choice questions.",
]


def build_tokenizer(directory: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    hf.chat_template = CHAT_TEMPLATE
    hf.save_pretrained(directory)
    return hf


def make_checkpoint(directory: Path, *, seed: int = 0, run: str = "pico", arch: str = "llama") -> Path:
    """Write a random-init pico checkpoint to `directory` and return it."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    from lineage.checkpoints.directory import lineage_record, save_checkpoint

    src = directory.parent / f".{directory.name}-companions"
    src.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(src)
    (src / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    (src / "system_prompt.txt").write_text(SYSTEM_PROMPT)
    (src / "generation_config.json").write_text(
        json.dumps(
            {
                "do_sample": False,
                "eos_token_id": [tok.convert_tokens_to_ids("<|im_end|>")],
                "pad_token_id": tok.pad_token_id,
            }
        )
    )
    if arch == "llama":
        config = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=1024,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            bos_token_id=None,
            tie_word_embeddings=False,
        )
    elif arch == "nemotron_h":
        from transformers import NemotronHConfig

        config = NemotronHConfig(
            vocab_size=len(tok),
            hidden_size=32,
            layers_block_type=["mamba", "attention", "mlp"],
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            intermediate_size=64,
            mamba_num_heads=4,
            mamba_head_dim=16,
            ssm_state_size=8,
            n_groups=1,
            chunk_size=16,
            max_position_embeddings=1024,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            bos_token_id=None,
            tie_word_embeddings=False,
        )
    else:
        raise ValueError(arch)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    record = lineage_record(run=run, kind="external", root={"run": run, "seed": str(seed)})
    save_checkpoint(directory, model.state_dict(), config=config, companions_from=src, lineage=record)
    return directory


def write_items(directory: Path) -> dict[str, Path]:
    """Tiny item files in the shipped formats, one per benchmark."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = {
        "mmlu": [
            {
                "id": f"m{i}",
                "subject": "high_school_math",
                "question": f"What is {i} + {i}?",
                "choices": [str(2 * i), str(2 * i + 1), str(i), "0"],
                "answer": i % 4,
            }
            for i in range(12)
        ],
        "gsm8k": [
            {
                "id": f"g{i}",
                "question": f"Tom has {i} apples and buys {i + 1} more. How many apples?",
                "answer": f"{i} + {i + 1} = {2 * i + 1}\n#### {2 * i + 1}",
            }
            for i in range(6)
        ],
        "ifeval": [
            {
                "key": 1000 + i,
                "prompt": f"Write about the sea in {3 + i} sentences, all in lowercase.",
                "instruction_id_list": ["change_case:english_lowercase", "length_constraints:number_sentences"],
                "kwargs": [{}, {"relation": "at least", "num_sentences": 2}],
            }
            for i in range(6)
        ],
        "degen": [
            {"id": f"d{i}", "messages": [{"role": "user", "content": f"Tell me about item {i}."}]} for i in range(5)
        ],
        "margin": [
            {
                "battle_id": f"b{i}",
                "prompt_id": 5 * i,
                "messages": [{"role": "user", "content": f"Question {i}: what is the sea?"}],
                "chosen": "The sea is a large body of salt water." * (1 + i % 2),
                "rejected": "Water.",
            }
            for i in range(5)
        ],
    }
    paths = {}
    for name, items in rows.items():
        path = directory / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in items))
        paths[name] = path
    return paths


def random_prompts(n: int, seed: int, lengths: tuple[int, int], vocab: int = 300) -> list[list[int]]:
    """n token-id prompts, each's length drawn from [low, high); ids from 3 (past the special tokens) to `vocab`."""
    rng = random.Random(seed)
    return [[rng.randrange(3, vocab) for _ in range(rng.randrange(*lengths))] for _ in range(n)]


def random_requests(n: int, seed: int, context: tuple[int, int], continuation: tuple[int, int], vocab: int = 300):
    """n (context, continuation) token-id requests, each side's length drawn from [low, high); ids from 3 (past the
    special tokens) to `vocab`."""
    rng = random.Random(seed)
    return [
        (
            [rng.randrange(3, vocab) for _ in range(rng.randrange(*context))],
            [rng.randrange(3, vocab) for _ in range(rng.randrange(*continuation))],
        )
        for _ in range(n)
    ]


def cuda_model(tmp_path: Path, arch: str, dtype: torch.dtype):
    """A random model on the GPU: the pico Llama checkpoint, or Nemotron-H at the card Base's widths (one
    Mamba-2, one attention and one MoE layer, vocabulary 4,096; the Mamba kernels refuse the pico widths)."""
    if arch == "nemotron_h":
        from transformers import AutoModelForCausalLM, NemotronHConfig

        from lineage.families.card import CARD_LAYERS
        from lineage.modeling import SHAPES

        shape = SHAPES[("nemotron_h", "30b_a3b")] | {"layers_block_type": [CARD_LAYERS[c] for c in "M*E"]}
        torch.manual_seed(7)
        config = NemotronHConfig(**shape, vocab_size=4096)
        with torch.device("cuda"):
            return AutoModelForCausalLM.from_config(config, dtype=dtype).eval()
    from lineage.checkpoints.load import load_model

    directory = make_checkpoint(tmp_path / arch, seed=7, arch=arch)
    return load_model(directory, dtype=dtype, device="cuda").eval()
