"""Audit: the rule graph and job DAG as SVG, the lineage table from every lineage.json, loss
curves, and Snakemake's HTML report of them. The pictures are drawn by Snakemake itself, run
again on the config this invocation uses (overlays and --config included)."""

PUBLISHED_MODELS = list(dict.fromkeys(L.model_dir(run) for run in L.published_runs))
PUBLISHED_TRAINED = [r for r in L.published_runs if L.runs[r].kind in ("sft", "dpo")]
REPORT_PARTS = [
    f"{P.out}/eval_table.png",
    f"{P.out}/eval_table.md",
    f"{P.audit}/loss_curves.png",
    f"{P.audit}/lineage.html",
    f"{P.audit}/rulegraph.svg",
    f"{P.data}/audit.html",
    *([f"{P.data}/verifier_audit.md"] if L.verifier_rounds else []),
]


rule report_parts:
    """What the HTML report shows (the target of the nested --report call)."""
    input:
        REPORT_PARTS,


rule resolved_config:
    """The config this invocation runs with, for the nested Snakemake calls below."""
    output:
        f"{P.audit}/config.resolved.yaml",
    log:
        f"{P.logs}/resolved_config.log",
    localrule: True
    params:
        config=canonical(config),
    run:
        import json
        import yaml

        Path(output[0]).write_text(yaml.safe_dump(json.loads(params.config)))


rule draw_graph:
    """`snakemake --rulegraph` / `--dag` of the `all` target: the Graphviz source (solid jobs
    would run, dashed ones are up to date) and its SVG."""
    input:
        config=rules.resolved_config.output,
        snakefile=workflow.main_snakefile,
    output:
        dot=f"{P.audit}/{{graph}}.dot",
        svg=report(f"{P.audit}/{{graph}}.svg", category="Audit"),
    log:
        f"{P.logs}/draw_graph/{{graph}}.log",
    wildcard_constraints:
        graph="rulegraph|dag",
    localrule: True
    conda:
        "../envs/workflow.yaml"
    shell:
        "python -m snakemake --snakefile {input.snakefile:q} --configfile {input.config} --nolock"
        " all --{wildcards.graph} dot > {output.dot} 2> {log} && dot -Tsvg {output.dot} > {output.svg}"


rule lineage_table:
    """Parents, recipe, data checksums and timings of every built checkpoint, from lineage.json."""
    input:
        **by_content(models=PUBLISHED_MODELS),
    output:
        tsv=f"{P.audit}/lineage.tsv",
        html=report(f"{P.audit}/lineage.html", category="Audit"),
    log:
        f"{P.logs}/lineage_table.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        code=code("lineage_table.py"),
        models=flags("model", PUBLISHED_MODELS),
    shell:
        "python workflow/scripts/lineage_table.py {params.models} --out-tsv {output.tsv}"
        " --out-html {output.html} > {log} 2>&1"


LOSS_PLOTS = {  # the audit's (published runs), and the ablations' (every training run, rejected dashed)
    "loss_curves": PUBLISHED_TRAINED,
    "loss_curves_ablations": L.runs_of("sft", "dpo"),
}


rule plot_loss_curves:
    """Loss against step, one panel per objective (SFT and DPO losses live on different scales)."""
    input:
        unpack(
            lambda wc: by_content(models=[L.model_dir(r) for r in LOSS_PLOTS[wc.plot]])
        ),
    output:
        report(f"{P.audit}/{{plot}}.png", category="Training"),
    log:
        f"{P.logs}/plot_loss_curves/{{plot}}.log",
    wildcard_constraints:
        plot=one_of(list(LOSS_PLOTS)),
    localrule: True
    conda:
        "../envs/eval.yaml"
    params:
        code=code("plot_loss_curves.py"),
        metrics=lambda wc: " ".join(
            f"--{L.runs[r].kind} {P.metrics}/{r}.jsonl" for r in LOSS_PLOTS[wc.plot]
        ),
        rejected=lambda wc: flags(
            "rejected", [r for r in LOSS_PLOTS[wc.plot] if L.runs[r].rejected]
        ),
    shell:
        "python workflow/scripts/plot_loss_curves.py {params.metrics} {params.rejected} --out {output} > {log} 2>&1"


rule html_report:
    """Snakemake's self-contained HTML report: eval table, loss curves, data audit, lineage, DAG."""
    input:
        config=rules.resolved_config.output,
        snakefile=workflow.main_snakefile,
        parts=REPORT_PARTS,
    output:
        f"{P.audit}/report.html",
    log:
        f"{P.logs}/html_report.log",
    localrule: True
    conda:
        "../envs/workflow.yaml"
    shell:
        "python -m snakemake --snakefile {input.snakefile:q} --configfile {input.config} --nolock"
        " --report {output} report_parts > {log} 2>&1"
