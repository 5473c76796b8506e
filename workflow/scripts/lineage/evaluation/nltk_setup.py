"""Where NLTK finds the Punkt sentence model, so IFEval never tries to download it.

lm-eval's IFEval module asks NLTK's downloader for punkt_tab at import time when the model is
missing, and two of its checkers crash later without it. The project installs the English
punkt_tab files once into `<venv>/nltk_data` (`tools/install_punkt.py`); this module
points NLTK there before lm-eval is imported and refuses to go on when the files are absent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")
SETUP_COMMAND = ".venv/bin/python tools/install_punkt.py --target .venv/nltk_data"


class PunktMissingError(RuntimeError):
    """The English punkt_tab model is not installed where NLTK looks."""


def default_nltk_data() -> Path:
    """`<sys.prefix>/nltk_data`: inside the virtual environment, one of NLTK's own search paths."""
    return Path(sys.prefix) / "nltk_data"


def punkt_dir(root: str | os.PathLike) -> Path:
    return Path(root) / "tokenizers" / "punkt_tab" / "english"


def ensure_punkt() -> Path:
    """Set NLTK_DATA to the venv's nltk_data when unset; return the English punkt_tab directory.

    Must run before `lm_eval.tasks.ifeval` is imported. Raises PunktMissingError naming the
    setup command when no search path holds a complete, non-empty English model.
    """
    if not os.environ.get("NLTK_DATA"):
        os.environ["NLTK_DATA"] = str(default_nltk_data())
    roots = [Path(p) for p in os.environ["NLTK_DATA"].split(os.pathsep) if p]
    import nltk

    for root in roots:
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
    for root in roots:
        directory = punkt_dir(root)
        if all((directory / name).is_file() and (directory / name).stat().st_size > 0 for name in PUNKT_FILES):
            return directory
    searched = ", ".join(str(punkt_dir(r)) for r in roots)
    raise PunktMissingError(
        f"NLTK's English punkt_tab model is missing or incomplete (searched {searched}; needs "
        f"{', '.join(PUNKT_FILES)}). IFEval's sentence and word counting needs it and downloads are "
        f"not allowed here. Install it once with: {SETUP_COMMAND}"
    )
