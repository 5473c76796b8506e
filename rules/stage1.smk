"""The Stage-1 chain's own steps: the embedded Base's tokenizer, and the verifier rounds.

The chain's runs themselves (base, stage1_sft, dpo1, ...) are rules of rules/runs.smk like
every other run. Each verifier round samples answers from the previous round's model on
training-split prompts, keeps the pairs a checker can tell apart, and reports its acceptance
rates."""

BUNDLE = [str(p) for p in sorted(Path("resources/bundle").iterdir())]


rule build_tokenizer:
    input:
        # the export as validated, not as read
        **by_content(corpus=[rules.read_battles.output.battles, *L.general_mix.sources]),
        bundle=BUNDLE,
    output:
        **with_sha256(tokenizer=directory(f"{P.out}/stage1/tokenizer")),
    log:
        f"{P.logs}/build_tokenizer.log",
    conda:
        "../envs/data.yaml"
    resources:
        **resources_of("data"),
    params:
        code=code("build_tokenizer.py"),
        corpus=flags(
            "corpus", [rules.read_battles.output.battles, *L.general_mix.sources]
        ),
        vocab=L.base.tokenizer_vocab,
        min_frequency=L.base.tokenizer_min_frequency,
    shell:
        "python workflow/scripts/build_tokenizer.py {params.corpus} --vocab-size {params.vocab}"
        " --min-frequency {params.min_frequency} --bundle resources/bundle --out {output.tokenizer} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule verifier_pairs:
    """One verifier round's DPO pairs, sampled from the previous round's model."""
    input:
        unpack(lambda wc: by_content(model=L.model_dir(L.datasets[wc.dataset].sampler))),
        # no prompt may repeat an item of the benchmarks' item files: refused at start-up, before any job
        # (check_verifier_prompts, lineage/workflow/checks.py), so those files are no input here and a
        # benchmark pointed at another file reruns its evaluations and tables, not the verifier rounds
        **by_content(prompts=L.verifier.prompts),
    output:
        **with_sha256(pairs=f"{P.data}/sets/{{dataset}}.jsonl"),
        stats=f"{P.data}/verifier/{{dataset}}.json",
    log:
        f"{P.logs}/verifier_pairs/{{dataset}}.log",
    benchmark:
        f"{P.bench}/verifier_pairs/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=one_of(L.verifier_rounds),
    conda:
        # on GPUs: + the Mamba-2 kernels, as the training and eval jobs have them
        "../envs/eval-gpu.yaml" if L.eval.device == "cuda" else "../envs/eval.yaml"
    resources:
        **resources_of("eval"),
    params:
        code=code("verifier_pairs.py"),
        launch=untracked(eval_launcher()),
        round=lambda wc: L.datasets[wc.dataset].trains,
        samples=L.verifier.samples,
        temperature=L.verifier.temperature,
        top_p=L.verifier.top_p,
        max_new_tokens=L.verifier.max_new_tokens,
        max_pairs=L.verifier.max_pairs_per_prompt,
        batch_size=L.verifier.batch_size,
        cache=L.eval.sampling_cache,
        device=L.eval.device,
        dtype=L.eval.dtype,
        seed=L.shared.seed,
    shell:
        "{params.launch} workflow/scripts/verifier_pairs.py --model {input.model:q} --round {params.round}"
        " --prompts {input.prompts:q} --samples {params.samples}"
        " --temperature {params.temperature} --top-p {params.top_p} --max-new-tokens {params.max_new_tokens}"
        " --max-pairs-per-prompt {params.max_pairs} --batch-size {params.batch_size} --cache {params.cache}"
        " --device {params.device} --dtype {params.dtype} --seed {params.seed}"
        " --out {output.pairs} --stats {output.stats} > {log} 2>&1"
        " && python workflow/scripts/digest_artifact.py {output:q} >> {log} 2>&1"


rule verifier_audit:
    """Acceptance rates of the lineage's verifier rounds, per prompt type."""
    input:
        stats=[f"{P.data}/verifier/{name}.json" for name in L.verifier_rounds],
    output:
        json=f"{P.data}/verifier_audit.json",
        md=report(f"{P.data}/verifier_audit.md", category="Data audit"),
    log:
        f"{P.logs}/verifier_audit.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        code=code("verifier_audit.py"),
    shell:
        "python workflow/scripts/verifier_audit.py {input.stats} --out-json {output.json}"
        " --out-md {output.md} > {log} 2>&1"
