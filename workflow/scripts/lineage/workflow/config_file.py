"""config.yaml read as Snakemake reads it, for tools that work outside a workflow run (the rehearsal, the planner).

Overlays merge into the file key by key, as `--configfile` does; `--config scale=...` is the `scale` argument. The
numbers are put in the schema's types and the schema validates the result (rules/common.smk does the same).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from lineage.canonical import numbers_by_schema
from lineage.workflow.checks import ConfigError

REPO = Path(__file__).resolve().parents[4]
CONFIG = REPO / "config.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def merged(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `overlay`'s keys put in, mappings merged key by key (Snakemake's --configfile)."""
    out = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def read_config(
    path: str | Path = CONFIG, overlays: Iterable[str | Path] = (), scale: str | None = None
) -> dict[str, Any]:
    """The validated config of `path` with `overlays` merged in order, at `scale` (None: the file's own)."""
    import jsonschema

    config = yaml.safe_load(Path(path).read_text())
    for overlay in overlays:
        config = merged(config, yaml.safe_load(Path(overlay).read_text()) or {})
    if scale is not None:
        config["scale"] = scale
    schema = yaml.safe_load(SCHEMA.read_text())
    config = numbers_by_schema(config, schema)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "config"
        raise ConfigError(f"{where}: {error.message}")
    return config
