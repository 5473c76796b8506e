"""SFT and DPO runs of the lineage, one generic rule each; the run name is the wildcard.

Every hyperparameter reaches the job through `params`, and the training code is an input, so a
changed recipe or trainer reruns exactly that run and what descends from it. Resumable state
lives in state/<scale>/<run>, outside the declared output that Snakemake deletes before a rerun.
"""

for _kind, _runs in (("sft", SFT_RUNS), ("dpo", DPO_RUNS)):

    rule:
        name:
            f"train_{_kind}"
        input:
            unpack(train_inputs),
        output:
            model=directory(f"{MODELS}/{{run}}"),
        log:
            f"{LOGS}/train_{_kind}/{{run}}.log",
        benchmark:
            f"{BENCH}/train_{_kind}/{{run}}.tsv"
        wildcard_constraints:
            run=one_of(_runs),
        conda:
            "../envs/train.yaml"
        threads: SCALE_CFG["resources"]["train"]["cpus"]
        resources:
            **job_resources("train"),
        params:
            recipe=lambda wc: cli_args(recipe_of(wc.run)),
            data=data_flags,
            state_dir=lambda wc: f"{STATE}/{wc.run}",
            metrics=lambda wc: f"{OUT}/metrics/{wc.run}.jsonl",
            launch=lambda wc: launcher(wc.run),
        shell:
            "{params.launch} {input.script} --run {wildcards.run} --init {input.init:q} {params.data}"
            " {params.recipe} --state-dir {params.state_dir} --metrics {params.metrics}"
            " --out {output.model} > {log} 2>&1"
