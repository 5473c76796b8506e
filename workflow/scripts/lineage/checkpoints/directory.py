"""A checkpoint directory as a whole: its lineage record, its companion files, and finishing it.

A checkpoint is a Hugging Face directory (sharded safetensors + index, `config.json`, tokenizer
files) plus the bundle files served with the model and a `lineage.json` that records where it came
from and the sha256, size and mtime of every file. Every writer (one process, the ranks of a job, a
soup) writes into a temporary directory and ends with `finish_checkpoint`; the temporary is renamed
onto the output only when complete (lineage.io.atomic_path).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage.checkpoints.format import (
    BUNDLE_FILES,
    CONFIG_NAME,
    INDEX_NAME,
    LINEAGE_NAME,
    TOKENIZER_FILES,
    CheckpointError,
)
from lineage.checkpoints.read import shard_files, weight_map
from lineage.checkpoints.write import ShardWriter
from lineage.io import atomic_path, sha256_file, sha256_json

if TYPE_CHECKING:
    import torch


def read_lineage(directory: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint's lineage record; external checkpoints without one get a synthesised record."""
    directory = Path(directory)
    path = directory / LINEAGE_NAME
    if path.is_file():
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise CheckpointError(f"{path}: invalid JSON ({err.msg} at line {err.lineno})") from None
    weight_map(directory)  # raises a clear error for missing or pickled weights
    return {"run": directory.name, "kind": "external", "root": external_root(directory), "files": {}}


def external_root(directory: str | os.PathLike) -> dict[str, str]:
    """Identity of a checkpoint that was not built here: a hash of its config, index and shard sizes.

    Cheap (no pass over tens of GB of shards) yet changes whenever the weights' files change.
    """
    directory = Path(directory)
    sizes = {name: (directory / name).stat().st_size for name in shard_files(directory)}
    config = (directory / CONFIG_NAME).read_text() if (directory / CONFIG_NAME).is_file() else ""
    index = (directory / INDEX_NAME).read_text() if (directory / INDEX_NAME).is_file() else ""
    return {"run": directory.name, "fingerprint": sha256_json([config, index, sizes])}


def init_root(lineage: Mapping[str, Any]) -> dict[str, str]:
    """The initialisation a checkpoint descends from (shared by all runs trained from it)."""
    root = lineage.get("root")
    if not root:
        raise CheckpointError(f"lineage of run {lineage.get('run')!r} has no 'root' entry")
    return dict(root)


def write_lineage(
    directory: str | os.PathLike, record: Mapping[str, Any], known_sha256: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Write lineage.json with the sha256, size and mtime of every other file in the directory.

    `known_sha256` holds checksums computed while the files were written (ShardWriter.sha256);
    those files are not read again, which for a large checkpoint saves a full pass over its shards.
    """
    directory = Path(directory)
    known = dict(known_sha256 or {})
    paths = {
        str(p.relative_to(directory)): p
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != LINEAGE_NAME and not p.name.startswith(".snakemake")
    }
    files = {name: known.get(name) or sha256_file(p) for name, p in paths.items()}
    stats = {name: {"size": st.st_size, "mtime_ns": st.st_mtime_ns} for name, p in paths.items() for st in [p.stat()]}
    full = {**record, "files": files, "file_stats": stats}
    (directory / LINEAGE_NAME).write_text(json.dumps(full, indent=2, default=str) + "\n")
    return full


def copy_companion_files(
    source: str | os.PathLike, target: str | os.PathLike, names: Iterable[str] | None = None
) -> None:
    """Copy config, tokenizer and bundle files (whichever exist) from one checkpoint to another."""
    source, target = Path(source), Path(target)
    for name in names or (CONFIG_NAME, *TOKENIZER_FILES, *BUNDLE_FILES):
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)


def code_version() -> str:
    """The git commit of the workflow (with '-dirty' when the tree has local edits), or 'unknown'."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def lineage_record(
    *,
    run: str,
    kind: str,
    root: Mapping[str, str],
    parents: list[Mapping[str, Any]] | None = None,
    recipe: Mapping[str, Any] | None = None,
    data: list[Mapping[str, Any]] | None = None,
    started: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Assemble the common fields of a lineage record (files are added by write_lineage)."""
    return {
        "run": run,
        "kind": kind,
        "root": dict(root),
        "parents": [dict(p) for p in parents or []],
        "recipe": dict(recipe or {}),
        "config_hash": sha256_json(recipe or {}),
        "data": [dict(d) for d in data or []],
        "code_version": code_version(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(time.time() - started, 3) if started else None,
        **extra,
    }


def parent_entry(run: str, directory: str | os.PathLike) -> dict[str, Any]:
    """How a child records one parent: name, path and the hash of the parent's lineage file."""
    directory = Path(directory)
    lineage_file = directory / LINEAGE_NAME
    return {
        "run": run,
        "path": str(directory),
        "lineage_sha256": sha256_file(lineage_file) if lineage_file.is_file() else None,
    }


def finish_checkpoint(
    directory: str | os.PathLike,
    lineage: Mapping[str, Any],
    known_sha256: Mapping[str, str],
    *,
    companions_from: str | os.PathLike | None,
    companion_names: Iterable[str] = (*TOKENIZER_FILES, *BUNDLE_FILES),
    config: Any = None,
    dtype: torch.dtype | None = None,
) -> dict[str, Any]:
    """The one way a written checkpoint is finished: companion files copied from `companions_from`, the
    config saved (a transformers config, its dtype set to `dtype`; None where a companion config.json was
    copied), then lineage.json over every file. Returns the lineage record."""
    if companions_from is not None:
        copy_companion_files(companions_from, directory, companion_names)
    if config is not None:
        if dtype is not None:
            config.dtype = dtype
        config.save_pretrained(directory)
    return write_lineage(directory, lineage, known_sha256=known_sha256)


def save_checkpoint(
    out_dir: str | os.PathLike,
    state_dict: Mapping[str, torch.Tensor],
    *,
    config: Any,
    companions_from: str | os.PathLike | None,
    lineage: Mapping[str, Any],
    dtype: torch.dtype | None = None,
    max_shard_bytes: int = 2 * 1024**3,
) -> dict[str, Any]:
    """Write a complete checkpoint directory atomically and return its lineage record.

    `config` is a transformers PretrainedConfig (saved as config.json); tokenizer and bundle
    files are copied from `companions_from`. Nothing appears at `out_dir` unless all of it was written.
    """
    with atomic_path(out_dir) as tmp:
        tmp.mkdir()
        with ShardWriter(tmp, max_shard_bytes=max_shard_bytes) as writer:
            for name, tensor in state_dict.items():
                writer.add(name, tensor.to(dtype) if dtype is not None and tensor.is_floating_point() else tensor)
        record = finish_checkpoint(
            tmp, lineage, writer.sha256, companions_from=companions_from, config=config, dtype=dtype
        )
    return record
