"""The Stage-1 chain: Base -> SFT -> DPO round 1 -> three DPO rounds on verifier pairs.

The Stage-1 checkpoint is either given by path (`scales.<scale>.stage1.from: external`) or the
chain's last run, trained by the generic SFT and DPO rules. At embedded scale the Base is built
here: a tokenizer trained on the shipped text, then a random-init tiny Nemotron-H. Each
verifier round samples answers from the previous round's model on training-split prompts,
keeps the pairs a checker can tell apart, and reports its acceptance rates."""


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
        vocab=SCALE_CFG["base"].get("tokenizer_vocab"),
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
        directory(f"{MODELS}/base"),
    log:
        f"{LOGS}/init_model.log",
    conda:
        "../envs/train.yaml"
    resources:
        **job_resources("data"),
    params:
        family=SCALE_CFG["base"].get("family"),
        size=SCALE_CFG["base"].get("model_size"),
        seed=RECIPE["seed"],
    shell:
        "python {input.code} --family {params.family} --size {params.size} --tokenizer {input.tokenizer}"
        " --seed {params.seed} --run base --out {output} > {log} 2>&1"


rule verifier_pairs:
    """One verifier round's DPO pairs, sampled from the previous round's model."""
    input:
        model=lambda wc: model_dir(DATASETS[wc.dataset]["model"]),
        prompts=SCALE_CFG["verifier"]["prompts"],
        eval_items=list(EVAL_CFG["items"].values()),
        script="workflow/scripts/verifier_pairs.py",
        code=[*EVAL_CODE, "workflow/scripts/lineage/verifier.py"],
    output:
        pairs=f"{DATA}/sets/{{dataset}}.jsonl",
        stats=f"{DATA}/verifier/{{dataset}}.json",
    log:
        f"{LOGS}/verifier_pairs/{{dataset}}.log",
    benchmark:
        f"{BENCH}/verifier_pairs/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=one_of(
            [n for n, d in DATASETS.items() if d["kind"] == "verifier_pairs"]
        ),
    conda:
        "../envs/eval.yaml"
    resources:
        **job_resources("eval"),
    params:
        settings=cli_args(
            {k: v for k, v in SCALE_CFG["verifier"].items() if k != "prompts"}
        ),
        device=EVAL_CFG["device"],
        dtype=EVAL_CFG["dtype"],
        seed=RECIPE["seed"],
        eval_items=lambda wc, input: " ".join(
            f"--eval-items {shlex.quote(f)}" for f in input.eval_items
        ),
        round=lambda wc: next(  # the run these pairs train, recorded in every row
            (r for r, spec in RUNS.items() if wc.dataset in spec.get("data", [])),
            wc.dataset,
        ),
    shell:
        "python {input.script} --model {input.model:q} --round {params.round} --prompts {input.prompts:q}"
        " {params.eval_items} {params.settings} --device {params.device} --dtype {params.dtype}"
        " --seed {params.seed} --out {output.pairs} --stats {output.stats} > {log} 2>&1"


rule verifier_audit:
    """Acceptance rates of the lineage's verifier rounds, per prompt type."""
    input:
        stats=[f"{DATA}/verifier/{name}.json" for name in VERIFIER_ROUNDS],
        code="workflow/scripts/verifier_audit.py",
    output:
        json=f"{DATA}/verifier_audit.json",
        md=report(f"{DATA}/verifier_audit.md", category="Data audit"),
    log:
        f"{LOGS}/verifier_audit.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    shell:
        "python {input.code} {input.stats} --out-json {output.json} --out-md {output.md} > {log} 2>&1"
