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
        models=[model_dir(run) for run in RUNS if not RUNS[run].get("rejected")],
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


rule audit:
    input:
        [f"{AUDIT}/{graph}.svg" for graph in ("rulegraph", "dag")],
        rules.lineage_table.output,
        data_targets(),
        [f"{OUT}/eval_table.{ext}" for ext in ("tsv", "md", "png")],
