"""The safetensors format and a checkpoint directory's names: what every reader and writer agrees on.

A checkpoint is Hugging Face's layout: `model-0000k-of-0000N.safetensors` plus
`model.safetensors.index.json` mapping every tensor name to its shard, the config, the tokenizer and
bundle files, and our `lineage.json`. Shards are cut by one rule (`plan_shards`), tensors lie in a
file in one order (`file_order`, safetensors' own) and the index is written by one function
(`index_bytes`), so a single writer, the ranks of a job each writing their rows, and a soup all
produce the same bytes for the same tensors.

Nothing here imports torch: dtypes are numpy's (bfloat16 and float8 from ml_dtypes), so the workflow's
start-up and a soup read headers without the seconds importing torch takes.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
LINEAGE_NAME = "lineage.json"
CONFIG_NAME = "config.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
BUNDLE_FILES = ("chat_template.jinja", "system_prompt.txt", "generation_config.json", "serving_config.json")
PICKLED_PATTERNS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")

# safetensors dtype names -> numpy dtypes. The names numpy gives them ("bfloat16", "float8_e4m3fn",
# "bool") are torch's too, which is how dtype_name() also reads torch dtypes without importing torch.
DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dtype)
    for name, dtype in {
        "F64": np.float64,
        "F32": np.float32,
        "F16": np.float16,
        "BF16": ml_dtypes.bfloat16,
        "F8_E4M3": ml_dtypes.float8_e4m3fn,
        "F8_E5M2": ml_dtypes.float8_e5m2,
        "I64": np.int64,
        "I32": np.int32,
        "I16": np.int16,
        "I8": np.int8,
        "U64": np.uint64,
        "U32": np.uint32,
        "U16": np.uint16,
        "U8": np.uint8,
        "BOOL": np.bool_,
    }.items()
}
FLOAT_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})
_NAME_OF = {dtype.name: name for name, dtype in DTYPES.items()}
# safetensors writes tensors by this dtype order (widest first, keeping each aligned), then by name.
_WRITE_ORDER = (
    "U64",
    "I64",
    "F64",
    "F32",
    "U32",
    "I32",
    "BF16",
    "F16",
    "U16",
    "I16",
    "F8_E4M3",
    "F8_E5M2",
    "I8",
    "U8",
    "BOOL",
)
MAX_HEADER_BYTES = 100 * 1024**2  # the safetensors reader's own limit
# Bytes per write() call. Measured on Linux 6.x: writing 3 GB in 8 MiB calls cost ~4x the CPU
# of 1 MiB calls (3.96 s vs 0.97 s), so large buffers are written in slices of this size.
WRITE_BYTES = 1024**2


class CheckpointError(RuntimeError):
    """A checkpoint directory is missing, unsafe, corrupt or inconsistent; the message names the file."""


def dtype_name(dtype: object) -> str:
    """The safetensors name ("BF16") of a dtype given by that name, as a numpy dtype or as a torch dtype."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    name = str(dtype).removeprefix("torch.")
    if name not in _NAME_OF:
        raise CheckpointError(f"dtype {dtype} cannot be stored in safetensors")
    return _NAME_OF[name]


def shown_dtype(name: str) -> str:
    """A safetensors dtype as people know it from torch and numpy: BF16 -> bfloat16."""
    return DTYPES[name].name


def shard_name(index: int, total: int) -> str:
    return f"model-{index:05d}-of-{total:05d}.safetensors"


@dataclass(frozen=True)
class TensorEntry:
    """Where one tensor lies in a shard file: absolute byte range [start, end), and its safetensors dtype."""

    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start

    @property
    def numpy_dtype(self) -> np.dtype:
        return DTYPES[self.dtype]

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES


def read_header(path: str | os.PathLike) -> dict[str, TensorEntry]:
    """Parse a safetensors header (8-byte length + JSON) without touching the tensor data.

    The byte ranges are checked against the file size, so a truncated shard is refused here,
    naming the file and the first tensor that runs past its end.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8).ljust(8, b"\0"))
            if length > min(size - 8, MAX_HEADER_BYTES):
                raise CheckpointError(
                    f"{path}: header length {length} does not fit a {size}-byte file; truncated or not safetensors"
                )
            header = json.loads(handle.read(length))
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path}: unreadable safetensors header ({err})") from None
    base = 8 + length
    entries: dict[str, TensorEntry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info.get("dtype") not in DTYPES:
            raise CheckpointError(
                f"{path}: tensor {name} has dtype {info.get('dtype')!r}, which is not a "
                f"safetensors dtype this reader knows ({', '.join(DTYPES)})"
            )
        begin, end = info["data_offsets"]
        if base + end > size:
            raise CheckpointError(
                f"{path}: tensor {name} ends at byte {base + end} but the file has {size} bytes; "
                "the shard is truncated. Rebuild or re-download it."
            )
        entries[name] = TensorEntry(info["dtype"], tuple(info["shape"]), base + begin, base + end)
    return entries


def listed(items: Sequence[str], limit: int = 5) -> str:
    """The first `limit` names, then "(+N more)": an error names what is wrong without a wall of names."""
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def stored_nbytes(dtype: str, shape: Sequence[int]) -> int:
    """Bytes of a tensor of safetensors dtype `dtype` and `shape`."""
    return math.prod(shape) * DTYPES[dtype].itemsize


def file_order(specs: Iterable[tuple[str, str, Sequence[int]]]) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, safetensors dtype, shape) in the order safetensors lays tensors out in a file: widest dtypes
    first (each stays aligned), then by name. `write_safetensors` writes in it; planned writers follow it."""
    return sorted(((n, d, tuple(s)) for n, d, s in specs), key=lambda spec: (_WRITE_ORDER.index(spec[1]), spec[0]))


def safetensors_header(
    specs: Sequence[tuple[str, object, Sequence[int]]], metadata: Mapping[str, str] | None = None
) -> tuple[bytes, int]:
    """The length-prefixed header of a file holding `specs` (name, dtype, shape) in that order,
    and the number of data bytes that follow it. Dtypes as dtype_name() reads them."""
    header: dict[str, object] = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for name, dtype, shape in specs:
        stored = stored_dtype(name, dtype)
        size = math.prod(shape) * DTYPES[stored].itemsize
        header[name] = {"dtype": stored, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    return struct.pack("<Q", len(blob)) + blob, offset


def stored_dtype(name: str, dtype: object) -> str:
    try:
        return dtype_name(dtype)
    except CheckpointError as err:
        raise CheckpointError(f"{name}: {err}") from None


def new_shard_before(size: int, used: int, held: int, max_shard_bytes: int) -> bool:
    """The one shard-cut rule: a shard holding `held` tensors of `used` bytes closes before a tensor of
    `size` bytes that would take it past `max_shard_bytes` (a larger tensor gets a shard alone)."""
    return held > 0 and used + size > max_shard_bytes


def cut_shards(
    specs: Iterable[tuple[str, str, tuple[int, ...]]], max_shard_bytes: int
) -> list[list[tuple[str, str, tuple[int, ...]]]]:
    """(name, safetensors dtype, shape) in order, cut into shards by `new_shard_before`."""
    groups: list[list[tuple[str, str, tuple[int, ...]]]] = [[]]
    used = 0
    for name, dtype, shape in specs:
        size = stored_nbytes(dtype, shape)
        if new_shard_before(size, used, len(groups[-1]), max_shard_bytes):
            groups.append([])
            used = 0
        groups[-1].append((name, dtype, tuple(shape)))
        used += size
    return [group for group in groups if group]


@dataclass(frozen=True)
class PlannedShard:
    """One shard file fixed before any data: its final name, header and where each tensor's bytes begin."""

    name: str
    prefix: bytes  # length + header
    size: int  # the whole file's bytes
    offsets: dict[str, int]  # tensor name -> absolute byte offset of its data, in file order

    @property
    def data_bytes(self) -> int:
        return self.size - len(self.prefix)


def plan_shards(
    specs: Iterable[tuple[str, object, Sequence[int]]], max_shard_bytes: int
) -> tuple[list[PlannedShard], int]:
    """(name, dtype, shape) in order -> the shard files that hold them and the total data bytes.

    Cut by `new_shard_before`; within a file the tensors lie in `file_order`. Dtypes as dtype_name() reads them.
    """
    stored = [(name, stored_dtype(name, dtype), tuple(shape)) for name, dtype, shape in specs]
    groups = cut_shards(stored, max_shard_bytes)
    shards, total = [], 0
    for number, group in enumerate(groups, start=1):
        ordered = file_order(group)
        prefix, data_bytes = safetensors_header(ordered, {"format": "pt"})
        offsets, at = {}, len(prefix)
        for name, dtype, shape in ordered:
            offsets[name] = at
            at += stored_nbytes(dtype, shape)
        shards.append(PlannedShard(shard_name(number, len(groups)), prefix, len(prefix) + data_bytes, offsets))
        total += data_bytes
    return shards, total


def index_bytes(weight_map: Mapping[str, str], metadata: Mapping[str, Any]) -> bytes:
    """The text of model.safetensors.index.json: `metadata` (ours: {"total_size": data bytes}; a published
    index's own kept as it came) and `weight_map` (tensor name -> shard file), names sorted."""
    index = {"metadata": dict(metadata), "weight_map": dict(sorted(weight_map.items()))}
    return (json.dumps(index, indent=2) + "\n").encode()
