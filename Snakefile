"""Rebuild the RSIAgent-Ember-Stage2 lineage stage by stage (see README.md and config.yaml).

Targets: `data`, `<run>` (a checkpoint), `<run>_eval` (its benchmarks and table column),
`eval_table` (the card's table), `ablations` (the rejected runs), `audit`, `all`.
"""


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/stage1.smk"
include: "rules/train.smk"
include: "rules/soup.smk"
include: "rules/eval.smk"
include: "rules/audit.smk"
include: "rules/targets.smk"
