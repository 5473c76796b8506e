"""The published model's card (README.md of its Hub repository), made from the lineage and its results.

Front matter in huggingface_hub's ModelCardData: `base_model` (the card's Base, where it is a Hub
id), the Hub data sets the lineage trained on, the license, and a `model-index` with one result
per benchmark part of the published run. The body: what the model is, how to use it (the system
prompt exactly as trained), the lineage run by run with its recipe, and the eval table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from huggingface_hub import EvalResult, ModelCardData

from lineage.evaluation.benchmarks import BENCHMARKS


def eval_results(
    results: Sequence[Mapping[str, Any]], items: Mapping[str, str] | None = None, full_scale: bool = False
) -> list[EvalResult]:
    """One model-index entry per benchmark part, in the registry's order. The data set is the Hub's only at full
    scale for the public sets, the user's own item file for the others; at the other scales it is "sample" (the
    shipped sample items, named with their file in the entry's name), never a local path posing as a data set."""
    order, items = list(BENCHMARKS), items or {}
    out = []
    for result in sorted(results, key=lambda r: (order.index(r["benchmark"]), r.get("part") or "")):
        entry = BENCHMARKS[result["benchmark"]].model_index
        name, metric, hub_id = entry.name, entry.metric, entry.hub_dataset
        source = items.get(result["benchmark"], result["benchmark"])
        dataset = (hub_id or source) if full_scale else "sample"
        part = result.get("part")
        label = f"{name} part {part}" if part and len(BENCHMARKS[result["benchmark"]].parts) > 1 else name
        if not full_scale:
            label += (
                f" (sample items: {items[result['benchmark']]})" if result["benchmark"] in items else " (sample items)"
            )
        out.append(
            EvalResult(
                task_type="text-generation",
                dataset_type=dataset,
                dataset_name=label,
                dataset_split=f"part {part} ({result.get('n')} items)" if part else None,
                metric_type=metric,
                metric_value=round(float(result["score"]), 4),
            )
        )
    return out


def card_data(meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ModelCardData:
    license_ = meta.get("license") or {}
    return ModelCardData(
        model_name=meta["name"],
        base_model=meta.get("base_model"),
        datasets=list(meta.get("datasets") or []) or None,
        license=license_.get("id"),
        license_name=license_.get("name"),
        license_link=license_.get("link"),
        library_name="transformers",
        pipeline_tag="text-generation",
        language=["en"],
        tags=["chat", "sft", "model-soup", "rsi-arena"],
        eval_results=eval_results(results, meta.get("items"), meta.get("scale") == "full") or None,
    )


def lineage_lines(lineage: Sequence[Mapping[str, Any]]) -> list[str]:
    """A Markdown table of the runs that led to the published model, each with its recipe."""
    lines = ["| run | kind | from | data | recipe |", "|---|---|---|---|---|"]
    for run in lineage:
        recipe = run.get("recipe") or {}
        if run["kind"] == "soup":
            weights = ", ".join(f"{w:g}" for w in recipe.get("weights", []))
            text = f"{recipe['method']} average, weights {weights}"
        elif recipe:
            text = (
                f"lr {recipe['lr']:g} {recipe['schedule']}, {recipe['steps']} steps, batch "
                f"{recipe['global_batch_rows']} x {recipe['max_length']} tokens"
            )
            if "beta" in recipe:
                text += f", beta {recipe['beta']:g}"
        else:
            text = run.get("note", "")
        lines.append(
            f"| {run['run']} | {run['kind']} | {', '.join(run.get('parents', [])) or '—'} | "
            f"{', '.join(run.get('data', [])) or '—'} | {text} |"
        )
    return lines


def card_text(
    meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]], eval_table: str, system_prompt: str
) -> str:
    """README.md: YAML front matter, then the body."""
    body = [
        f"# {meta['name']}",
        "",
        meta.get("summary", ""),
        "",
        "## Use",
        "",
        "The chat template ships with the tokenizer; the system prompt is `system_prompt.txt`, exactly as trained:",
        "",
        "```python",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "from transformers.utils import cached_file",
        "",
        f'path = "{meta.get("repo_id") or "."}"  # a Hub repo id or a local folder',
        "tok = AutoTokenizer.from_pretrained(path)",
        'model = AutoModelForCausalLM.from_pretrained(path, dtype="bfloat16")',
        'system = open(cached_file(path, "system_prompt.txt"), encoding="utf-8").read()',
        'msgs = [{"role": "system", "content": system}, {"role": "user", "content": "Hello!"}]',
        'inputs = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)',
        "out = model.generate(**inputs, max_new_tokens=256)",
        "```",
        "",
        "```text",
        system_prompt,
        "```",
        "",
        "## Lineage",
        "",
        f"Rebuilt by the ember-lineage workflow at scale `{meta.get('scale', '?')}`; each run's full recipe, "
        "parents and file checksums are in `lineage.json`.",
        "",
        *lineage_lines(meta.get("lineage", [])),
        "",
        "## Evaluation",
        "",
        eval_table.strip(),
        "",
    ]
    if meta.get("license"):
        license_ = meta["license"]
        body += [
            "## License",
            "",
            f"{license_.get('name', license_.get('id'))}: {license_.get('link', '')}".strip(),
            "",
        ]
    return f"---\n{card_data(meta, results).to_yaml()}\n---\n\n" + "\n".join(body)
