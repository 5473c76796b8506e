"""Quarantine entries: every row a data stage sets aside, with its place and its reason.

Nothing is dropped silently. A stage that does not pass a row on writes one entry in this
shape, and the data audit lists them all in one table, so a reader can trace any battle of
the export to the training rows it became or to the reason it did not.
"""

from __future__ import annotations

from typing import Any

from lineage.io import escape_control

RAW_LIMIT = 2000


def entry(
    stage: str,
    file: str,
    line: int | None,
    reason: str,
    *,
    battle_id: str | None = None,
    field: str | None = None,
    raw: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One quarantine record; `raw` (the line as read) is cut to RAW_LIMIT characters, its control
    characters written as visible escapes (a record must itself pass the reader's checks)."""
    if raw is not None:
        raw = escape_control(raw[:RAW_LIMIT])
    record = {
        "stage": stage,
        "file": str(file),
        "line": line,
        "battle_id": battle_id,
        "field": field,
        "reason": reason,
        "raw": raw,
    }
    record.update(extra)
    return record


def describe(record: dict[str, Any]) -> str:
    """`file:line: field 'x': reason`, the form used in error messages."""
    where = f"{record.get('file')}:{record.get('line')}"
    field = f" field '{record['field']}':" if record.get("field") else ""
    return f"{where}:{field} {record.get('reason')}"
