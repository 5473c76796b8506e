"""Evaluation: the benchmark parts (one module each in lineage/evaluation/benchmarks) for every run, each run's
column of the card's table, and the tables.

One rule evaluates. `eval.group_by: run` gives one job per run (the model verified and loaded
once for all its parts: a small model's eval time on a laptop is mostly that), `part` one job per
benchmark part (parallel GPU jobs on a cluster)."""

EVAL_JOB = "{run}" if L.eval.group_by == "run" else "{run}/{part}"
EVAL_OUT = [
    f"{P.eval}/{{run}}/{name}"
    for name in (PART_NAMES if L.eval.group_by == "run" else ["{part}"])
]


rule evaluate:
    input:
        unpack(
            lambda wc: by_content(
                model=L.model_dir(wc.run),
                benchmark_items=sorted(
                    {p.items for p in L.eval.job_parts(getattr(wc, "part", None))}
                ),
            )
        ),
    output:
        **with_sha256(records=[f"{out}.records.jsonl" for out in EVAL_OUT]),
        results=[f"{out}.json" for out in EVAL_OUT],
    log:
        f"{P.logs}/evaluate/{EVAL_JOB}.log",
    benchmark:
        f"{P.bench}/evaluate/{EVAL_JOB}.tsv"
    wildcard_constraints:
        run=one_of(L.in_lineage),
        part=one_of(PART_NAMES),
    conda:
        # on GPUs: + the Mamba-2 kernels (Nemotron-H's fast path and its packed scoring)
        "../envs/eval-gpu.yaml" if L.eval.device == "cuda" else "../envs/eval.yaml"
    resources:
        **resources_of("eval"),
    params:
        code=code("eval_model.py"),
        launch=untracked(eval_launcher()),
        flags=lambda wc: L.eval.flags(L.eval.job_parts(getattr(wc, "part", None))),
        out_dir=lambda wc: f"{P.eval}/{wc.run}",
    shell:
        "{params.launch} workflow/scripts/eval_model.py --model {input.model:q} --run {wildcards.run}"
        " {params.flags} --out-dir {params.out_dir:q} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule make_eval_table:
    """The card's table (and the one with the rejected runs as extra columns), with every cell's
    interval and each column's paired differences from its parents and the published model.
    """
    input:
        unpack(
            lambda wc: by_content(
                records=[
                    f.removesuffix(".json") + ".records.jsonl"
                    for f in table_results(wc.table)
                ]
            )
        ),
        results=lambda wc: table_results(wc.table),
        card="resources/card_eval_table.tsv",
    output:
        tsv=f"{P.out}/{{table}}.tsv",
        md=report(f"{P.out}/{{table}}.md", category="Eval table"),
        png=report(f"{P.out}/{{table}}.png", category="Eval table"),
        paired=f"{P.out}/{{table}}.paired.tsv",
    log:
        f"{P.logs}/make_eval_table/{{table}}.log",
    wildcard_constraints:
        table=one_of(list(L.tables)),
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        code=code("make_eval_table.py"),
        results=lambda wc, input: flags("result", input.results),
        columns=lambda wc: ",".join(L.tables[wc.table]),
        references=lambda wc: reference_flags(L.tables[wc.table]),
        scale=L.scale,
    shell:
        "python workflow/scripts/make_eval_table.py {params.results} --columns {params.columns}"
        " {params.references} --scale {params.scale} --card-values {input.card} --out-tsv {output.tsv}"
        " --out-md {output.md} --out-png {output.png} --out-paired {output.paired} > {log} 2>&1"


rule eval_column:
    """One run's column of the table, written beside its benchmark results."""
    input:
        results=lambda wc: L.eval_parts(wc.run),
        card="resources/card_eval_table.tsv",
    output:
        tsv=f"{P.eval}/{{run}}/column.tsv",
        md=f"{P.eval}/{{run}}/column.md",
        png=f"{P.eval}/{{run}}/column.png",
    log:
        f"{P.logs}/eval_column/{{run}}.log",
    wildcard_constraints:
        run=one_of(L.in_lineage),
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        code=code("make_eval_table.py"),
        results=lambda wc, input: flags("result", input.results),
        scale=L.scale,
    shell:
        "python workflow/scripts/make_eval_table.py {params.results} --columns {wildcards.run}"
        " --scale {params.scale} --card-values {input.card} --out-tsv {output.tsv}"
        " --out-md {output.md} --out-png {output.png} > {log} 2>&1"
