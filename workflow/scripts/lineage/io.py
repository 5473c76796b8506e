"""Small, safe file I/O: JSONL (and Parquet) with row-precise errors, and outputs that appear atomically.

Snakemake treats an existing output as complete, so every writer here goes through a
temporary sibling that is renamed into place only after it is fully written and flushed.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import itertools
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


class DataError(ValueError):
    """Bad input data; the message names the file, the line and the field."""


class DiskFullError(OSError):
    """The filesystem filled up while an output was written; nothing of it was kept."""

    def __init__(self, final: Path, cause: OSError):
        try:
            usage = shutil.disk_usage(final.parent)
            room = f"{usage.free:,} of {usage.total:,} bytes free there now"
        except OSError:
            room = "free space unknown"
        super().__init__(
            cause.errno,
            f"{final}: {os.strerror(cause.errno)} while writing it ({room}); the partial output was removed "
            f"and nothing was kept. Free space on that filesystem (or point the output elsewhere) and rerun.",
        )


class LineError(ValueError):
    """One line or one field of one row that cannot be trusted; `field` and `reason` go to the quarantine."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"field '{field}': {reason}")
        self.field = field
        self.reason = reason


MAX_DEPTH = 64  # JSON nesting deeper than any row of ours; deeper input is refused, not recursed into
PARQUET = ".parquet"  # a data file in the Hub's own layout (read_rows)
_BOM = b"\xef\xbb\xbf"


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise LineError(key, "the key appears twice in one object; which value counts is undefined")
        seen[key] = value
    return seen


def control_character(text: str) -> str | None:
    """The first control character of `text` (Unicode category Cc: C0, DEL and C1) other than tab,
    newline and carriage return, or None. Judged on the decoded text, so a raw byte and a JSON
    escape such as \\u0000 are the same character."""
    match = _CONTROL.search(text)
    return match.group() if match else None


def escape_control(text: str) -> str:
    """`text` with each control character (as control_character judges) written as `\\uXXXX`."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # Cc less \t \n \r


def _depth_and_text_check(value: Any, depth: int = 0, field: str = "") -> None:
    """Refuse nesting past MAX_DEPTH, strings that are not Unicode text (lone surrogates) and
    control characters; `field` is the path that names where (own.answer, messages[0].content)."""
    if depth > MAX_DEPTH:
        raise LineError("json", f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise LineError(
                field or "json",
                f"a string holds a lone surrogate ({value[err.start : err.end]!r} "
                "escaped in the JSON), which is not text",
            ) from None
        found = control_character(value)
        if found is not None:
            raise LineError(
                field or "json",
                f"holds the control character U+{ord(found):04X} at character "
                f"{value.index(found)}; it is not text (remove it from the export)",
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _depth_and_text_check(key, depth + 1, field)
            _depth_and_text_check(item, depth + 1, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _depth_and_text_check(item, depth + 1, f"{field}[{index}]")


def parse_json_line(raw: bytes, first: bool = False) -> dict[str, Any]:
    """One line's bytes as a JSON object, or LineError saying why not.

    The one decoder of every external JSONL file: a UTF-8 byte-order mark on the first line is
    dropped (editors write it); bytes that are not UTF-8, NUL bytes, invalid or truncated JSON,
    two objects on one line, duplicate keys, lone surrogates and nesting past MAX_DEPTH are refused.
    """
    if first and raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LineError("encoding", f"not valid UTF-8 ({err.reason} at byte {err.start}); re-export as UTF-8") from None
    if "\x00" in text:
        raise LineError("encoding", f"a NUL byte at character {text.index(chr(0))}; the line is binary or damaged")
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys, strict=False)  # raw control characters: judged below
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            raise LineError(
                "json", f"two JSON values on one line (the second at column {err.colno}); one object a line"
            ) from None
        raise LineError("json", f"invalid JSON ({err.msg}; column {err.colno})") from None
    except RecursionError:
        raise LineError("json", f"nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(obj, dict):
        got = "null" if obj is None else type(obj).__name__
        raise LineError("json", f"expected one JSON object per line, got {got}")
    _depth_and_text_check(obj)
    return obj


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """(line_number, raw bytes without the line end) of every non-blank line, counting from 1."""
    with Path(path).open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if raw.strip():
                yield line_no, raw.rstrip(b"\r\n")


def read_jsonl_lenient(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any] | None, LineError | None, bytes]]:
    """Every non-blank line of an external file as (line, object or None, error or None, raw bytes)."""
    for line_no, raw in iter_lines(path):
        try:
            yield line_no, parse_json_line(raw, first=line_no == 1), None, raw
        except LineError as err:
            yield line_no, None, err, raw


def read_rows_lenient(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any] | None, LineError | None, bytes]]:
    """Every row of an external data file as read_jsonl_lenient gives them: JSONL, or Parquet (.parquet, the
    layout the Hub publishes datasets in: rows numbered from 1, each held to the same text checks, its raw
    bytes the row as JSON)."""
    if Path(path).suffix != PARQUET:
        yield from read_jsonl_lenient(path)
        return
    import pyarrow.parquet as pq

    number = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=4096):
        for obj in batch.to_pylist():
            number += 1
            try:
                _depth_and_text_check(obj)
            except LineError as err:
                yield number, None, err, json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8", "replace")
                continue
            yield number, obj, None, b""


def read_rows(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, object) of a JSONL or Parquet file; raise DataError naming the row on a bad one."""
    for number, obj, error, _ in read_rows_lenient(path):
        if error is not None:
            raise DataError(f"{path}:{number}: {error}")
        yield number, obj


def count_rows(path: str | os.PathLike, limit: int | None = None) -> int:
    """Rows of a JSONL file (its non-blank lines, read no further than `limit` of them) or a Parquet file
    (from its footer, nothing decoded)."""
    if Path(path).suffix == PARQUET:
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    return sum(1 for _ in itertools.islice(iter_lines(path), limit))


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line_number, object) for each non-empty line; raise DataError naming the line on a bad one.

    For files the workflow wrote or the user must fix; external data goes through read_jsonl_lenient.
    """
    path = Path(path)
    for line_no, obj, error, _ in read_jsonl_lenient(path):
        if error is not None:
            raise DataError(f"{path}:{line_no}: {error}")
        yield line_no, obj


def load_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a whole JSONL file into a list of objects."""
    return [obj for _, obj in read_jsonl(path)]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary sibling path; rename it onto `path` only if the block succeeds.

    Works for files and directories. On any error the temporary is removed, so a later run
    never mistakes a half-written output for a finished one; a full disk is reported as a
    `DiskFullError` naming the output. A process killed outright (SIGKILL, a node lost)
    cannot clean up, so its temporary is named after host and process and removed by the
    next writer of the same path on that host once that process is gone.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(final)
    prefix = f".{final.name}.tmp-{socket.gethostname()}-{os.getpid()}-"
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
    target = tmp / final.name
    try:
        yield target
        _fsync_tree(target)
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final)
        os.replace(target, final)
        _fsync_dir(final.parent)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT) and not isinstance(err, DiskFullError):
            shutil.rmtree(tmp, ignore_errors=True)  # first, so the message reports the space it held as free
            raise DiskFullError(final, err) from err
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_temporaries(final: Path) -> None:
    """Delete temporaries of `final` left by dead processes of this host (others are left alone)."""
    host = socket.gethostname()
    for sibling in final.parent.glob(f".{glob.escape(final.name)}.tmp-*"):
        parts = sibling.name[len(f".{final.name}.tmp-") :].rsplit("-", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit() or _alive(int(parts[1])):
            continue
        shutil.rmtree(sibling, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_tree(path: Path) -> None:
    """Flush a file, or every file of a directory, to disk before the rename publishes it."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    for file in files:
        with open(file, "rb") as handle:
            os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows as JSONL atomically; return the number of rows written."""
    count = 0
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write one JSON document atomically, indented for people to read."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def sha256_file(path: str | os.PathLike, chunk_bytes: int = 1 << 24) -> str:
    """Hex sha256 of a file, read in chunks so large shards never sit in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_json(obj: Any) -> str:
    """Stable sha256 of a JSON-serialisable value (sorted keys), for config hashes."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()
