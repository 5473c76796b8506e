"""The Stage-1 checkpoint: given by path at full scale; at embedded scale a stand-in built here
(a tokenizer trained on the shipped text -> a random-init tiny Nemotron-H -> a short SFT on the
sample general mix, so later stages start from a model that has learned something)."""

TRAIN_CODE = [
    "workflow/scripts/train_sft.py",
    "workflow/scripts/train_dpo.py",
    *sorted(str(p) for p in Path("workflow/scripts/lineage").glob("*.py")),
    *sorted(str(p) for p in Path("workflow/scripts/lineage/training").glob("*.py")),
]


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
        "{PYTHON} {input.code} {params.corpus} --vocab-size {params.vocab} --bundle {input.bundle}"
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
        "{PYTHON} {input.code} --family {params.family} --size {params.size} --tokenizer {input.tokenizer}"
        " --seed {params.seed} --name base --out {output} > {log} 2>&1"


def standin_recipe():
    """The stand-in's SFT recipe: the scale's batch and length, its own lr and step count."""
    train, sft = SCALE_CFG["train"], SCALE_CFG["stage1"].get("standin_sft", {})
    return {
        "lr": sft.get("lr"),
        "schedule": sft.get("schedule"),
        "steps": sft.get("steps"),
        "warmup_steps": sft.get("warmup_steps", 0),
        "seed": RECIPE["seed"],
        "weight_decay": RECIPE["optimizer"]["weight_decay"],
        "adam_betas": ",".join(str(b) for b in RECIPE["optimizer"]["betas"]),
        "grad_clip": RECIPE["optimizer"]["grad_clip"],
        "global_batch_rows": train["global_batch_rows"],
        "micro_batch_rows": train["micro_batch_rows"],
        "max_length": train["max_length"],
        "precision": train["precision"],
        "save_every": train["save_every"],
    }


rule train_standin:
    input:
        init=rules.init_model.output,
        data=SCALE_CFG["general_mix"]["sources"],
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
        "{params.launch} workflow/scripts/train_sft.py --run stage1 --init {input.init} {params.data}"
        " {params.recipe} --state-dir {params.state_dir} --metrics {params.metrics}"
        " --out {output.model} > {log} 2>&1"
