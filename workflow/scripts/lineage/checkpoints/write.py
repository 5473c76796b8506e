"""Writing safetensors shards from one process: whole files from memory, or size-bounded streams.

`write_safetensors` writes a file byte for byte as `safetensors.torch.save_file` does, hashing as it
writes. `ShardWriter` cuts tensors into shards by the format's one rule and finishes them with the one
index writer (lineage.checkpoints.format). Torch tensors are used as they are handed in; nothing here
imports torch, so a soup starts in a fraction of a second.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lineage.checkpoints.format import (
    INDEX_NAME,
    WRITE_BYTES,
    CheckpointError,
    PlannedShard,
    file_order,
    index_bytes,
    new_shard_before,
    plan_shards,
    safetensors_header,
    shard_name,
    stored_dtype,
)

if TYPE_CHECKING:
    import torch


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
    specs = file_order((name, stored_dtype(name, t.dtype), t.shape) for name, t in tensors.items())
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


class _ShardStream:
    """Follow one planned byte stream shard by shard: write the files (header, then data), or hash them.

    A writing and a hashing instance each follow the stream in their own thread, so hashing
    never waits for a write() the kernel is throttling, nor writing for the hash. A writer asks
    the kernel every `writeback_bytes` to start writing the new pages to disk (posix_fadvise
    DONTNEED starts writeback of dirty pages without waiting), so the disk works while the
    soup computes and the final fsync only waits for the tail.
    """

    def __init__(
        self, directory: Path, shards: list[PlannedShard], *, write: bool, writeback_bytes: int = 64 * 1024**2
    ):
        self.directory, self.shards, self.write, self.writeback_bytes = directory, shards, write, writeback_bytes
        self.sha256: dict[str, str] = {}  # file name -> digest, filled by a hashing stream
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
                f"{self.directory / shard.name}: the stream ended {self._left} bytes short "
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
            self._handle = open(self.directory / shard.name, "wb")
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
            self.sha256[self.shards[self._number].name] = self._digest.hexdigest()
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
        self._written: list[tuple[str, list[str]]] = []  # (file name as written, tensor names)
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
        if new_shard_before(size, self._buffer_bytes, len(self._buffer), self.max_shard_bytes):
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
        the same rule as add(); within a file the tensors lie in safetensors' order (wider dtypes
        first, so every tensor starts aligned, then by name), as every writer lays them out.
        """
        if self._streams or self._names:
            raise CheckpointError("plan() must be called once, before anything is added")
        specs = list(specs)
        for name, _, _ in specs:
            if name in self._names:
                raise CheckpointError(f"tensor {name} planned twice for {self.directory}")
            self._names.add(name)
        shards, self.total_bytes = plan_shards(specs, self.max_shard_bytes)
        self._written = [(shard.name, list(shard.offsets)) for shard in shards]
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
        return [name for shard in shards for name in shard.offsets]

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
        for number, (written, names) in enumerate(self._written, start=1):
            final = shard_name(number, total)
            if written != final:  # add()'s parts are named once their count is known
                os.replace(self.directory / written, self.directory / final)
            self.sha256[final] = digests[written]
            mapping.update(dict.fromkeys(names, final))
        text = index_bytes(mapping, {"total_size": self.total_bytes})
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
