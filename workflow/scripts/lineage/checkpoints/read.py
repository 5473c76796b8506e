"""Reading checkpoints without torch: the index, the shard headers, and tensors' bytes from memory maps.

Only safetensors are read; pickled weights (`*.bin`, `*.pt`) are refused because loading them runs
code. Every reader of a checkpoint's names, shapes or bytes comes here: the soup (bytes through
`ShardReader`), the ranks of a job (rows through `lineage.checkpoints.distributed`, which resolves
names with `weight_map`), the workflow's planning (`checkpoint_params`) and the layout resolver
(`checkpoint_shapes`).
"""

from __future__ import annotations

import json
import math
import mmap
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from safetensors import safe_open

from lineage.checkpoints.format import (
    INDEX_NAME,
    PICKLED_PATTERNS,
    SINGLE_NAME,
    CheckpointError,
    TensorEntry,
    listed,
    read_header,
)

if TYPE_CHECKING:
    import torch


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
        return dict.fromkeys(read_header(single), SINGLE_NAME)
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


class ShardReader:
    """Map the tensors of one checkpoint, a few shard files mapped at a time.

    `view` returns the bytes of a tensor (or a range of them) straight from the page cache:
    reading costs page faults, not a copy into buffers of our own. Pages more than
    `release_bytes` behind the latest view are released from this process (they stay in the
    page cache), so resident memory stays at a few blocks whatever the shard size. Up to
    `keep_open` shards stay mapped (the least recently read is forgotten first): a writer whose
    files are cut elsewhere than the reader's reads across a shard boundary without mapping a file
    twice. `opens` counts how often each shard was mapped. Shards must not shrink while mapped
    (reading past a file's end faults); the headers were checked against the file sizes before.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        headers: Mapping[str, Mapping[str, TensorEntry]] | None = None,
        release_bytes: int = 16 * 1024**2,
        keep_open: int = 4,
    ):
        self.directory = Path(directory)
        self.weight_map = weight_map(self.directory)
        self.headers = (
            dict(headers)
            if headers is not None
            else {shard: read_header(self.directory / shard) for shard in sorted(set(self.weight_map.values()))}
        )
        self.release_bytes = release_bytes - release_bytes % mmap.PAGESIZE
        self.opens: Counter[str] = Counter()
        self.keep_open = keep_open
        self._maps: dict[str, tuple[mmap.mmap, list[int]]] = {}  # shard -> (map, [bytes released]); oldest first

    def entry(self, name: str) -> TensorEntry:
        shard = self.weight_map[name]
        try:
            return self.headers[shard][name]
        except KeyError:
            raise CheckpointError(
                f"{self.directory / INDEX_NAME}: maps {name} to {shard}, "
                "which has no such tensor; the index and the shards disagree"
            ) from None

    def view(self, name: str, offset: int, nbytes: int) -> memoryview:
        """Bytes [offset, offset + nbytes) of the tensor, read-only, valid while referenced."""
        entry = self.entry(name)
        if offset < 0 or offset + nbytes > entry.nbytes:
            raise ValueError(f"{name}: bytes [{offset}, {offset + nbytes}) lie outside its {entry.nbytes} bytes")
        mapped, released = self._open(self.weight_map[name])
        begin = entry.start + offset
        if begin - released[0] >= 2 * self.release_bytes and hasattr(mmap, "MADV_DONTNEED"):
            upto = begin - self.release_bytes
            upto -= upto % mmap.PAGESIZE
            mapped.madvise(mmap.MADV_DONTNEED, released[0], upto - released[0])
            released[0] = upto
        return memoryview(mapped)[begin : begin + nbytes]

    def _open(self, shard: str) -> tuple[mmap.mmap, list[int]]:
        if shard in self._maps:
            self._maps[shard] = self._maps.pop(shard)  # the most recently read goes last
            return self._maps[shard]
        while len(self._maps) >= self.keep_open:
            del self._maps[next(iter(self._maps))]
        with open(self.directory / shard, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if hasattr(mmap, "MADV_SEQUENTIAL"):
            mapped.madvise(mmap.MADV_SEQUENTIAL)  # read ahead generously from a cold cache
        self.opens[shard] += 1
        self._maps[shard] = (mapped, [0])
        return self._maps[shard]

    def close(self) -> None:
        """Forget the mappings; each is unmapped once the last view of it is released."""
        self._maps.clear()

    def __enter__(self) -> ShardReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tensor_entries(directory: str | os.PathLike, *, unlisted_ok: bool = True) -> dict[str, tuple[str, TensorEntry]]:
    """Every tensor's shard and header entry (dtype, shape, byte range), from the index and the shard
    headers alone. A tensor the index maps to a shard that lacks it is refused; one a shard holds but the
    index does not list is refused unless `unlisted_ok` (loading ignores it, as transformers does)."""
    directory = Path(directory)
    mapping = weight_map(directory)
    headers = {shard: read_header(directory / shard) for shard in sorted(set(mapping.values()))}
    entries = {}
    for name, shard in mapping.items():
        if name not in headers[shard]:
            raise CheckpointError(
                f"{directory / shard}: the index maps {name} to this shard, which lacks it; "
                "the index and the shards disagree. Rebuild the checkpoint."
            )
        entries[name] = (shard, headers[shard][name])
    if not unlisted_ok:
        for shard, held in headers.items():
            unlisted = sorted(set(held) - set(mapping))
            if unlisted:
                raise CheckpointError(f"{directory / shard}: holds tensors the index does not list: {listed(unlisted)}")
    return entries


def checkpoint_shapes(directory: str | os.PathLike) -> dict[str, tuple[int, ...]]:
    """{tensor name: shape} of a checkpoint, from its index and shard headers (no tensor data read)."""
    return {name: entry.shape for name, (_, entry) in tensor_entries(directory).items()}


def checkpoint_params(directory: str | os.PathLike) -> int:
    """Parameters (elements) of a checkpoint, from its headers only."""
    return sum(math.prod(shape) for shape in checkpoint_shapes(directory).values())
