"""Rebuild the RSIAgent-Ember-Stage2 lineage stage by stage (see README.md and config.yaml).

Targets: `data`, `<run>` (a checkpoint: every run is a rule of its own), `<run>_eval` (its
benchmarks and table column), `eval_table` (the card's table), `ablations` (the rejected runs),
`audit`, `all`.
"""


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/stage1.smk"
include: "rules/runs.smk"
include: "rules/eval.smk"
include: "rules/audit.smk"
include: "rules/targets.smk"
