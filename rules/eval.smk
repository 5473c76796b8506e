"""Evaluation: per run one job for every benchmark part (or one per part), a column per run, the table."""

if EVAL_CFG["one_job_per_run"]:

    rule eval_run:
        """Every benchmark part of one run in one job: the model is verified and loaded once."""
        input:
            model=lambda wc: model_dir(wc.run),
            benchmark_items=list(EVAL_CFG["items"].values()),
            pairs=rules.battle_pairs.output.holdout_pairs,
            script="workflow/scripts/eval_run.py",
            code=[*EVAL_CODE, "workflow/scripts/eval_benchmark.py"],
        output:
            results=[f"{EVAL}/{{run}}/{name}.json" for name in EVAL_PART_NAMES],
            records=[f"{EVAL}/{{run}}/{name}.records.jsonl" for name in EVAL_PART_NAMES],
        log:
            f"{LOGS}/eval_run/{{run}}.log",
        benchmark:
            f"{BENCH}/eval_run/{{run}}.tsv"
        conda:
            "../envs/eval.yaml"
        resources:
            **job_resources("eval"),
        params:
            parts=lambda wc, input: eval_run_flags(input.pairs),
            settings=EVAL_SETTINGS,
            max_new_tokens=EVAL_CFG["max_new_tokens"],
            out_dir=lambda wc: f"{EVAL}/{wc.run}",
        shell:
            "python {input.script} --model {input.model:q} --run {wildcards.run} {params.parts}"
            " --out-dir {params.out_dir:q} -- {params.settings} --max-new-tokens {params.max_new_tokens}"
            " > {log} 2>&1"

else:

    for _bench in ("mmlu", "gsm8k", "ifeval", "degen"):

        rule:
            name:
                f"eval_{_bench}"
            input:
                model=lambda wc: model_dir(wc.run),
                benchmark_items=EVAL_CFG["items"][_bench],
                script=f"workflow/scripts/eval_{_bench}.py",
                code=EVAL_CODE,
            output:
                result=f"{EVAL}/{{run}}/{_bench}_{{part}}.json",
                records=f"{EVAL}/{{run}}/{_bench}_{{part}}.records.jsonl",
            log:
                f"{LOGS}/eval_{_bench}/{{run}}_{{part}}.log",
            benchmark:
                f"{BENCH}/eval_{_bench}/{{run}}_{{part}}.tsv"
            conda:
                "../envs/eval.yaml"
            resources:
                **job_resources("eval"),
            params:
                common=eval_common,
                sizes=",".join(str(n) for n in EVAL_CFG["sizes"][_bench]),
                max_new_tokens=EVAL_CFG["max_new_tokens"],
            shell:
                "python {input.script} {params.common} --items {input.benchmark_items:q} --sizes {params.sizes}"
                " --part {wildcards.part} --max-new-tokens {params.max_new_tokens}"
                " --out-json {output.result} --out-records {output.records} > {log} 2>&1"

    rule eval_margin:
        input:
            model=lambda wc: model_dir(wc.run),
            pairs=rules.battle_pairs.output.holdout_pairs,
            script="workflow/scripts/eval_margin.py",
            code=EVAL_CODE,
        output:
            result=f"{EVAL}/{{run}}/margin_A.json",
            records=f"{EVAL}/{{run}}/margin_A.records.jsonl",
        log:
            f"{LOGS}/eval_margin/{{run}}.log",
        benchmark:
            f"{BENCH}/eval_margin/{{run}}.tsv"
        conda:
            "../envs/eval.yaml"
        resources:
            **job_resources("eval"),
        params:
            common=eval_common,
        shell:
            "python {input.script} {params.common} --items {input.pairs}"
            " --out-json {output.result} --out-records {output.records} > {log} 2>&1"


TABLES = {
    "eval_table": TABLE_RUNS,
    "eval_table_ablations": TABLE_RUNS + REJECTED_RUNS,
}


rule make_eval_table:
    """The card's table (and the one with the rejected runs as extra columns)."""
    input:
        results=lambda wc: [f for run in TABLES[wc.table] for f in eval_files(run)],
        card="resources/card_eval_table.tsv",
        code="workflow/scripts/make_eval_table.py",
    output:
        tsv=f"{OUT}/{{table}}.tsv",
        md=report(f"{OUT}/{{table}}.md", category="Eval table"),
        png=report(f"{OUT}/{{table}}.png", category="Eval table"),
    log:
        f"{LOGS}/make_eval_table/{{table}}.log",
    wildcard_constraints:
        table=one_of(list(TABLES)),
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        results=table_flags,
        columns=lambda wc: ",".join(TABLES[wc.table]),
        scale=SCALE,
    shell:
        "python {input.code} {params.results} --columns {params.columns} --scale {params.scale}"
        " --card-values {input.card} --out-tsv {output.tsv} --out-md {output.md}"
        " --out-png {output.png} > {log} 2>&1"


rule eval_column:
    """One run's column of the table, written beside its benchmark results."""
    input:
        results=lambda wc: eval_files(wc.run),
        card="resources/card_eval_table.tsv",
        code="workflow/scripts/make_eval_table.py",
    output:
        tsv=f"{EVAL}/{{run}}/column.tsv",
        md=f"{EVAL}/{{run}}/column.md",
        png=f"{EVAL}/{{run}}/column.png",
    log:
        f"{LOGS}/eval_column/{{run}}.log",
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        results=table_flags,
        scale=SCALE,
    shell:
        "python {input.code} {params.results} --columns {wildcards.run} --scale {params.scale}"
        " --card-values {input.card} --out-tsv {output.tsv} --out-md {output.md}"
        " --out-png {output.png} > {log} 2>&1"
