"""Build native battle rows and export files for the data-stage tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def battle(
    battle_id: str = "b1",
    prompt_id: int = 1,
    vote: str = "own_better",
    own: str | None = "Own answer.",
    other: str | None = "Other answer.",
    created_at: str = "2025-01-01T00:00:00Z",
    prompt: str | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    row = {
        "battle_id": battle_id,
        "prompt_id": prompt_id,
        "messages": [{"role": "user", "content": prompt if prompt is not None else f"Question {prompt_id}?"}],
        "own": {"model": "ours", "answer": own},
        "other": {"model": "theirs", "answer": other},
        "vote": vote,
        "created_at": created_at,
    }
    row.update(overrides)
    return row


def write_export(path: Path, rows: list[Any]) -> Path:
    """Write rows (dicts, or raw str/bytes lines written as-is) one a line."""
    with path.open("wb") as handle:
        for row in rows:
            if isinstance(row, bytes):
                handle.write(row + b"\n")
            elif isinstance(row, str):
                handle.write(row.encode("utf-8") + b"\n")
            else:
                handle.write(json.dumps(row).encode("utf-8") + b"\n")
    return path
