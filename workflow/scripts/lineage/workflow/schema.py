"""config.yaml checked against workflow/schemas/config.schema.yaml, with the schema's defaults filled in.

What snakemake.utils.validate does, done here once: it reads the schema with YAML's pure-Python loader
(0.23 s, beside our own read for numbers_by_schema: every Snakemake start, a Slurm job's included), where
LibYAML's reads it in 0.02 s. The refusal is one line: the config path and what is wrong with it.
The built Base's `family` takes the registered model families (lineage/families), filled in on load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lineage import families
from lineage.workflow.checks import ConfigError

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # LibYAML where PyYAML was built with it


def load_schema(path: Path) -> dict[str, Any]:
    """The schema, its `base.family` enum the registered families."""
    schema = yaml.load(path.read_text(), Loader=LOADER)
    schema["$defs"]["scale"]["properties"]["base"]["properties"]["family"]["enum"] = families.names()
    return schema


def validate_config(config: dict[str, Any], schema: dict[str, Any]) -> None:
    """Raise ConfigError naming the first problem jsonschema finds (its best match); set the schema's defaults."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, subschema):
        for name, property_schema in properties.items():
            if isinstance(instance, dict) and isinstance(property_schema, dict) and "default" in property_schema:
                instance.setdefault(name, property_schema["default"])
        yield from check_properties(validator, properties, instance, subschema)

    validator = validators.extend(Draft202012Validator, {"properties": properties_with_defaults})(schema)
    error = best_match(validator.iter_errors(config))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path)
        raise ConfigError(f"{where}: {error.message}" if where else error.message)
