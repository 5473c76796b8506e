"""What every sample file's maker shares: the word banks, one seeded generator per file, text helpers."""

import json
import random
from fractions import Fraction
from pathlib import Path

TEXT = json.loads((Path(__file__).with_name("text_banks.json")).read_text(encoding="utf-8"))
OWN_MODEL = "ember-stage1"
OPPONENTS = TEXT["OPPONENTS"]


# -----------------------------------------------------------------------------
# Small utilities


def rng_for(seed, part):
    """One generator per output file, so changing one file's templates never reshuffles another."""
    return random.Random(f"{seed}:{part}")


def norm(text):
    """Lowercase and collapse whitespace: the key under which eval items must not meet training rows."""
    return " ".join(text.lower().split())


def words(text):
    """Whitespace word count, the length measure the card's '~94 words longer' uses."""
    return len(text.split())


def fill(text, params):
    """Substitute {{key}} placeholders; double braces leave code's own braces alone."""
    for key, value in params.items():
        text = text.replace("{{" + key + "}}", str(value))
    return text


def fill_any(obj, params):
    """fill() through nested lists and tuples, so a whole subject can be specialised at once."""
    if isinstance(obj, str):
        return fill(obj, params)
    if isinstance(obj, (list, tuple)):
        return type(obj)(fill_any(item, params) for item in obj)
    return obj


def money(x):
    """Dollar amounts as people write them: $12 or $12.50, with thousands separators."""
    x = round(x + 1e-9, 2)
    return f"${x:,.0f}" if x == int(x) else f"${x:,.2f}"


def num(x):
    """A number without a trailing .0, with thousands separators for readability."""
    if isinstance(x, Fraction):
        x = float(x)
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}".rstrip("0").rstrip(".")


def write_jsonl(path, rows):
    """UTF-8 JSONL with '\\n' endings and insertion-ordered keys: byte-stable across reruns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
