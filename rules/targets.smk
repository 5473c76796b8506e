"""Named targets. Each run is a rule of its own (rules/runs.smk); here its `<run>_eval` and the
stage-level groups (`all`, the default target, is in the Snakefile: Snakemake takes a default
target only from the main file)."""


rule data:
    input:
        L.data_targets,


rule eval_table:
    input:
        L.table_files("eval_table"),


rule ablations:
    input:
        L.table_files("eval_table_ablations"),
        f"{P.audit}/loss_curves_ablations.png",


rule audit:
    input:
        rules.html_report.output,
        f"{P.audit}/loss_curves.png",
        [f"{P.audit}/{graph}.svg" for graph in ("rulegraph", "dag")],
        rules.lineage_table.output,
        L.data_targets,
        L.table_files("eval_table"),


for _name in L.in_lineage:

    rule:
        name:
            f"{_name}_eval"
        input:
            L.eval_parts(_name),
            [f"{P.eval}/{_name}/column.{ext}" for ext in ("tsv", "md", "png")],
            L.table_files("eval_table") if _name == L.published else [],
            L.published_files if _name == L.published else [],
        localrule: True
