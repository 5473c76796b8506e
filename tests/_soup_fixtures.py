"""Pico Llama checkpoints for the soup tests: a shared stage 1 and three fine-tunes of it (CPU, no network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from lineage.checkpoints.directory import (
    init_root,
    lineage_record,
    parent_entry,
    read_lineage,
    save_checkpoint,
    write_lineage,
)
from lineage.checkpoints.read import iter_shard_tensors, shard_files

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "resources" / "bundle"
SHARD = 16 * 1024  # bytes: a pico model (~90 KB in bf16) spreads over several shards


def pico_config(**overrides) -> LlamaConfig:
    sizes = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=64,
        bos_token_id=1,
        eos_token_id=2,
    )
    return LlamaConfig(**{**sizes, **overrides})


@pytest.fixture(scope="module")
def companions(tmp_path_factory) -> Path:
    """A word-level tokenizer over the pico vocabulary, plus the project's bundle files."""
    directory = tmp_path_factory.mktemp("companions")
    words = ["<unk>", "<|im_start|>", "<|im_end|>", "hello", "world", "user", "assistant", "system"]
    vocab = {word: i for i, word in enumerate(words + [f"w{i}" for i in range(64 - len(words))])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    ).save_pretrained(directory)
    for file in BUNDLE.iterdir():
        shutil.copy(file, directory / file.name)
    return directory


@pytest.fixture(scope="module")
def stage1(tmp_path_factory, companions) -> Path:
    """The shared initialization every fine-tuned parent below descends from."""
    directory = tmp_path_factory.mktemp("runs") / "stage1"
    return build(directory, seed=0, companions=companions, kind="base", root={"run": "stage1", "fingerprint": "f" * 64})


def build(
    directory: Path,
    *,
    seed: int,
    companions: Path,
    parent: Path | None = None,
    root=None,
    kind="sft",
    config: LlamaConfig | None = None,
    mutate=None,
    max_shard_bytes: int = SHARD,
) -> Path:
    """Save a random pico model in bf16; `mutate(state_dict)` may rename, reshape or recast tensors."""
    config = config or pico_config()
    torch.manual_seed(seed)
    state = {name: tensor.to(torch.bfloat16) for name, tensor in LlamaForCausalLM(config).state_dict().items()}
    if mutate is not None:
        state = mutate(state)
    config.dtype = torch.bfloat16
    lineage = lineage_record(
        run=directory.name,
        kind=kind,
        root=root or init_root(read_lineage(parent)),
        parents=[parent_entry(parent.name, parent)] if parent else [],
    )
    save_checkpoint(
        directory, state, config=config, companions_from=companions, lineage=lineage, max_shard_bytes=max_shard_bytes
    )
    return directory


def tensors(directory: Path) -> dict[str, torch.Tensor]:
    return {name: t for shard in shard_files(directory) for name, t in iter_shard_tensors(directory / shard)}


def bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor


def edit(directory: Path, name: str, change) -> None:
    """Change one companion file and re-record checksums, so only the difference is tested."""
    path = directory / name
    path.write_text(change(path.read_text()))
    record = {key: value for key, value in read_lineage(directory).items() if key != "files"}
    write_lineage(directory, record)


@pytest.fixture
def runs(tmp_path, stage1, companions):
    """Three fine-tunes of stage1 (different seeds stand in for different training runs)."""
    return {
        name: build(tmp_path / name, seed=seed, companions=companions, parent=stage1)
        for name, seed in (("sftw2", 1), ("sftw4", 2), ("sftwF", 3))
    }
