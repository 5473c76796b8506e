"""The Stage-1 checkpoint: given by path at full scale; at embedded scale a stand-in built here
(a tokenizer trained on the shipped text -> a random-init tiny Nemotron-H -> a short SFT on the
sample general mix, so later stages start from a model that has learned something)."""


rule build_tokenizer:
    input:
        corpus=[SCALE_CFG["export"]["path"], *SCALE_CFG["general_mix"]["sources"]],
        bundle="resources/bundle",
        code="workflow/scripts/build_tokenizer.py",
    output:
        directory(f"{OUT}/stage1/tokenizer"),
    log:
        f"{LOGS}/build_tokenizer.log",
    conda:
        "../envs/data.yaml"
    resources:
        **job_resources("data"),
    params:
        vocab=SCALE_CFG["stage1"].get("tokenizer_vocab"),
        corpus=lambda wc, input: " ".join(
            f"--corpus {shlex.quote(c)}" for c in input.corpus
        ),
    shell:
        "python {input.code} {params.corpus} --vocab-size {params.vocab} --bundle {input.bundle}"
        " --out {output} > {log} 2>&1"


rule init_model:
    input:
        tokenizer=rules.build_tokenizer.output,
        code="workflow/scripts/init_model.py",
    output:
        directory(f"{OUT}/stage1/base"),
    log:
        f"{LOGS}/init_model.log",
    conda:
        "../envs/train.yaml"
    resources:
        **job_resources("data"),
    params:
        family=SCALE_CFG["stage1"].get("family"),
        size=SCALE_CFG["stage1"].get("model_size"),
        seed=RECIPE["seed"],
    shell:
        "python {input.code} --family {params.family} --size {params.size} --tokenizer {input.tokenizer}"
        " --seed {params.seed} --run base --out {output} > {log} 2>&1"


rule train_standin:
    input:
        init=rules.init_model.output,
        data=SCALE_CFG["general_mix"]["sources"],
        script="workflow/scripts/train_sft.py",
        code=TRAIN_CODE,
    output:
        model=directory(f"{MODELS}/stage1"),
    log:
        f"{LOGS}/train_sft/stage1.log",
    benchmark:
        f"{BENCH}/train_sft/stage1.tsv"
    conda:
        "../envs/train.yaml"
    threads: SCALE_CFG["resources"]["train"]["cpus"]
    resources:
        **job_resources("train"),
    params:
        recipe=cli_args(standin_recipe()) if STAGE1_BUILT else "",
        data=lambda wc, input: " ".join(f"--data {shlex.quote(d)}" for d in input.data),
        state_dir=f"{STATE}/stage1",
        metrics=f"{OUT}/metrics/stage1.jsonl",
        launch=launcher("stage1"),
    shell:
        "{params.launch} {input.script} --run stage1 --init {input.init} {params.data}"
        " {params.recipe} --state-dir {params.state_dir} --metrics {params.metrics}"
        " --out {output.model} > {log} 2>&1"
