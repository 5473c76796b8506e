"""Values by meaning, not spelling: the canonical text of a job's settings, and numbers as numbers.

Snakemake reruns a job when the text of one of its params changes. So every setting a job
tracks is rendered here: JSON with sorted keys, no whitespace and each float in its shortest
round-trip form, so reordered YAML keys, comments and `5e-6` vs `5.0e-6` give the same text.

YAML 1.1 (PyYAML, which Snakemake reads config files with) takes `5e-6` and `1.0e5` for strings;
`numbers_by_schema` turns such strings back into numbers wherever the config schema expects one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

# A YAML 1.2 / JSON number (digits before or after the point), with the underscores YAML allows.
_NUMBER = re.compile(r"[-+]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][-+]?\d+)?")


def plain(value: Any) -> Any:
    """`value` as JSON types: dataclasses and mappings to dicts, tuples and sets to lists, paths to str."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no canonical JSON form; settings must be finite numbers")
    return value


def canonical(value: Any) -> str:
    """The canonical JSON text of `value` (sorted keys, compact, floats in shortest repr)."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def as_number(text: str) -> int | float | None:
    """The number a YAML 1.2 scalar spells (`5e-6`, `1.0e5`, `1_000`), or None if it spells none."""
    stripped = text.strip()
    if not _NUMBER.fullmatch(stripped):
        return None
    digits = stripped.replace("_", "")
    if re.fullmatch(r"[-+]?\d+", digits):
        return int(digits)
    return float(digits)


def numbers_by_schema(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """`value` with every numeric string turned into a number where `schema` expects a number.

    Follows `$ref` (local), `allOf`, `properties`, `additionalProperties` and `items`; a string
    where the schema also allows strings is left alone.
    """
    root = schema if root is None else root
    schema = _resolved(schema, root)
    if isinstance(value, str):
        types = _types(schema, root)
        if types & {"number", "integer"} and "string" not in types:
            number = as_number(value)
            if number is not None:
                return number
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            sub = _property_schema(schema, key, root)
            out[key] = numbers_by_schema(item, sub, root) if sub is not None else item
        return out
    if isinstance(value, list):
        items = _merged(schema, root, "items")
        return [numbers_by_schema(item, items, root) if items is not None else item for item in value]
    return value


def _resolved(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    schema = _resolved(schema, root)
    return [schema, *(b for sub in schema.get("allOf", []) for b in _branches(sub, root))]


def _types(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    for branch in _branches(schema, root):
        kind = branch.get("type")
        found |= {kind} if isinstance(kind, str) else set(kind or ())
    return found


def _merged(schema: Mapping[str, Any], root: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    for branch in _branches(schema, root):
        if isinstance(branch.get(key), Mapping):
            return branch[key]
    return None


def _property_schema(schema: Mapping[str, Any], key: str, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for branch in _branches(schema, root):
        if key in branch.get("properties", {}):
            return branch["properties"][key]
    return _merged(schema, root, "additionalProperties")
