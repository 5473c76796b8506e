"""Rebuild the RSIAgent-Ember-Stage2 lineage stage by stage (see README.md and config.yaml).

Targets: `data`, `<run>` (a checkpoint: every run is a rule of its own), `<run>_eval` (its
benchmarks and table column), `eval_table` (the card's table), `ablations` (the rejected runs),
`publish` (the published model as a Hub repository), `audit`, `all`.
"""


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/stage1.smk"
include: "rules/runs.smk"
include: "rules/eval.smk"
include: "rules/audit.smk"
include: "rules/publish.smk"
include: "rules/targets.smk"


rule all:
    """Everything (the default target): the data stages, the card's table and its audit, the
    ablations, the published repository, and the verifier audit when the Stage-1 chain is built.
    """
    default_target: True
    input:
        rules.audit.input,
        rules.ablations.input,
        L.published_files,
        [f"{P.data}/verifier_audit.md"] if L.verifier_rounds else [],
