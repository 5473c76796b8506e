"""Sharded safetensors checkpoints: lazy per-tensor reading and size-bounded streaming writes.

The layout is Hugging Face's: `model-0000k-of-0000N.safetensors` plus
`model.safetensors.index.json` mapping every tensor name to its shard. Only safetensors are
read here; pickled weights (`*.bin`, `*.pt`) are refused because loading them runs code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
PICKLED_PATTERNS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")


class CheckpointError(RuntimeError):
    """A checkpoint directory is missing, unsafe, corrupt or inconsistent; the message names the file."""


def shard_name(index: int, total: int) -> str:
    return f"model-{index:05d}-of-{total:05d}.safetensors"


def weight_map(directory: str | os.PathLike) -> dict[str, str]:
    """Map each tensor name to the shard file that holds it (single-file checkpoints too)."""
    directory = Path(directory)
    index = directory / INDEX_NAME
    if index.is_file():
        try:
            return dict(json.loads(index.read_text())["weight_map"])
        except (json.JSONDecodeError, KeyError) as err:
            raise CheckpointError(f"{index}: not a valid safetensors index ({err})") from None
    single = directory / SINGLE_NAME
    if single.is_file():
        with safe_open(single, framework="pt") as handle:
            return {name: SINGLE_NAME for name in handle.keys()}
    pickled = sorted(str(p.name) for pattern in PICKLED_PATTERNS for p in directory.glob(pattern))
    if pickled:
        raise CheckpointError(
            f"{directory}: only pickled weights found ({', '.join(pickled)}); they are refused because "
            "unpickling runs arbitrary code. Convert them to safetensors first (save_pretrained(safe_serialization=True))."
        )
    raise CheckpointError(f"{directory}: no {INDEX_NAME} or {SINGLE_NAME}; is this a checkpoint directory?")


def shard_files(directory: str | os.PathLike) -> list[str]:
    """The distinct shard files of a checkpoint, in name order."""
    return sorted(set(weight_map(directory).values()))


def iter_shard_tensors(path: str | os.PathLike) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield (name, tensor) from one shard file, one tensor in memory at a time."""
    try:
        with safe_open(path, framework="pt") as handle:
            for name in handle.keys():
                yield name, handle.get_tensor(name)
    except Exception as err:  # safetensors raises its own error types for truncated files
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"{path}: unreadable safetensors shard ({err})") from None


def tensor_specs(directory: str | os.PathLike) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Name -> (dtype, shape) for every tensor, read from the shard headers only."""
    directory = Path(directory)
    specs: dict[str, tuple[str, tuple[int, ...]]] = {}
    for file in shard_files(directory):
        try:
            with safe_open(directory / file, framework="pt") as handle:
                for name in handle.keys():
                    view = handle.get_slice(name)
                    specs[name] = (str(view.get_dtype()), tuple(view.get_shape()))
        except Exception as err:
            raise CheckpointError(f"{directory / file}: unreadable safetensors header ({err})") from None
    return specs


class ShardWriter:
    """Stream tensors into size-bounded shards, then name them `-of-N` and write the index.

    Tensors are buffered until the next one would pass `max_shard_bytes`, so peak memory is
    about one shard. Use as a context manager; `close()` finalises names and the index.
    """

    def __init__(self, directory: str | os.PathLike, max_shard_bytes: int = 2 * 1024**3):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_shard_bytes = max_shard_bytes
        self._buffer: dict[str, torch.Tensor] = {}
        self._buffer_bytes = 0
        self._written: list[tuple[str, list[str]]] = []  # (temporary file name, tensor names)
        self.total_bytes = 0

    def add(self, name: str, tensor: torch.Tensor) -> None:
        size = tensor.numel() * tensor.element_size()
        if self._buffer and self._buffer_bytes + size > self.max_shard_bytes:
            self.flush()
        self._buffer[name] = tensor.detach().contiguous().cpu()
        self._buffer_bytes += size
        self.total_bytes += size

    def flush(self) -> None:
        if not self._buffer:
            return
        temp_name = f"part-{len(self._written):05d}.safetensors"
        save_file(self._buffer, self.directory / temp_name, metadata={"format": "pt"})
        self._written.append((temp_name, list(self._buffer)))
        self._buffer, self._buffer_bytes = {}, 0

    def close(self) -> dict[str, str]:
        """Finalise shard names and write the index; return the weight map."""
        self.flush()
        total = len(self._written)
        mapping: dict[str, str] = {}
        for number, (temp_name, names) in enumerate(self._written, start=1):
            final = shard_name(number, total)
            os.replace(self.directory / temp_name, self.directory / final)
            mapping.update(dict.fromkeys(names, final))
        index = {"metadata": {"total_size": self.total_bytes}, "weight_map": dict(sorted(mapping.items()))}
        (self.directory / INDEX_NAME).write_text(json.dumps(index, indent=2) + "\n")
        return mapping

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
