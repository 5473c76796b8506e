"""What the README and docs/ tell a user to run exists: the files they name, the Snakemake targets they build, the
flags they pass to the project's scripts. benchmarks/RESULTS.md is a dated record of what ran then, not read here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("requirements*.txt"))]
PATH = re.compile(r"(?<![\w./-])((?:workflow/scripts|tools|benchmarks|tests|envs|profiles|rules|resources)/[\w./-]*\w)")
# files a guide has its reader write (docs/add-a-benchmark.md's new item file)
MADE_BY_THE_READER = {"resources/sample/eval/yesno.jsonl"}
# snakemake flags whose next word is a value, not a target (those naming rules are checked as targets)
VALUED = {"--cores", "-c", "--jobs", "-j", "--profile", "--config", "--configfile", "--report", "--retries"}
VALUED |= {"--software-deployment-method", "--sdm", "--slurm-partition", "--set-resources", "--directory", "-d"}
NAMES_A_RULE = {"--forcerun", "-R", "--until", "--allowed-rules"}


def targets() -> set[str]:
    rules = {
        name
        for path in [REPO / "Snakefile", *(REPO / "rules").glob("*.smk")]
        for name in re.findall(r"^rule\s+(\w+)\s*:", path.read_text(), flags=re.M)
    }
    runs = yaml.safe_load((REPO / "config.yaml").read_text())["runs"]
    return rules | set(runs) | {f"{run}_eval" for run in runs} | {f"{run}_reference" for run in runs}


def commands(tool: str):
    """(doc, line, the words after `tool`) for every mention of `tool ...` in a doc's code."""
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            for words in re.findall(rf"(?:^|[`$(]|\s)(?:\S*/)?{re.escape(tool)} ([^`#|]*)", line):
                yield doc.name, line.strip(), words.split()


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_file_a_doc_names_exists(doc):
    named = {m.group(1) for m in PATH.finditer(doc.read_text())}
    missing = sorted(p for p in named - MADE_BY_THE_READER if "*" not in p and not (REPO / p).exists())
    assert not missing, f"{doc.name} names files that do not exist: {missing}"


def test_every_snakemake_target_a_doc_gives_is_a_rule_or_a_run():
    known, wrong, seen = targets(), [], 0
    for doc, line, words in commands("snakemake"):
        index = 0
        while index < len(words):
            word = words[index]
            value = words[index + 1] if index + 1 < len(words) else ""
            if word in VALUED | NAMES_A_RULE:
                if word in NAMES_A_RULE and re.fullmatch(r"\w+", value) and value not in known:
                    wrong.append(f"{doc}: {word} {value} ({line})")
                index += 2
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", word):
                seen += 1
                if word not in known | {"dot"}:  # `--dag dot`: the format
                    wrong.append(f"{doc}: target {word} ({line})")
            index += 1
    assert seen > 10, "the docs' snakemake commands were not found"
    assert not wrong, "\n".join(wrong)


def test_every_flag_a_doc_passes_to_a_script_is_one_it_takes():
    """`tools/plan.py --lineage ...` in prose or `python workflow/scripts/x.py --flag` in a block: each --flag is one
    the script's own source declares (its argparse, or the parser it wraps)."""
    wrong, seen = [], 0
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            for script, args in re.findall(r"((?:workflow/scripts|tools|benchmarks)/\w+\.py)([^`|#]*)", line):
                source = (REPO / script).read_text() if (REPO / script).is_file() else ""
                for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", args):
                    seen += 1
                    if f'"{flag}"' not in source and flag != "--help":
                        wrong.append(f"{doc.name}: {script} takes no {flag} ({line.strip()})")
    assert seen > 10, "the docs' script commands were not found"
    assert not wrong, "\n".join(wrong)
