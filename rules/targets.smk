"""Named targets generated from the runs of config.yaml, plus the stage-level groups."""


rule all:
    default_target: True
    input:
        f"{OUT}/eval_table.tsv",
        f"{OUT}/eval_table_ablations.tsv",
        data_targets(),
        f"{OUT}/audit/lineage.html",
        [f"{DATA}/verifier_audit.md"] if VERIFIER_ROUNDS else [],


rule data:
    input:
        data_targets(),


rule eval_table:
    input:
        [f"{OUT}/eval_table.{ext}" for ext in ("tsv", "md", "png")],


rule ablations:
    input:
        [f"{OUT}/eval_table_ablations.{ext}" for ext in ("tsv", "md", "png")],


for _run in RUNS:

    rule:
        name:
            _run
        input:
            model_dir(_run),
        localrule: True

    rule:
        name:
            f"{_run}_eval"
        input:
            eval_files(_run),
            [f"{EVAL}/{_run}/column.{ext}" for ext in ("tsv", "md", "png")],
            (
                [f"{OUT}/eval_table.{ext}" for ext in ("tsv", "md", "png")]
                if _run == config["eval_table"]["published"]
                else []
            ),
        localrule: True
