"""Argument helpers shared by the workflow scripts, so every script spells its flags the same way."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def script_parser(doc: str) -> argparse.ArgumentParser:
    """A script's parser, described by the first paragraph of its docstring (what --help opens with)."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0])


def stage_main(
    doc: str, arguments: Callable[[argparse.ArgumentParser], None], run: Callable[[argparse.Namespace], str]
) -> Callable[[list[str] | None], int]:
    """A data stage's `main(argv)`: parse the flags `arguments` adds, `run`, print the one line it returns."""

    def main(argv: list[str] | None = None) -> int:
        parser = script_parser(doc)
        arguments(parser)
        print(run(parser.parse_args(argv)))
        return 0

    return main


def bool_arg(value: str) -> bool:
    """Parse `true|false` (also yes/no, 1/0, on/off) for flags that Snakemake fills from config."""
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def positive_int(value: str) -> int:
    """An integer >= 1 (repetition factors, moduli, row counts)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {number}")
    return number


def fraction(value: str) -> float:
    """A number in [0, 1]."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {number}")
    return number


def json_object(text: str) -> dict[str, Any]:
    """A JSON object given on the command line (the workflow passes recipes and records this way)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err.msg} at column {err.colno}): {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value
