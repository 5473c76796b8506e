"""Audit: the rule graph and job DAG as SVG, and a lineage table built from every lineage.json."""

AUDIT = f"{OUT}/audit"


rule resolved_config:
    """The config this invocation runs with (overlays and --config applied), for nested calls."""
    output:
        f"{AUDIT}/config.resolved.yaml",
    log:
        f"{LOGS}/resolved_config.log",
    localrule: True
    params:
        config=lambda wc: json.dumps(config, sort_keys=True),
    run:
        import yaml

        Path(output[0]).write_text(
            yaml.safe_dump(json.loads(params.config), sort_keys=False)
        )


rule draw_graph:
    """`snakemake --rulegraph` / `--dag` of the `all` target, rendered by Graphviz."""
    input:
        config=rules.resolved_config.output,
        snakefile=workflow.main_snakefile,
    output:
        svg=report(f"{AUDIT}/{{graph}}.svg", category="Audit"),
    log:
        f"{LOGS}/draw_graph/{{graph}}.log",
    wildcard_constraints:
        graph="rulegraph|dag",
    localrule: True
    conda:
        "../envs/workflow.yaml"
    shell:
        "python -m snakemake --snakefile {input.snakefile:q} --configfile {input.config}"
        " --nolock all --{wildcards.graph} dot 2> {log} | dot -Tsvg > {output.svg}"


rule lineage_table:
    """Parents, recipe, data checksums and timings of every built checkpoint, from lineage.json."""
    input:
        models=list(dict.fromkeys(model_dir(run) for run in LINEAGE_RUNS)),
        code="workflow/scripts/lineage_table.py",
    output:
        tsv=f"{AUDIT}/lineage.tsv",
        html=report(f"{AUDIT}/lineage.html", category="Audit"),
    log:
        f"{LOGS}/lineage_table.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        models=lambda wc, input: " ".join(
            f"--model {shlex.quote(m)}" for m in input.models
        ),
    shell:
        "python {input.code} {params.models} --out-tsv {output.tsv} --out-html {output.html} > {log} 2>&1"


TRAINED_RUNS = [r for r in LINEAGE_RUNS if RUNS[r]["kind"] in ("sft", "dpo")]


rule plot_loss_curves:
    """Loss against step for every published training run (the Stage-1 chain's too, when built)."""
    input:
        models=[model_dir(r) for r in TRAINED_RUNS],
        code="workflow/scripts/plot_loss_curves.py",
    output:
        report(f"{AUDIT}/loss_curves.png", category="Training"),
    log:
        f"{LOGS}/plot_loss_curves.log",
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        metrics=" ".join(f"--metrics {OUT}/metrics/{r}.jsonl" for r in TRAINED_RUNS),
    shell:
        "python {input.code} {params.metrics} --out {output} > {log} 2>&1"


rule html_report:
    """Snakemake's self-contained HTML report: eval table, loss curves, data audit, lineage, DAG."""
    input:
        config=rules.resolved_config.output,
        snakefile=workflow.main_snakefile,
        parts=[
            f"{OUT}/eval_table.png",
            f"{OUT}/eval_table.md",
            f"{AUDIT}/loss_curves.png",
            f"{AUDIT}/lineage.html",
            f"{AUDIT}/rulegraph.svg",
            f"{DATA}/audit.html",
            *([f"{DATA}/verifier_audit.md"] if VERIFIER_ROUNDS else []),
        ],
    output:
        f"{AUDIT}/report.html",
    log:
        f"{LOGS}/html_report.log",
    localrule: True
    conda:
        "../envs/workflow.yaml"
    shell:
        "python -m snakemake --snakefile {input.snakefile:q} --configfile {input.config} --nolock"
        " --report {output} eval_table_report_parts > {log} 2>&1"


rule eval_table_report_parts:
    """What the HTML report shows (a target for the nested --report call)."""
    input:
        rules.html_report.input.parts,


rule audit:
    input:
        rules.html_report.output,
        rules.plot_loss_curves.output,
        [f"{AUDIT}/{graph}.svg" for graph in ("rulegraph", "dag")],
        rules.lineage_table.output,
        data_targets(),
        [f"{OUT}/eval_table.{ext}" for ext in ("tsv", "md", "png")],
