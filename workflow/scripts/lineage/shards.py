"""Sharded safetensors checkpoints: lazy per-tensor reading and size-bounded streaming writes.

The layout is Hugging Face's: `model-0000k-of-0000N.safetensors` plus
`model.safetensors.index.json` mapping every tensor name to its shard. Only safetensors are
read here; pickled weights (`*.bin`, `*.pt`) are refused because loading them runs code.

Nothing here imports torch: tensors' bytes are numpy arrays (bfloat16 and float8 from
ml_dtypes), so a soup starts in a fraction of a second instead of the seconds that importing
torch takes. Writers that are handed torch tensors use them as they are.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import queue
import struct
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
from safetensors import safe_open

if TYPE_CHECKING:
    import torch

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
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


class ShardReader:
    """Map the tensors of one checkpoint, one shard file mapped at a time.

    `view` returns the bytes of a tensor (or a range of them) straight from the page cache:
    reading costs page faults, not a copy into buffers of our own. Pages more than
    `release_bytes` behind the latest view are released from this process (they stay in the
    page cache), so resident memory stays at a few blocks whatever the shard size. `opens`
    counts how often each shard was mapped: callers that order their reads by shard map each
    file once. Shards must not shrink while mapped (reading past a file's end faults); the
    headers were checked against the file sizes before.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        headers: Mapping[str, Mapping[str, TensorEntry]] | None = None,
        release_bytes: int = 16 * 1024**2,
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
        self._map: mmap.mmap | None = None
        self._shard: str | None = None
        self._released = 0

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
        mapped = self._open(self.weight_map[name])
        begin = entry.start + offset
        if begin - self._released >= 2 * self.release_bytes and hasattr(mmap, "MADV_DONTNEED"):
            upto = begin - self.release_bytes
            upto -= upto % mmap.PAGESIZE
            mapped.madvise(mmap.MADV_DONTNEED, self._released, upto - self._released)
            self._released = upto
        return memoryview(mapped)[begin : begin + nbytes]

    def _open(self, shard: str) -> mmap.mmap:
        if shard != self._shard:
            self.close()
            with open(self.directory / shard, "rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(mmap, "MADV_SEQUENTIAL"):
                self._map.madvise(mmap.MADV_SEQUENTIAL)  # read ahead generously from a cold cache
            self._shard, self._released = shard, 0
            self.opens[shard] += 1
        return self._map

    def close(self) -> None:
        """Forget the mapping; it is unmapped once the last view of it is released."""
        self._map, self._shard = None, None

    def __enter__(self) -> ShardReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def listed(items: Sequence[str], limit: int = 5) -> str:
    """The first `limit` names, then "(+N more)": an error names what is wrong without a wall of names."""
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


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


def checksum_mismatch(path: Path, actual: str, expected: str) -> CheckpointError:
    """The error for a file whose sha256 is not the one lineage.json recorded."""
    run = path.parent.name
    return CheckpointError(
        f"{path}: sha256 {actual[:16]}… does not match {expected[:16]}… recorded in lineage.json; the file is "
        f"truncated or was altered. Rebuild this checkpoint: snakemake {run} --forcerun {run} (a checkpoint "
        "given by path: restore your copy)."
    )


class StreamingVerifier:
    """Check shard files against their recorded sha256 with the bytes a reader reads anyway.

    A soup reads every byte of its parents once; hashing those bytes as they go by, in a thread
    beside the arithmetic, costs no second pass over tens of GB. Each shard is hashed in file
    order: a block is fed after it was read, bytes the reader skipped (the header, or a tensor
    it will read later) are read from the file, and `close_shard` hashes the rest and compares.
    A mismatch is raised by the next `wait`/`finish`, naming the file, and must abort whatever
    was built from the shard (callers write into a temporary that is then discarded).
    """

    def __init__(self, directory: str | os.PathLike, expected: Mapping[str, str]):
        self.directory = Path(directory)
        self.expected = dict(expected)
        self._digests: dict[str, hashlib._Hash] = {}
        self._positions: dict[str, int] = {}
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="shard-verifier")  # one thread keeps file order
        self._pending: list[Future[None]] = []
        self.verified: list[str] = []

    def feed(self, shard: str, position: int, data: memoryview) -> Future[None] | None:
        """Hash `data`, read from `shard` at byte `position`; the caller keeps `data` intact until the
        returned future is done."""
        if shard not in self.expected:
            return None
        return self._submit(self._hash_through, shard, position, data)

    def close_shard(self, shard: str) -> None:
        if shard in self.expected:
            self._submit(self._finish_shard, shard)

    def finish(self, shards: Iterable[str]) -> list[str]:
        """Close `shards` (all a reader used, or all of the checkpoint) and wait; return the verified names."""
        for shard in shards:
            if shard in self.expected and shard not in self.verified:
                self.close_shard(shard)
        self.wait()
        return self.verified

    def wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, fn, *args) -> Future[None]:
        future = self._pool.submit(fn, *args)
        self._pending.append(future)
        if len(self._pending) > 256:  # drop finished futures, raising a mismatch found meanwhile
            done = [f for f in self._pending if f.done()]
            self._pending = [f for f in self._pending if not f.done()]
            for f in done:
                f.result()
        return future

    def _hash_through(self, shard: str, position: int, data: memoryview) -> None:
        digest = self._digests.setdefault(shard, hashlib.sha256())
        done = self._positions.get(shard, 0)
        if position > done:
            self._hash_file(shard, digest, done, position)
            done = position
        end = position + data.nbytes
        if end > done:
            digest.update(data[done - position :])
            done = end
        self._positions[shard] = done

    def _finish_shard(self, shard: str) -> None:
        if shard in self.verified:
            return
        digest = self._digests.setdefault(shard, hashlib.sha256())
        path = self.directory / shard
        self._hash_file(shard, digest, self._positions.get(shard, 0), path.stat().st_size)
        actual = digest.hexdigest()
        if actual != self.expected[shard]:
            raise checksum_mismatch(path, actual, self.expected[shard])
        self.verified.append(shard)

    def _hash_file(self, shard: str, digest, begin: int, end: int, chunk_bytes: int = 1 << 24) -> None:
        if end <= begin:
            return
        with open(self.directory / shard, "rb") as handle:
            handle.seek(begin)
            while begin < end and (chunk := handle.read(min(chunk_bytes, end - begin))):
                digest.update(chunk)
                begin += len(chunk)
        self._positions[shard] = begin

    def __enter__(self) -> StreamingVerifier:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def stored_nbytes(dtype: str, shape: Sequence[int]) -> int:
    """Bytes of a tensor of safetensors dtype `dtype` and `shape`."""
    return math.prod(shape) * DTYPES[dtype].itemsize


def cut_shards(
    specs: Iterable[tuple[str, str, tuple[int, ...]]], max_shard_bytes: int
) -> list[list[tuple[str, str, tuple[int, ...]]]]:
    """(name, safetensors dtype, shape) in order, cut into shards as ShardWriter.add cuts them: a shard
    closes before the tensor that would take it past `max_shard_bytes` (a larger tensor gets one alone)."""
    groups: list[list[tuple[str, str, tuple[int, ...]]]] = [[]]
    used = 0
    for name, dtype, shape in specs:
        size = stored_nbytes(dtype, shape)
        if groups[-1] and used + size > max_shard_bytes:
            groups.append([])
            used = 0
        groups[-1].append((name, dtype, tuple(shape)))
        used += size
    return [group for group in groups if group]


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
        stored = _stored_dtype(name, dtype)
        size = math.prod(shape) * DTYPES[stored].itemsize
        header[name] = {"dtype": stored, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    return struct.pack("<Q", len(blob)) + blob, offset


def _stored_dtype(name: str, dtype: object) -> str:
    try:
        return dtype_name(dtype)
    except CheckpointError as err:
        raise CheckpointError(f"{name}: {err}") from None


def tensor_bytes(tensor: Any) -> memoryview:
    """The bytes of a numpy array or a torch tensor (any device), flat and in C order."""
    if isinstance(tensor, np.ndarray):
        return memoryview(np.ascontiguousarray(tensor).reshape(-1).view(np.uint8))
    import torch  # the caller handed us a torch tensor, so torch is loaded already

    return memoryview(tensor.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy())


def write_safetensors(
    path: str | os.PathLike,
    tensors: Mapping[str, Any],
    metadata: Mapping[str, str] | None = None,
    *,
    fsync: bool = False,
    chunk_bytes: int = WRITE_BYTES,
) -> str:
    """Write one safetensors file straight from the tensors' memory (torch or numpy) and return its sha256.

    Byte for byte what `safetensors.torch.save_file` writes (same tensor order, header padded
    to 8 bytes), but hashing while writing spares a second pass over the file when
    lineage.json records its checksum.
    """
    specs = file_order((name, _stored_dtype(name, t.dtype), t.shape) for name, t in tensors.items())
    order = [name for name, _, _ in specs]
    prefix, _ = safetensors_header(specs, metadata)
    digest = hashlib.sha256(prefix)
    with open(path, "wb") as handle:
        handle.write(prefix)
        for name in order:
            data = tensor_bytes(tensors[name])
            for begin in range(0, data.nbytes, chunk_bytes):
                piece = data[begin : begin + chunk_bytes]
                handle.write(piece)
                digest.update(piece)
        if fsync:
            handle.flush()
            os.fsync(handle.fileno())
    return digest.hexdigest()


@dataclass
class _PlannedShard:
    temp_name: str
    names: list[str]
    prefix: bytes  # length + header
    data_bytes: int


class _ShardStream:
    """Follow one planned byte stream shard by shard: write the files (header, then data), or hash them.

    A writing and a hashing instance each follow the stream in their own thread, so hashing
    never waits for a write() the kernel is throttling, nor writing for the hash. A writer asks
    the kernel every `writeback_bytes` to start writing the new pages to disk (posix_fadvise
    DONTNEED starts writeback of dirty pages without waiting), so the disk works while the
    soup computes and the final fsync only waits for the tail.
    """

    def __init__(
        self, directory: Path, shards: list[_PlannedShard], *, write: bool, writeback_bytes: int = 64 * 1024**2
    ):
        self.directory, self.shards, self.write, self.writeback_bytes = directory, shards, write, writeback_bytes
        self.sha256: dict[str, str] = {}  # temporary name -> digest, filled by a hashing stream
        self._number, self._active, self._left = -1, False, 0
        self._handle: Any = None
        self._digest: Any = None
        self._written = self._advised = 0

    def feed(self, data: memoryview) -> None:
        while data.nbytes:
            if not self._active:
                self._open_next()
                continue
            if self.write:
                piece = data[: min(self._left, WRITE_BYTES)]
                self._handle.write(piece)
                self._written += piece.nbytes
                if self._written - self._advised >= self.writeback_bytes:
                    self._start_writeback()
            else:
                piece = data[: self._left]
                self._digest.update(piece)
            self._left -= piece.nbytes
            data = data[piece.nbytes :]
            if self._left == 0:
                self._finish()

    def finish(self) -> None:
        """Complete trailing shards that hold only empty tensors; refuse a stream that fell short."""

        def empty_next() -> bool:
            return self._number + 1 < len(self.shards) and not self.shards[self._number + 1].data_bytes

        while not self._active and empty_next():
            self._open_next()
        if self._active or self._number + 1 < len(self.shards):
            shard = self.shards[max(self._number, 0)]
            raise CheckpointError(
                f"{self.directory / shard.temp_name}: the stream ended {self._left} bytes short "
                "of the planned tensors; every planned tensor must be written in full"
            )

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _open_next(self) -> None:
        self._number += 1
        if self._number >= len(self.shards):
            raise CheckpointError(f"{self.directory}: more bytes written than the planned tensors hold")
        shard = self.shards[self._number]
        if self.write:
            self._handle = open(self.directory / shard.temp_name, "wb")
            self._handle.write(shard.prefix)
            self._written = self._advised = len(shard.prefix)
        else:
            self._digest = hashlib.sha256(shard.prefix)
        self._active, self._left = True, shard.data_bytes
        if self._left == 0:
            self._finish()

    def _start_writeback(self) -> None:
        self._handle.flush()
        if hasattr(os, "posix_fadvise"):  # Linux; elsewhere the final fsync does all the work
            os.posix_fadvise(
                self._handle.fileno(), self._advised, self._written - self._advised, os.POSIX_FADV_DONTNEED
            )
        self._advised = self._written

    def _finish(self) -> None:
        if self.write:
            self._start_writeback()
            self.close()
        else:
            self.sha256[self.shards[self._number].temp_name] = self._digest.hexdigest()
        self._active = False


class ShardWriter:
    """Write tensors into size-bounded shards, then name them `-of-N` and write the index.

    Two ways in. `add(name, tensor)` buffers tensors until the next one would pass
    `max_shard_bytes`, so peak memory is about one shard (two with `background=True`, which
    writes, hashes and fsyncs a full shard in a thread while the caller fills the next).
    `plan(specs)` then `claim(nbytes)` is for callers that know every tensor up front (a
    soup): the headers are fixed first and results are computed straight into small staging
    buffers that are written in order, so memory stays at a few staging buffers whatever the
    model size. Use as a context manager; `close()` finalises names and the index, and
    `sha256` then maps every file written to its checksum.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        max_shard_bytes: int = 2 * 1024**3,
        *,
        background: bool = False,
        stage_bytes: int = 8 * 1024**2,
        stages: int = 3,
    ):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_shard_bytes = max_shard_bytes
        self.background = background
        self._buffer: dict[str, Any] = {}
        self._buffer_bytes = 0
        self._written: list[tuple[str, list[str]]] = []  # (temporary file name, tensor names)
        self._digests: dict[str, Future[str] | str] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._names: set[str] = set()
        self._streams: list[_ShardStream] = []  # planned: one writing, one hashing
        self._threads: list[tuple[threading.Thread, queue.Queue]] = []
        self._error: BaseException | None = None
        self._stage_bytes, self._stages = stage_bytes, stages
        self.total_bytes = 0
        self.sha256: dict[str, str] = {}

    # -- buffered: add() ------------------------------------------------------------------------

    def add(self, name: str, tensor: torch.Tensor | np.ndarray) -> None:
        if self._streams:
            raise CheckpointError("add() cannot follow plan(); claim() the planned tensors' bytes instead")
        if name in self._names:
            raise CheckpointError(f"tensor {name} added twice to {self.directory}")
        size = tensor.nbytes
        if self._buffer and self._buffer_bytes + size > self.max_shard_bytes:
            self.flush()
        self._names.add(name)
        self._buffer[name] = tensor if isinstance(tensor, np.ndarray) else tensor.detach().contiguous().cpu()
        self._buffer_bytes += size
        self.total_bytes += size

    def flush(self) -> None:
        if not self._buffer:
            return
        temp_name = f"part-{len(self._written):05d}.safetensors"
        tensors, path = self._buffer, self.directory / temp_name
        self._buffer, self._buffer_bytes = {}, 0
        if not self.background:
            self._digests[temp_name] = write_safetensors(path, tensors, {"format": "pt"})
        else:
            for pending in self._digests.values():  # at most one shard in flight: bounds memory to two shards
                if isinstance(pending, Future):
                    pending.result()
            self._pool = self._pool or ThreadPoolExecutor(1, thread_name_prefix="shard-writer")
            self._digests[temp_name] = self._pool.submit(write_safetensors, path, tensors, {"format": "pt"}, fsync=True)
        self._written.append((temp_name, list(tensors)))

    # -- planned: plan() then claim() ---------------------------------------------------------------

    def plan(self, specs: Iterable[tuple[str, object, Sequence[int]]]) -> list[str]:
        """Fix every shard before any data; return the order in which to claim the tensors' bytes.

        `specs` are (name, dtype, shape), the dtype as dtype_name() reads it. Shards are cut by
        the same size rule as add(). Within a shard, wider elements come first (a stable sort),
        so every tensor starts aligned; otherwise the given order is kept.
        """
        if self._streams or self._names:
            raise CheckpointError("plan() must be called once, before anything is added")
        stored = []
        for name, dtype, shape in specs:
            if name in self._names:
                raise CheckpointError(f"tensor {name} planned twice for {self.directory}")
            self._names.add(name)
            stored.append((name, _stored_dtype(name, dtype), tuple(shape)))
            self.total_bytes += stored_nbytes(stored[-1][1], shape)
        shards = []
        for number, group in enumerate(cut_shards(stored, self.max_shard_bytes)):
            group.sort(key=lambda spec: -DTYPES[spec[1]].itemsize)
            prefix, data_bytes = safetensors_header(group, {"format": "pt"})
            shards.append(_PlannedShard(f"part-{number:05d}.safetensors", [n for n, _, _ in group], prefix, data_bytes))
        self._written = [(shard.temp_name, shard.names) for shard in shards]
        self._streams = [
            _ShardStream(self.directory, shards, write=True),
            _ShardStream(self.directory, shards, write=False),
        ]
        self._stage, self._stage_used, self._claimed = None, 0, 0
        self._free: queue.Queue[np.ndarray] = queue.Queue()
        for _ in range(self._stages if self.background else 1):
            self._free.put(np.empty(self._stage_bytes, dtype=np.uint8))
        if self.background:  # a stage returns to _free once both the writing and the hashing thread are done with it
            self._users: dict[int, int] = {}
            self._users_lock = threading.Lock()
            for stream, name in zip(self._streams, ("shard-writer", "shard-hasher"), strict=True):
                work: queue.Queue[tuple[np.ndarray, int] | None] = queue.Queue()
                thread = threading.Thread(target=self._drain, args=(stream, work), name=name, daemon=True)
                thread.start()
                self._threads.append((thread, work))
        return [name for shard in shards for name in shard.names]

    def claim(self, nbytes: int, align: int = 8) -> np.ndarray:
        """The next `nbytes` of the planned stream, as a uint8 array to fill before the next claim.

        `align` (a tensor's element size) keeps the claimed bytes viewable as that dtype.
        """
        if not self._streams:
            raise CheckpointError("claim() needs plan() first")
        if nbytes > self._stage_bytes:
            raise ValueError(
                f"claim of {nbytes} bytes exceeds the {self._stage_bytes}-byte staging buffer; claim less at a time"
            )
        if self._stage is not None and (self._stage_used % align or self._stage_used + nbytes > self._stage_bytes):
            self._hand_off()
        if self._stage is None:
            self._raise_writer_error()
            self._stage, self._stage_used = self._free.get(), 0
        view = self._stage[self._stage_used : self._stage_used + nbytes]
        self._stage_used += nbytes
        self._claimed += nbytes
        return view

    def _hand_off(self) -> None:
        stage, used = self._stage, self._stage_used
        self._stage = None
        if stage is None or not used:
            if stage is not None:
                self._free.put(stage)
            return
        if self.background:
            with self._users_lock:
                self._users[id(stage)] = len(self._threads)
            for _, work in self._threads:
                work.put((stage, used))
        else:
            for stream in self._streams:
                stream.feed(memoryview(stage)[:used])
            self._free.put(stage)

    def _drain(self, stream: _ShardStream, work: queue.Queue) -> None:
        while (item := work.get()) is not None:
            stage, used = item
            try:
                if self._error is None:
                    stream.feed(memoryview(stage)[:used])
            except BaseException as err:  # handed to the caller at its next claim() or close()
                self._error = err
            finally:
                with self._users_lock:
                    self._users[id(stage)] -= 1
                    if not self._users[id(stage)]:
                        self._free.put(stage)

    def _raise_writer_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _stop_stream(self) -> None:
        for thread, work in self._threads:
            if thread.is_alive():
                work.put(None)
                thread.join()
        self._threads = []
        for stream in self._streams:
            stream.close()

    # -- finishing ----------------------------------------------------------------------------------

    def close(self) -> dict[str, str]:
        """Finalise shard names and write the index; return the weight map."""
        if self._streams:
            self._hand_off()
            self._stop_stream()
            self._raise_writer_error()
            if self._claimed != self.total_bytes:
                raise CheckpointError(
                    f"{self.directory}: {self._claimed} bytes claimed but the plan holds "
                    f"{self.total_bytes}; every planned tensor must be written in full"
                )
            for stream in self._streams:
                stream.finish()
            digests = dict(self._streams[1].sha256)
        else:
            self.flush()
            digests = {name: d.result() if isinstance(d, Future) else d for name, d in self._digests.items()}
        self._shutdown()
        total = len(self._written)
        mapping: dict[str, str] = {}
        for number, (temp_name, names) in enumerate(self._written, start=1):
            final = shard_name(number, total)
            os.replace(self.directory / temp_name, self.directory / final)
            self.sha256[final] = digests[temp_name]
            mapping.update(dict.fromkeys(names, final))
        index = {"metadata": {"total_size": self.total_bytes}, "weight_map": dict(sorted(mapping.items()))}
        text = (json.dumps(index, indent=2) + "\n").encode()
        (self.directory / INDEX_NAME).write_bytes(text)
        self.sha256[INDEX_NAME] = hashlib.sha256(text).hexdigest()
        return mapping

    def _shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # never leave a thread writing into a directory that is about to be removed
            self._stop_stream()
            self._shutdown()
